# syntax=docker/dockerfile:1
#
# Front proxy image: three stages on the Node.js 24 LTS line.
#   build  - every dependency, then `npm run build` (the packages packages/browser and
#            packages/react, tsc, the browser SDK bundle) into dist/ and packages/*/dist/
#   deps   - production dependencies only (`npm ci --omit=dev`; the workspace packages
#            @front-proxy/browser and @front-proxy/react are links to packages/*)
#   final  - dist/, the production node_modules, the browser package's dist/ (the server imports
#            the error-reference registry from it) and the package.json files; runs as the unprivileged `node`
#            user, writes nothing to its own filesystem (works with a read-only root filesystem).
#
# Build:  docker build -t front-proxy:0.1.0 .
# Run:    docker run --rm -p 3000:3000 -e BFF_BASE_URL=... -e STICKER_API_URL=... front-proxy:0.1.0
# See deploy/README.md for the variables and the Kubernetes manifests.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The workspace packages whole: `npm run build` builds them from their sources.
COPY packages ./packages
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/browser/package.json ./packages/browser/
COPY packages/react/package.json ./packages/react/
# package.json has no prepare/postinstall script and no production dependency needs an install
# script, so scripts are skipped: nothing here may need a development dependency.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim AS final
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    WORKERS=1
WORKDIR /app
# Files stay owned by root and read-only for the `node` user that runs the server.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/packages/browser/dist ./packages/browser/dist
COPY package.json ./
COPY packages/browser/package.json ./packages/browser/
COPY packages/react/package.json ./packages/react/
# The base image's `node` user, as numbers: a pod's runAsNonRoot can only be checked against a
# numeric user (deploy/kubernetes/deployment.yaml runs it as 1000:1000 too).
USER 1000:1000
# PORT, HEALTH_PORT and METRICS_PORT as deploy/kubernetes/deployment.yaml sets them (the last two are
# served only when those variables are set).
EXPOSE 3000 8081 9464
# Liveness of the process itself (GET /healthz); an orchestrator uses its own probes instead.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The server runs as `node` itself (PID 1, or under `docker run --init`) with the Node.js options
# of `npm start`: npm would not pass SIGTERM on to it, and the graceful shutdown needs the signal.
ENTRYPOINT ["node", "--max-semi-space-size=8", "dist/server.js"]
