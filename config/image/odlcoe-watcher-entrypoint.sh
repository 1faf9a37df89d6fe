#!/bin/sh
# Entrypoint of the odlcoe-watcher container (Deployment, see config/deploy/watcher.yaml).
#
# Sizes V8's heap to the container's memory limit. Left alone, V8 sizes its old space from the
# machine's memory, not the container's, and lets a heap that allocates fast (converging a large
# cluster) grow to three times what is live before collecting it whole: the process then
# crosses its memory limit and is OOM-killed, though what it holds fits. With a cap V8 collects
# earlier instead.
#
# ODLCOE_MEMORY_LIMIT_MB (the Deployment sets it from limits.memory through the Downward API)
# minus ODLCOE_HEAP_RESERVE_MB (what the process holds outside the old space: the young
# generation, code, Node's and libraries' native memory; docs/operations.md#memory says how it
# was measured) is the old space's cap, `--max-old-space-size`. A --max-old-space-size already
# in NODE_OPTIONS wins; without ODLCOE_MEMORY_LIMIT_MB nothing is set.
set -eu

watcher=/app/dist/src/watcher/main.js
reserve="${ODLCOE_HEAP_RESERVE_MB:-192}"
# Below this the watcher spends its time collecting garbage (the heap at start-up alone is ~45 MB).
min_heap=96

fail() {
  echo "odlcoe-watcher-entrypoint: $*" >&2
  exit 2
}
is_count() {
  case "$1" in
    '' | *[!0-9]*) return 1 ;;
    *) return 0 ;;
  esac
}

limit="${ODLCOE_MEMORY_LIMIT_MB:-}"
case " ${NODE_OPTIONS:-} " in
  *" --max-old-space-size="* | *" --max_old_space_size="*) limit= ;;
esac
if [ -n "$limit" ]; then
  is_count "$limit" || fail "ODLCOE_MEMORY_LIMIT_MB must be a whole number of MiB, not '$limit'"
  is_count "$reserve" || fail "ODLCOE_HEAP_RESERVE_MB must be a whole number of MiB, not '$reserve'"
  heap=$((limit - reserve))
  [ "$heap" -ge "$min_heap" ] ||
    fail "a memory limit of ${limit} MiB leaves ${heap} MiB of heap after the ${reserve} MiB reserve; give the container at least $((min_heap + reserve)) MiB"
  NODE_OPTIONS="--max-old-space-size=${heap}${NODE_OPTIONS:+ $NODE_OPTIONS}"
  export NODE_OPTIONS
fi

exec node "$watcher" "$@"
