#!/bin/bash
# Writes $ZOO_CONF_DIR/zoo.cfg and $ZOO_DATA_DIR/myid from ZOO_* variables as the upstream image does.
set -e
if [[ ! -f "$ZOO_CONF_DIR/zoo.cfg" ]]; then
  {
    echo "dataDir=$ZOO_DATA_DIR"
    echo "dataLogDir=$ZOO_DATA_LOG_DIR"
    echo "tickTime=$ZOO_TICK_TIME"
    echo "initLimit=$ZOO_INIT_LIMIT"
    echo "syncLimit=$ZOO_SYNC_LIMIT"
    echo "autopurge.snapRetainCount=$ZOO_AUTOPURGE_SNAPRETAINCOUNT"
    echo "autopurge.purgeInterval=$ZOO_AUTOPURGE_PURGEINTERVAL"
    echo "maxClientCnxns=$ZOO_MAX_CLIENT_CNXNS"
    echo "standaloneEnabled=$ZOO_STANDALONE_ENABLED"
    echo "admin.enableServer=$ZOO_ADMINSERVER_ENABLED"
    echo "4lw.commands.whitelist=$ZOO_4LW_COMMANDS_WHITELIST"
    echo "clientPort=2181"
    if [[ -z "${ZOO_SERVERS:-}" ]]; then
      echo "server.1=localhost:2888:3888;2181"
    else
      for server in $ZOO_SERVERS; do echo "$server"; done
    fi
    for cfg in ${ZOO_CFG_EXTRA:-}; do echo "$cfg"; done
  } > "$ZOO_CONF_DIR/zoo.cfg"
fi
if [[ ! -f "$ZOO_DATA_DIR/myid" ]]; then
  echo "${ZOO_MY_ID:-1}" > "$ZOO_DATA_DIR/myid"
fi
exec "$@"
