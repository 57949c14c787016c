# syntax=docker/dockerfile:1
#
# nightshift: one image for every role. The command picks the role:
#   docker run … nightshift:local start /config/policy.yaml   (default: scheduler + worker)
#   docker run … nightshift:local scheduler /config/policy.yaml
#   docker run … nightshift:local worker
#   docker run … nightshift:local sim --host 0.0.0.0 --port 8787
# Environment: docs/engine.md. Compose file: docker-compose.yml.

# Both stages start from node:22-bookworm-slim (Node 22.23.2, Debian 12) pinned by the digest of
# its multi-platform index: a rebuilt or hijacked tag cannot change the image unseen. To update,
# take the tag's current index digest (docker buildx imagetools inspect node:22-bookworm-slim)
# and change both lines.

# --- build: every dependency, then tsc into dist/ ---------------------------------------------
FROM node:22-bookworm-slim@sha256:48e4b67d85f87bd551df43704e24d252f56cc5f8e9718841aace50f19948f0f9 AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` runs the build, and the sources are not here yet.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src/ src/
COPY jobs/ jobs/
RUN npm run build

# --- runtime: production dependencies and the compiled program only ---------------------------
FROM node:22-bookworm-slim@sha256:48e4b67d85f87bd551df43704e24d252f56cc5f8e9718841aace50f19948f0f9 AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/ dist/
COPY bin/ bin/
COPY config/ config/
# `nightshift …` inside the container too (docker compose exec scheduler nightshift history).
RUN ln -s /app/bin/nightshift.js /usr/local/bin/nightshift
USER node

# The ops server (/healthz, /metrics) listens on NIGHTSHIFT_HTTP_HOST:NIGHTSHIFT_HTTP_PORT,
# 127.0.0.1:9464 unless told otherwise. The check runs inside the container, so loopback is
# enough; set NIGHTSHIFT_HTTP_HOST=0.0.0.0 only to scrape /metrics from outside.
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.NIGHTSHIFT_HTTP_PORT || 9464}/healthz`, { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["node", "bin/nightshift.js"]
CMD ["start", "/config/policy.yaml"]
