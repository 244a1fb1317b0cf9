# Kiln in a container: built in one stage, run in a small one as an unprivileged user.
#   docker build -t kiln .
#   docker run -p 8080:8080 -v kiln-data:/data -e ROOT_DOMAIN=example.com -e BASE_URL=https://example.com kiln
# compose.yaml runs two of them with PostgreSQL, Redis, an S3-compatible store and Caddy.

FROM node:24-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
# pg_dump and pg_restore for `kiln backup` / `kiln restore` on PostgreSQL.
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-client \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json /app/package-lock.json ./
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/bin ./bin
COPY --from=build --chown=root:root /app/src ./src
COPY --from=build --chown=root:root /app/dist ./dist
RUN mkdir /data && chown node:node /data
USER node
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/_/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM stops gracefully (in-flight saves finish, streams are told to reconnect) within 10 s.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "bin/kiln.js"]
CMD ["serve"]
