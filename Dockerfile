# syntax=docker/dockerfile:1
# Build stage: compile TypeScript with the dev dependencies.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Runtime stage: production dependencies and the compiled code only, as a non-root user.
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
COPY views ./views
COPY public ./public
COPY docs/openapi.yaml ./docs/openapi.yaml
RUN mkdir -p /data && chown node:node /data
USER node
# 3000: the web roles (PORT); 3001: a ROLE=worker container's /healthz and /metrics (WORKER_PORT).
EXPOSE 3000 3001
VOLUME ["/data"]
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD node -e "const e=process.env,p=e.ROLE==='worker'?(e.WORKER_PORT||Number(e.PORT)+1):e.PORT;fetch('http://127.0.0.1:'+p+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/main.js"]
