# The server on Node 20 with the embedded database in the /data volume (set DATABASE_URL for Postgres).
# The server runs as one bundle built here by esbuild (a production dependency), so production
# dependencies suffice.
FROM node:20-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force
COPY . .
RUN npm run build && mkdir /data && chown node:node /data
USER node
ENV DATA_DIR=/data PORT=8080 MALLOC_MMAP_THRESHOLD_=131072
VOLUME /data
EXPOSE 8080
# Exec form, no npm or shell in between: the server is PID 1 and gets `docker stop`'s SIGTERM itself.
# The flags, the bundle and MALLOC_MMAP_THRESHOLD_ are npm start's (README "Memory"); keep them in step with package.json.
CMD ["node", "--optimize-for-size", "--liftoff-only", "dist/server.mjs"]
