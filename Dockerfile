# The server on Node 20 with the embedded database in the /data volume (set DATABASE_URL for Postgres:
# compose.yaml runs it beside one). /data also keeps secrets.key (unless SECRETS_KEY is set) and media.
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
# Healthy once /readyz answers 200 (the database reachable, migrations applied, the webhook worker
# running), on PORT as the container sets it. Node 20 slim has no curl: Node's own fetch asks.
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 8080}/readyz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# No npm in between, and the script execs Node: the server is PID 1 and gets `docker stop`'s SIGTERM
# itself. apps/server/start.sh picks npm start's node flags and environment for the database in use.
CMD ["sh", "apps/server/start.sh", "--built"]
