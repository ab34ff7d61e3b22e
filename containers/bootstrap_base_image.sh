#!/usr/bin/env bash
# Build a minimal Debian + python3 base image without a container registry:
# debootstrap a bookworm root filesystem from the Debian mirror apt already uses, then `docker import`.
# Usage: bash bootstrap_base_image.sh [TAG]   (default tag: passk-base:bookworm)
# Machines that can reach a registry do not need this: build with --base-image python:3.11-slim.
set -euo pipefail
tag="${1:-passk-base:bookworm}"
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
echo "[bootstrap_base_image] debootstrap bookworm from $mirror into $root" >&2
debootstrap --variant=minbase --include=python3 bookworm "$root" "$mirror" >/var/log/passk-debootstrap.log 2>&1 \
  || { tail -n 20 /var/log/passk-debootstrap.log >&2; exit 1; }
# Trim what a sandbox never needs.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* "$root"/usr/share/man/*
tar -C "$root" -c . | docker import - "$tag" >/dev/null
echo "[bootstrap_base_image] imported $tag" >&2
