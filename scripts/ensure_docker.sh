#!/usr/bin/env bash
# Make sure a Docker engine answers. On a fresh machine (no engine, or only the client) install
# Debian's docker.io, register gVisor's runsc as a runtime when it is available, and start dockerd
# in the background. Idempotent: does nothing when `docker info` already answers.
set -euo pipefail

log() { echo "[ensure_docker] $*" >&2; }

if docker info >/dev/null 2>&1; then
  exit 0
fi

need_pkgs=()
command -v dockerd >/dev/null 2>&1 || need_pkgs+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need_pkgs+=(debootstrap)
command -v runsc >/dev/null 2>&1 || need_pkgs+=(runsc)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  log "installing ${need_pkgs[*]} from Debian"
  apt-get update -qq
  # runsc is optional: if it is not available the rest still installs.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null \
    || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null
fi

if command -v runsc >/dev/null 2>&1 && [ ! -f /etc/docker/daemon.json ]; then
  mkdir -p /etc/docker
  cat > /etc/docker/daemon.json <<JSON
{
  "runtimes": {
    "runsc": {
      "path": "$(command -v runsc)",
      "runtimeArgs": ["--platform=ptrace", "--network=none"]
    }
  }
}
JSON
  log "registered runsc as a Docker runtime"
fi

# A killed session leaves its pid file behind and dockerd then refuses to start.
if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
  log "removing stale /var/run/docker.pid"
  rm -f /var/run/docker.pid
fi
if ! pgrep -x dockerd >/dev/null 2>&1; then
  log "starting dockerd (log: /var/log/passk-dockerd.log)"
  setsid nohup dockerd >/var/log/passk-dockerd.log 2>&1 < /dev/null &
fi
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    log "engine is up"
    exit 0
  fi
  sleep 1
done
log "dockerd did not answer within 60 s; see /var/log/passk-dockerd.log"
exit 1
