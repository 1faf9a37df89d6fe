# syntax=docker/dockerfile:1
#
# One image for every odlcoe program:
#   odlcoe-watcher   /usr/local/bin/odlcoe-watcher-entrypoint   (Deployment, config/deploy/watcher.yaml;
#                    node /app/dist/src/watcher/main.js with a heap cap from its memory limit)
#   odlcoe-agent     /usr/local/bin/odlcoe-agent-entrypoint     (DaemonSet, config/deploy/agent.yaml)
#   odlcoe (CNI)     /app/dist/cni/odlcoe.js, installed on each node by the agent (cni.binDir)
#   odlcoe-emulator  node /app/dist/src/emulator/main.js        (development)
#   odlcoe-kubesim   node /app/dist/src/kubesim/main.js         (development)
#
# Build: docker build -t odlcoe:dev .

# Pinned to an exact release; bump deliberately (and the same tag in both stages).
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: package.json's `prepare` hook runs the build, and the sources are not here
# yet; the build runs explicitly below.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY cni ./cni
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
# ovs-vsctl (in openvswitch-switch on bookworm; no daemon is started in the container, the
# agent talks to the host's ovsdb-server through its socket), host-local IPAM
# (/usr/lib/cni/host-local) and the loopback plugin the agent installs into the CNI bin dir
# when the host has none (/usr/lib/cni/loopback), ip, nsenter, and ethtool (TX checksum
# offload of pod interfaces on a userspace datapath, docs/agent.md).
ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      ca-certificates \
      containernetworking-plugins \
      ethtool \
      iproute2 \
      openvswitch-switch \
      util-linux \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# Runtime dependencies only; --ignore-scripts for the same `prepare` hook (tsc is a dev dependency).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
COPY config/image/odlcoe-agent-entrypoint.sh /usr/local/bin/odlcoe-agent-entrypoint
COPY config/image/odlcoe-watcher-entrypoint.sh /usr/local/bin/odlcoe-watcher-entrypoint
# Non-root by default (the `node` user of the base image); the agent's DaemonSet runs it as
# root explicitly, because it configures the host's network.
USER 1000:1000
CMD ["/usr/local/bin/odlcoe-watcher-entrypoint"]
