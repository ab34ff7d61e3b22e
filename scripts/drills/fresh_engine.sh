#!/usr/bin/env bash
# A second Docker engine that holds nothing of passk's, beside the machine's own: its own data root, socket,
# exec root and bridge, so that an image built from nothing is built from nothing (a warm engine hides an
# image that no longer builds). Every passk command run with the DOCKER_HOST this prints talks to it.
#
#   bash scripts/drills/fresh_engine.sh start      # prints: export DOCKER_HOST=unix:///run/passk-fresh/docker.sock
#   DOCKER_HOST=unix:///run/passk-fresh/docker.sock passk images build --base-image passk-base:bullseye
#   bash scripts/drills/fresh_engine.sh stop       # stops it and removes its data root
#   bash scripts/drills/fresh_engine.sh stop --keep   # stops it, keeps its images for the next start
#
# PASSK_FRESH_ROOT (default /var/lib/passk-fresh-docker) is its data root; the bridge is passk-fresh0 on
# 172.31.254.1/24 (PASSK_FRESH_CIDR), so that image builds reach Debian's mirror as the main engine's do.
set -euo pipefail
root="${PASSK_FRESH_ROOT:-/var/lib/passk-fresh-docker}"
run=/run/passk-fresh
cidr="${PASSK_FRESH_CIDR:-172.31.254.1/24}"
bridge=passk-fresh0
log() { echo "[fresh_engine] $*" >&2; }

case "${1:-start}" in
start)
  mkdir -p "$root" "$run"
  if [ -S "$run/docker.sock" ] && DOCKER_HOST="unix://$run/docker.sock" docker info >/dev/null 2>&1; then
    log "already running"
  else
    if ! ip link show "$bridge" >/dev/null 2>&1; then
      ip link add name "$bridge" type bridge
      ip addr add "$cidr" dev "$bridge"
      ip link set "$bridge" up
    fi
    # the main engine's runtimes (gVisor's), so that the same runtimes are there
    cfg="$run/daemon.json"
    if [ -f /etc/docker/daemon.json ]; then cp /etc/docker/daemon.json "$cfg"; else echo '{}' > "$cfg"; fi
    setsid nohup dockerd --config-file "$cfg" --data-root "$root" --exec-root "$run/exec" \
      --pidfile "$run/docker.pid" --host "unix://$run/docker.sock" --bridge "$bridge" \
      >"$run/dockerd.log" 2>&1 < /dev/null &
    for _ in $(seq 1 60); do
      DOCKER_HOST="unix://$run/docker.sock" docker info >/dev/null 2>&1 && break
      sleep 1
    done
    DOCKER_HOST="unix://$run/docker.sock" docker info >/dev/null 2>&1 \
      || { log "it did not answer in 60 s: $run/dockerd.log"; tail -5 "$run/dockerd.log" >&2; exit 1; }
    log "up: data root $root, $(DOCKER_HOST="unix://$run/docker.sock" docker images -q | wc -l) image(s)"
  fi
  echo "export DOCKER_HOST=unix://$run/docker.sock"
  ;;
stop)
  if [ -f "$run/docker.pid" ]; then
    pid="$(cat "$run/docker.pid")"   # read once: dockerd removes the file as it ends
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  fi
  ip link del "$bridge" 2>/dev/null || true
  # dockerd mounts its data root (and overlay2's) on itself; left mounted, rm -rf cannot remove the directory
  umount -R "$root" 2>/dev/null || true
  umount -R "$run" 2>/dev/null || true
  if [ "${2:-}" = "--keep" ]; then   # a long drill resumes on the same images: start brings them back
    rm -rf "$run"
    log "stopped; $root kept ($(du -sh "$root" 2>/dev/null | cut -f1)): start resumes on it, stop removes it"
  else
    rm -rf "$root" "$run"
    log "stopped; $root removed"
  fi
  ;;
*)
  echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
