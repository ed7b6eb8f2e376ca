#!/bin/sh
# Samsa image entry point.
# - KAFKA_<NAME> variables (the Kafka images' convention, e.g. KAFKA_ADVERTISED_LISTENERS) become
#   SAMSA_<NAME> unless that is set; the broker reads SAMSA_<NAME> for every server.properties name
#   (`.` and `-` as `_`).
# - `broker start` (the default), `topics …`, `cluster …` and every other samsa command run the CLI;
#   anything else runs as given (e.g. `docker run -it samsa sh`).
# - `broker …` runs node with SAMSA_NODE_PERFORMANCE_OPTS (as Kafka's KAFKA_JVM_PERFORMANCE_OPTS;
#   default --single-threaded-gc --initial-old-space-size=128, empty for none; see docs/operations.md).
# The CLI replaces this shell (exec), so SIGTERM reaches the broker, which shuts down in a controlled
# way (leadership moved off first) and exits 0.
set -eu

for kv in $(env | sed -n 's/^\(KAFKA_[A-Z0-9_]*\)=.*$/\1/p'); do
  samsa_name="SAMSA_${kv#KAFKA_}"
  if [ -z "$(printenv "$samsa_name" || true)" ]; then
    export "$samsa_name=$(printenv "$kv")"
  fi
done

case "${1:-}" in
  broker)
    # unquoted on purpose: the options are space-separated node flags
    # shellcheck disable=SC2086
    exec node ${SAMSA_NODE_PERFORMANCE_OPTS---single-threaded-gc --initial-old-space-size=128} /app/packages/cli/bin/samsa.js "$@" ;;
  topics|cluster|leader-election|help|--help|-h|--version|-V)
    exec node /app/packages/cli/bin/samsa.js "$@" ;;
  samsa)
    shift
    exec node /app/packages/cli/bin/samsa.js "$@" ;;
  *)
    exec "$@" ;;
esac
