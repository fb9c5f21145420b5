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
ENV DATA_DIR=/data PORT=8080
VOLUME /data
EXPOSE 8080
# No npm in between, and the script execs Node: the server is PID 1 and gets `docker stop`'s SIGTERM
# itself. apps/server/start.sh picks npm start's node flags and environment for the database in use.
CMD ["sh", "apps/server/start.sh", "--built"]
