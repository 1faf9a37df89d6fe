#!/bin/sh
# Entrypoint of the odlcoe-agent container (DaemonSet, see config/deploy/agent.yaml).
#
# The agent installs the CNI shim into the host's CNI bin dir (cni.binDir) as a launcher that
# runs the shim with the agent's own Node binary: `exec <process.execPath> odlcoe-shim.mjs`.
# The container runtime execs that launcher on the HOST, where the image's /usr/local/bin/node
# does not exist. So, when ODLCOE_HOST_NODE_DIR names a host directory mounted at the same path
# in this container, the image's Node binary is copied there first and the agent runs from that
# copy: its process.execPath is then a path that exists on the host too. The binary is built
# for glibc >= 2.28 (every supported Kubernetes node OS has it).
set -eu

agent=/app/dist/src/agent/main.js
node_bin=/usr/local/bin/node

if [ -n "${ODLCOE_HOST_NODE_DIR:-}" ]; then
  case "$ODLCOE_HOST_NODE_DIR" in
    /*) ;;
    *) echo "odlcoe-agent-entrypoint: ODLCOE_HOST_NODE_DIR must be an absolute path" >&2; exit 2 ;;
  esac
  mkdir -p "$ODLCOE_HOST_NODE_DIR"
  target="$ODLCOE_HOST_NODE_DIR/node"
  # Copy to a temporary name and rename: a shim running the previous binary keeps its inode,
  # and no runtime ever execs a half-written file.
  if ! cmp -s "$node_bin" "$target" 2>/dev/null; then
    cp "$node_bin" "$target.new.$$"
    chmod 0755 "$target.new.$$"
    mv -f "$target.new.$$" "$target"
  fi
  node_bin="$target"
fi

exec "$node_bin" "$agent" "$@"
