# Cairn in a container: `docker build -t cairn .` then see compose.yaml (or docs/self-hosting.md#docker-and-compose).
# Stage 1 compiles better-sqlite3 and the TypeScript; stage 2 carries only what runs.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 builds from source when its prebuilt binary cannot be fetched
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY plugins ./plugins
COPY schema ./schema
COPY scripts/start.mjs ./scripts/start.mjs
# the web console (served at /) calls the API through the TypeScript client's sources
COPY console ./console
COPY clients/typescript/src ./clients/typescript/src
RUN npm run build && npm run console:build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 CAIRN_DATA_DIR=/data MALLOC_ARENA_MAX=2
WORKDIR /app
# tini runs as PID 1: it forwards SIGTERM to the service and reaps the processes it spawns (ffmpeg, pocketsphinx).
# Local speech to text is optional: `docker build --build-arg WITH_SPEECH=true` adds pocketsphinx and ffmpeg
# (about 300 MB); without them, voice notes need a Whisper-compatible server (CAIRN_STT_BASE_URL) or stay
# untranscribed (docs/self-hosting.md).
ARG WITH_SPEECH=false
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && if [ "$WITH_SPEECH" = "true" ]; then \
    apt-get install -y --no-install-recommends pocketsphinx pocketsphinx-en-us ffmpeg; fi \
  && rm -rf /var/lib/apt/lists/*
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# `npm run backup` / `npm run restore` run the compiled commands through scripts/start.mjs
COPY --from=build /app/scripts/start.mjs ./scripts/start.mjs
COPY --from=build /app/schema/migrations ./schema/migrations
COPY --from=build /app/schema/outbox-migrations ./schema/outbox-migrations
# the service runs as the image's unprivileged `node` user and writes only below /data
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
# liveness: the service listens once its start-up work (migrations, the catch-up after an upgrade) is done, which
# may take minutes on a large database: failures in the start period do not count (the first success ends it)
HEALTHCHECK --interval=30s --timeout=5s --start-period=15m --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/api/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/server.js"]
