#!/usr/bin/env bash
# Docker on a machine without a running Docker engine and without access to an image registry
# (this project's development box): a private dockerd, base images built from a debootstrap'ed
# Debian root filesystem (Node and ZooKeeper from Debian's packages), the samsa image, and
# docker/docker-compose.yml on top.
#
#   scripts/docker-local.sh smoke      engine + images + compose cluster, smoke tests with kcat and
#                                      KafkaJS from the host, `docker kill` a broker under load and
#                                      check no acknowledged record is lost, then tear everything down
#   scripts/docker-local.sh e2e [ARGS] engine + images, then `E2E_BACKEND=containers vitest run
#                                      --project e2e ARGS` (testcontainers), then tear down
#   scripts/docker-local.sh up         engine + images + compose cluster, left running; prints the
#                                      DOCKER_HOST to use
#   scripts/docker-local.sh engine     engine + images only, left running (for E2E_BACKEND=containers)
#   scripts/docker-local.sh down       tear down whatever `up` / `engine` left running
#
# Needs root. Installs docker.io, docker-compose, debootstrap and kcat from Debian when missing.
# Caches (kept between runs, safe to delete): $SAMSA_DOCKER_CACHE (/var/cache/samsa-docker): the
# root filesystem tarball, Debian packages, and the engine's data root (image layers).
# Runtime state (socket, logs): $SAMSA_DOCKER_STATE (/tmp/samsa-docker-local).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${SAMSA_DOCKER_CACHE:-/var/cache/samsa-docker}
STATE=${SAMSA_DOCKER_STATE:-/tmp/samsa-docker-local}
SUITE=${SAMSA_DOCKER_SUITE:-trixie} # Debian 13: nodejs 20
MIRROR=${SAMSA_DOCKER_MIRROR:-http://deb.debian.org/debian}
ADDRESS_POOL=${SAMSA_DOCKER_ADDRESS_POOL:-10.213.0.0/16}
# the engine's default bridge (testcontainers looks up the `bridge` network): our own interface, so
# that no docker0 of another engine on this machine is touched
BRIDGE=${SAMSA_DOCKER_BRIDGE:-samsa-docker0}
BRIDGE_CIDR=${SAMSA_DOCKER_BRIDGE_CIDR:-10.214.0.1/24}
PROJECT=samsa-local
SOCK=$STATE/docker.sock
export DOCKER_HOST=unix://$SOCK
# Debian's client matches Debian's dockerd (an unrelated newer client may sit first on PATH)
DOCKER=/usr/bin/docker
export PATH="$STATE/bin:$PATH"

DEBIAN_IMAGE=samsa-local/debian:$SUITE
NODE_IMAGE=samsa-local/node:20
NODE_BUILD_IMAGE=samsa-local/node-build:20
ZOOKEEPER_IMAGE=samsa-local/zookeeper:3.9
SAMSA_IMAGE=samsa:local

T0=$(date +%s)
log() { printf '[docker-local %4ss] %s\n' "$(($(date +%s) - T0))" "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "needs root (dockerd, debootstrap)"; }

install_host_packages() {
  local need=()
  [ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] || need+=(docker.io)
  command -v docker-compose >/dev/null || need+=(docker-compose)
  command -v debootstrap >/dev/null || need+=(debootstrap)
  command -v kcat >/dev/null || need+=(kcat)
  if ((${#need[@]})); then
    log "installing ${need[*]} from Debian"
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
  # docker-compose v1 calls `docker` for some commands: make it Debian's client
  mkdir -p "$STATE/bin"
  ln -sf "$DOCKER" "$STATE/bin/docker"
}

# ---------------------------------------------------------------------------------------- engine
engine_running() { [ -f "$STATE/dockerd.pid" ] && kill -0 "$(cat "$STATE/dockerd.pid")" 2>/dev/null; }

start_engine() {
  mkdir -p "$STATE" "$CACHE/engine"
  if engine_running; then log "dockerd already running (pid $(cat "$STATE/dockerd.pid"))"; return; fi
  log "starting dockerd (data root $CACHE/engine, socket $SOCK)"
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add name "$BRIDGE" type bridge
    ip addr add "$BRIDGE_CIDR" dev "$BRIDGE"
    ip link set "$BRIDGE" up
  fi
  # --iptables=false: no NAT or port filtering rules on the host (published ports go through
  # docker-proxy; containers reach no outside network, so builds use --network host);
  # --bridge: the default network on our own bridge; compose and the test harness create their
  # own bridge networks from ADDRESS_POOL.
  setsid /usr/sbin/dockerd \
    --data-root "$CACHE/engine" --exec-root "$STATE/exec" --pidfile "$STATE/dockerd.pid" \
    -H "$DOCKER_HOST" --iptables=false --ip-masq=false --bridge="$BRIDGE" \
    --default-address-pool "base=$ADDRESS_POOL,size=24" --userland-proxy=true \
    >"$STATE/dockerd.log" 2>&1 </dev/null 9>&- &
  local pid=$!
  echo "$pid" >"$STATE/dockerd.pid.launch"
  for _ in $(seq 1 120); do
    if "$DOCKER" version >/dev/null 2>&1; then log "dockerd up (pid $pid)"; return; fi
    kill -0 "$pid" 2>/dev/null || { tail -20 "$STATE/dockerd.log" >&2; die "dockerd exited"; }
    sleep 0.5
  done
  die "dockerd did not answer within 60 s (see $STATE/dockerd.log)"
}

stop_engine() {
  local pid=""
  [ -f "$STATE/dockerd.pid.launch" ] && pid=$(cat "$STATE/dockerd.pid.launch")
  [ -z "$pid" ] && [ -f "$STATE/dockerd.pid" ] && pid=$(cat "$STATE/dockerd.pid")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    log "stopping dockerd (pid $pid)"
    kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  fi
  # containerd and shims started by this dockerd run with our exec root in their arguments
  local left
  left=$(pgrep -f -- "$STATE/exec" || true)
  if [ -n "$left" ]; then
    log "killing leftover engine processes: $left"
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null || true
  fi
  rm -f "$STATE/dockerd.pid" "$STATE/dockerd.pid.launch" "$SOCK"
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link del "$BRIDGE" || true; fi
  # mounts of the engine (overlay, netns, shm) must not outlive it
  grep -E " ($CACHE/engine|$STATE/exec)/" /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
}

# ---------------------------------------------------------------------------------------- images
image_exists() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }

build_rootfs() {
  local tarball=$CACHE/rootfs-$SUITE.tar
  if [ -s "$tarball" ]; then return; fi
  local dir=$CACHE/rootfs-$SUITE.tmp
  rm -rf "$dir"
  mkdir -p "$CACHE/debs"
  log "debootstrap $SUITE (minbase) into $dir — first run only, a few minutes"
  debootstrap --variant=minbase --cache-dir="$CACHE/debs" --include=ca-certificates \
    "$SUITE" "$dir" "$MIRROR" >"$STATE/debootstrap.log" 2>&1 || { tail -20 "$STATE/debootstrap.log" >&2; die "debootstrap failed"; }
  chroot "$dir" apt-get clean
  rm -rf "$dir"/var/lib/apt/lists/* "$dir"/tmp/* "$dir"/var/log/*.log
  tar -C "$dir" --numeric-owner -cf "$tarball.part" .
  mv "$tarball.part" "$tarball"
  rm -rf "$dir"
}

build_images() {
  if ! image_exists "$DEBIAN_IMAGE"; then
    build_rootfs
    log "docker import $DEBIAN_IMAGE"
    "$DOCKER" import --change 'CMD ["bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      "$CACHE/rootfs-$SUITE.tar" "$DEBIAN_IMAGE" >/dev/null
  fi
  local ctx=$ROOT/docker/local
  # Debian's packages come from the network: builds share the host's network (there is no NAT)
  log "building $NODE_IMAGE, $NODE_BUILD_IMAGE, $ZOOKEEPER_IMAGE (cached after the first run)"
  DOCKER_BUILDKIT=0 "$DOCKER" build -q --network host --build-arg "BASE_IMAGE=$DEBIAN_IMAGE" \
    -t "$NODE_IMAGE" -f "$ctx/node.Dockerfile" "$ctx" >/dev/null
  # the build stage's npm trusts the CA file the host's npm uses (if any)
  local bctx=$STATE/node-build-context cafile
  rm -rf "$bctx" && mkdir -p "$bctx" && cp "$ctx/node-build.Dockerfile" "$bctx/Dockerfile"
  cafile=$(npm config get cafile 2>/dev/null || true)
  if [ -n "$cafile" ] && [ "$cafile" != null ] && [ -f "$cafile" ]; then cp "$cafile" "$bctx/npm-ca.crt"; else : >"$bctx/npm-ca.crt"; fi
  DOCKER_BUILDKIT=0 "$DOCKER" build -q --network host --build-arg "BASE_IMAGE=$NODE_IMAGE" \
    -t "$NODE_BUILD_IMAGE" "$bctx" >/dev/null
  DOCKER_BUILDKIT=0 "$DOCKER" build -q --network host --build-arg "BASE_IMAGE=$DEBIAN_IMAGE" \
    -t "$ZOOKEEPER_IMAGE" "$ctx/zookeeper" >/dev/null
  log "building $SAMSA_IMAGE from docker/Dockerfile"
  DOCKER_BUILDKIT=0 "$DOCKER" build --network host \
    --build-arg "BASE_IMAGE=$NODE_IMAGE" --build-arg "BUILD_IMAGE=$NODE_BUILD_IMAGE" \
    -t "$SAMSA_IMAGE" -f "$ROOT/docker/Dockerfile" "$ROOT" >"$STATE/build.log" 2>&1 \
    || { tail -30 "$STATE/build.log" >&2; die "docker build failed (log: $STATE/build.log)"; }
}

# ---------------------------------------------------------------------------------------- compose
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

choose_ports() {
  # 9092-9094 unless something on this machine already listens there
  if port_free 9092 && port_free 9093 && port_free 9094; then
    SAMSA_PORT_1=9092 SAMSA_PORT_2=9093 SAMSA_PORT_3=9094
  else
    read -r SAMSA_PORT_1 SAMSA_PORT_2 SAMSA_PORT_3 < <(node -e '
      const net = require("node:net");
      Promise.all([0, 1, 2].map(() => new Promise((r) => { const s = net.createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => r(p)); }); })))
        .then((ps) => console.log(ps.join(" ")));')
    log "9092-9094 are taken on this machine: publishing the brokers on $SAMSA_PORT_1, $SAMSA_PORT_2, $SAMSA_PORT_3"
  fi
  export SAMSA_PORT_1 SAMSA_PORT_2 SAMSA_PORT_3
  BOOTSTRAP="localhost:$SAMSA_PORT_1,localhost:$SAMSA_PORT_2,localhost:$SAMSA_PORT_3"
}

compose() {
  SAMSA_IMAGE=$SAMSA_IMAGE ZOOKEEPER_IMAGE=$ZOOKEEPER_IMAGE NODE_IMAGE=$NODE_IMAGE \
    docker-compose -p "$PROJECT" -f "$ROOT/docker/docker-compose.yml" "$@"
}

container_of() { compose ps -q "$1"; }

health_of() { "$DOCKER" inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$1" 2>/dev/null || echo missing; }

wait_healthy() {
  local timeout=$1; shift
  local deadline=$(($(date +%s) + timeout)) s c unhealthy
  while :; do
    unhealthy=()
    for s in "$@"; do
      c=$(container_of "$s")
      [ -n "$c" ] && [ "$(health_of "$c")" = healthy ] || unhealthy+=("$s")
    done
    ((${#unhealthy[@]} == 0)) && return 0
    if (($(date +%s) > deadline)); then
      compose ps >&2 || true
      for s in "${unhealthy[@]}"; do log "logs of $s:"; compose logs --tail 30 "$s" >&2 || true; done
      die "not healthy after ${timeout}s: ${unhealthy[*]}"
    fi
    sleep 2
  done
}

compose_up() {
  choose_ports
  compose down -v --remove-orphans >/dev/null 2>&1 || true
  log "docker-compose up -d (3 ZooKeeper servers, 3 brokers)"
  compose up -d --no-build >"$STATE/compose-up.log" 2>&1 || { cat "$STATE/compose-up.log" >&2; die "docker-compose up failed"; }
  wait_healthy 240 zookeeper-1 zookeeper-2 zookeeper-3 broker-1 broker-2 broker-3
  log "all 6 containers healthy; bootstrap $BOOTSTRAP"
}

compose_down() {
  if [ -S "$SOCK" ]; then
    log "docker-compose down -v"
    compose down -v --remove-orphans --timeout 30 >/dev/null 2>&1 || true
  fi
}

# ---------------------------------------------------------------------------------------- smoke
kafkajs_dir() {
  if [ -f "$ROOT/node_modules/kafkajs/package.json" ]; then echo "$ROOT/node_modules/kafkajs"; return; fi
  local version
  version=$(node -p 'require(process.argv[1]).devDependencies.kafkajs' "$ROOT/package.json")
  if [ ! -f "$STATE/npm/node_modules/kafkajs/package.json" ]; then
    log "npm install kafkajs@$version (host side of the smoke test)"
    npm install --prefix "$STATE/npm" --no-save --no-audit --no-fund "kafkajs@$version" >/dev/null 2>&1 || die "npm install kafkajs failed"
  fi
  echo "$STATE/npm/node_modules/kafkajs"
}

samsa_cli() {
  # the CLI from the same image, inside the compose network
  "$DOCKER" run --rm --network "${PROJECT}_default" "$SAMSA_IMAGE" "$@"
}

# kcat -C to the end of every partition, values one per line
kcat_values() { kcat -C -b "$1" -t "$2" -e -o beginning -q -f '%s\n' -X topic.metadata.refresh.interval.ms=1000; }

smoke_tests() {
  local kjs n=1000 out
  kjs=$(kafkajs_dir)
  export KAFKAJS_DIR=$kjs

  log "kcat -L: 3 brokers advertised on the host ports"
  out=$(kcat -L -b "$BOOTSTRAP" -m 15)
  for p in "$SAMSA_PORT_1" "$SAMSA_PORT_2" "$SAMSA_PORT_3"; do grep -q "at localhost:$p" <<<"$out" || { echo "$out" >&2; die "broker on port $p not in the metadata"; }; done

  log "samsa topics --create (CLI in the image): smoke, 3 partitions, RF 3"
  samsa_cli topics --bootstrap-server broker-1:29092 --create --topic smoke --partitions 3 --replication-factor 3 --config min.insync.replicas=2
  samsa_cli topics --bootstrap-server broker-1:29092 --describe --topic smoke >&2

  log "kcat -P $n records (acks=all) → KafkaJS consumes them and produces $n more"
  seq 0 $((n - 1)) | sed 's/^/kcat-/' | kcat -P -b "$BOOTSTRAP" -t smoke -X acks=all
  node "$ROOT/scripts/docker-smoke.mjs" roundtrip "$BOOTSTRAP" smoke "$n"
  log "kcat -C reads back all $((2 * n)) records"
  out=$(kcat_values "$BOOTSTRAP" smoke | sort -u)
  [ "$(grep -c '^kcat-' <<<"$out")" = "$n" ] || die "kcat read $(grep -c '^kcat-' <<<"$out") of $n kcat records"
  [ "$(grep -c '^kafkajs-' <<<"$out")" = "$n" ] || die "kcat read $(grep -c '^kafkajs-' <<<"$out") of $n KafkaJS records"

  log "docker kill a partition leader while 4 KafkaJS producers send with acks=all"
  local containers victim acked=$STATE/acked.txt
  containers="1=$(container_of broker-1),2=$(container_of broker-2),3=$(container_of broker-3)"
  victim=$(SMOKE_CONTAINERS=$containers node "$ROOT/scripts/docker-smoke.mjs" kill-under-load "$BOOTSTRAP" smoke-kill "$acked")
  local alive=() i
  for i in 1 2 3; do [ "$i" = "$victim" ] || alive+=("localhost:$(eval echo "\$SAMSA_PORT_$i")"); done
  local survivors
  survivors=$(IFS=,; echo "${alive[*]}")
  log "reading smoke-kill back from the survivors ($survivors)"
  local missing total
  total=$(wc -l <"$acked")
  # a new leader's high watermark catches up once its follower fetched: retry for a while
  for attempt in $(seq 1 20); do
    kcat_values "$survivors" smoke-kill | sort -u >"$STATE/consumed.txt"
    missing=$(sort -u "$acked" | comm -23 - "$STATE/consumed.txt" | wc -l)
    [ "$missing" = 0 ] && break
    log "attempt $attempt: $missing of $total acknowledged records not readable yet"
    sleep 3
  done
  [ "$missing" = 0 ] || die "$missing of $total acknowledged records lost after docker kill of broker $victim"
  log "all $total acknowledged records readable after the kill ($(wc -l <"$STATE/consumed.txt") distinct records in the topic)"

  log "restarting broker-$victim; it rejoins the cluster"
  "$DOCKER" start "$(container_of "broker-$victim")" >/dev/null
  wait_healthy 180 "broker-$victim"
  local deadline=$(($(date +%s) + 120))
  until grep -q "3 brokers:" <<<"$(kcat -L -b "$BOOTSTRAP" -t smoke-kill -m 10 2>/dev/null)" \
    && [ -z "$(samsa_cli topics --bootstrap-server broker-1:29092 --describe --topic smoke-kill --under-replicated-partitions)" ]; do
    (($(date +%s) > deadline)) && { samsa_cli topics --bootstrap-server broker-1:29092 --describe --topic smoke-kill >&2; die "broker $victim did not rejoin every ISR"; }
    sleep 2
  done
  log "broker $victim is back and no partition is under-replicated"

  log "graceful stop: SIGTERM to broker-1 gives a controlled shutdown and exit code 0"
  compose stop --timeout 60 broker-1 >/dev/null 2>&1
  local code
  code=$("$DOCKER" inspect -f '{{.State.ExitCode}}' "$(container_of broker-1)")
  [ "$code" = 0 ] || { compose logs --tail 30 broker-1 >&2; die "broker-1 exited with $code after SIGTERM"; }
  # (no `| grep -q` under pipefail: grep's early exit would fail the pipeline)
  grep -q "controlled shutdown succeeded" <<<"$(compose logs --no-color broker-1 2>/dev/null)" \
    || { compose logs --tail 30 broker-1 >&2; die "broker-1 stopped without a successful controlled shutdown"; }
  log "broker-1: controlled shutdown succeeded, exit code 0"
}

# ---------------------------------------------------------------------------------------- e2e
run_e2e() {
  [ -d "$ROOT/node_modules" ] || (cd "$ROOT" && npm ci --no-audit --no-fund >/dev/null)
  (cd "$ROOT" && npx tsc -b)
  log "E2E_BACKEND=containers vitest run --project e2e $*"
  (cd "$ROOT" && E2E_BACKEND=containers SAMSA_E2E_REQUIRE_BACKEND=1 SAMSA_E2E_IMAGE=$SAMSA_IMAGE SAMSA_E2E_ZOOKEEPER_IMAGE=$ZOOKEEPER_IMAGE \
    TESTCONTAINERS_RYUK_DISABLED=true npx vitest run --project e2e "$@")
}

# ---------------------------------------------------------------------------------------- main
teardown() {
  local rc=$?
  trap - EXIT INT TERM
  compose_down
  # containers a test run left behind (the harness removes its own; this is the safety net)
  if [ -S "$SOCK" ]; then
    "$DOCKER" ps -aq | xargs -r "$DOCKER" rm -f >/dev/null 2>&1 || true
    "$DOCKER" network prune -f >/dev/null 2>&1 || true
    "$DOCKER" volume prune -f >/dev/null 2>&1 || true
  fi
  stop_engine
  if pgrep -f -- "$STATE/exec" >/dev/null; then log "WARNING: engine processes still running"; rc=1; fi
  log "torn down (exit $rc)"
  exit "$rc"
}

cmd=${1:-smoke}
[ $# -gt 0 ] && shift
need_root
mkdir -p "$STATE"
exec 9>"$STATE/lock"
flock -n 9 || die "another docker-local.sh runs (lock $STATE/lock)"
case "$cmd" in
  smoke)
    trap teardown EXIT INT TERM
    install_host_packages; start_engine; build_images; compose_up; smoke_tests
    log "smoke passed in $(($(date +%s) - T0)) s" ;;
  e2e)
    trap teardown EXIT INT TERM
    install_host_packages; start_engine; build_images; run_e2e "$@" ;;
  up)
    install_host_packages; start_engine; build_images; compose_up
    echo "export DOCKER_HOST=$DOCKER_HOST   # then: docker-compose -p $PROJECT -f docker/docker-compose.yml ps; stop with: $0 down" ;;
  engine)
    install_host_packages; start_engine; build_images
    echo "export DOCKER_HOST=$DOCKER_HOST SAMSA_E2E_IMAGE=$SAMSA_IMAGE SAMSA_E2E_ZOOKEEPER_IMAGE=$ZOOKEEPER_IMAGE TESTCONTAINERS_RYUK_DISABLED=true" ;;
  down)
    trap teardown EXIT INT TERM ;;
  *)
    sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
