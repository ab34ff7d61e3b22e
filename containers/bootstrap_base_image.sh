#!/usr/bin/env bash
# Build a minimal Debian + python3 base image without a container registry:
# debootstrap a Debian root filesystem from the mirror apt already uses, then `docker import`.
# Usage: bash bootstrap_base_image.sh [TAG [SUITE]]   (default tag: passk-base:bookworm; the suite is the
# tag's own, passk-base:SUITE, else bookworm: bullseye gives Python 3.9, bookworm 3.11)
# Machines that can reach a registry do not need this: build with --base-image python:3.11-slim.
set -euo pipefail
tag="${1:-passk-base:bookworm}"
suite="${2:-}"
if [ -z "$suite" ]; then
  case "$tag" in passk-base:*) suite="${tag#passk-base:}" ;; *) suite=bookworm ;; esac
fi
case "$suite" in bookworm|bullseye|trixie) ;; *) echo "[bootstrap_base_image] unknown suite $suite" >&2; exit 2 ;; esac
if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "[bootstrap_base_image] $tag exists" >&2
  exit 0
fi
command -v debootstrap >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
mirror=$(grep -hoE '^URIs: *\S+' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1 | awk '{print $2}')
[ -n "${mirror:-}" ] || mirror=$(grep -hoE '^deb +\S+' /etc/apt/sources.list 2>/dev/null | head -n1 | awk '{print $2}')
[ -n "${mirror:-}" ] || mirror="http://deb.debian.org/debian"
root=$(mktemp -d /var/tmp/passk-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "[bootstrap_base_image] debootstrap $suite from $mirror into $root" >&2
debootstrap --variant=minbase --include=python3 "$suite" "$root" "$mirror" >/var/log/passk-debootstrap.log 2>&1 \
  || { tail -n 20 /var/log/passk-debootstrap.log >&2; exit 1; }
# Trim what a sandbox never needs.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* "$root"/usr/share/man/*
tar -C "$root" -c . | docker import - "$tag" >/dev/null
echo "[bootstrap_base_image] imported $tag" >&2
