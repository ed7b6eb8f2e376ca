#!/bin/bash
# The two zkServer.sh commands the upstream image is used with: start-foreground and status.
set -e
case "${1:-}" in
  start-foreground)
    # shellcheck disable=SC2086
    exec java $JVMFLAGS -Dzookeeper.log.dir="$ZOO_LOG_DIR" \
      -cp /usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar \
      org.apache.zookeeper.server.quorum.QuorumPeerMain "$ZOO_CONF_DIR/zoo.cfg" ;;
  status)
    # `srvr` answers with Mode: leader|follower|standalone once the server serves
    exec 3<>/dev/tcp/127.0.0.1/2181 || { echo "Error contacting service. It is probably not running."; exit 1; }
    echo srvr >&3
    mode=$(timeout 3 cat <&3 | sed -n 's/^Mode: //p')
    exec 3<&-
    if [[ -z "$mode" ]]; then echo "Error contacting service. It is probably not running."; exit 1; fi
    echo "Mode: $mode" ;;
  *)
    echo "usage: zkServer.sh start-foreground|status" >&2
    exit 2 ;;
esac
