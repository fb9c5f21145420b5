# The server on Node 20 with the embedded database in the /data volume (set DATABASE_URL for Postgres).
# The server runs TypeScript through tsx, a runtime dependency, so production dependencies suffice.
FROM node:20-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY . .
RUN mkdir /data && chown node:node /data
USER node
ENV DATA_DIR=/data PORT=8080
VOLUME /data
EXPOSE 8080
# Exec form, no npm or shell in between: the server is PID 1 and gets `docker stop`'s SIGTERM itself.
# The flags are npm start's (README "Memory"); keep them in step with package.json.
CMD ["node", "--optimize-for-size", "--liftoff-only", "--import", "tsx", "apps/server/node.ts"]
