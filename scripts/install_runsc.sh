#!/usr/bin/env bash
# gVisor's runsc from another Debian suite (trixie's 0.0~20240729 has the systrap platform; bookworm's
# 0.0~20221219 has only ptrace), installed beside the system's runsc and registered with Docker as two
# runtimes: runsc-systrap and runsc-ptrace. Everything comes from Debian's archive and is checked as apt
# checks it: the suite's InRelease by the Debian archive keyring, the package index by the InRelease's
# sha256, the package by the index's sha256. Nothing of the system's packages changes.
#
#   bash scripts/install_runsc.sh [--suite trixie] [--default systrap|ptrace]
#
# --default also points the runtime `runsc` (what `--runtime runsc` runs) at the new runsc with that platform;
# the system's runsc it replaces stays registered as runsc-system. scripts/setup.sh runs it with
# --default ptrace (the faster platform on passk's workload: docs/performance.md) unless PASSK_RUNSC=system.
set -euo pipefail
suite=trixie
default=""
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) suite="$2"; shift 2 ;;
    --default) default="$2"; shift 2 ;;
    *) echo "usage: $0 [--suite SUITE] [--default systrap|ptrace]" >&2; exit 2 ;;
  esac
done
case "$default" in ""|systrap|ptrace) ;; *) echo "$0: --default is systrap or ptrace" >&2; exit 2 ;; esac
log() { echo "[install_runsc] $*" >&2; }
mirror="${PASSK_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
arch="$(dpkg --print-architecture)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

curl -fsS -m 120 -o "$work/InRelease" "$mirror/dists/$suite/InRelease"
gpgv --keyring "$keyring" --output "$work/Release" "$work/InRelease" 2>"$work/gpgv.log" \
  || { cat "$work/gpgv.log" >&2; log "the $suite InRelease is not signed by a key of $keyring"; exit 1; }
index="main/binary-$arch/Packages.xz"
want="$(awk -v f="$index" '/^SHA256:/{s=1; next} /^[A-Za-z]/{s=0} s && $3 == f {print $1}' "$work/Release")"
[ -n "$want" ] || { log "$suite's Release lists no $index"; exit 1; }
curl -fsS -m 300 -o "$work/Packages.xz" "$mirror/dists/$suite/$index"
[ "$(sha256sum "$work/Packages.xz" | cut -d' ' -f1)" = "$want" ] || { log "$index: sha256 differs from the Release"; exit 1; }
xz -dc "$work/Packages.xz" > "$work/Packages"   # (awk's early exit would end xz by SIGPIPE, which pipefail reports)
stanza="$(awk '/^Package: runsc$/{p=1} p && /^$/{exit} p' "$work/Packages")"
[ -n "$stanza" ] || { log "$suite has no runsc package"; exit 1; }
version="$(sed -n 's/^Version: //p' <<<"$stanza")"
file="$(sed -n 's/^Filename: //p' <<<"$stanza")"
sha="$(sed -n 's/^SHA256: //p' <<<"$stanza")"
dest="/opt/passk/runsc/$version"
if [ ! -x "$dest/usr/bin/runsc" ]; then
  curl -fsS -m 600 -o "$work/runsc.deb" "$mirror/$file"
  [ "$(sha256sum "$work/runsc.deb" | cut -d' ' -f1)" = "$sha" ] || { log "$file: sha256 differs from the index"; exit 1; }
  mkdir -p "$dest.tmp" && dpkg-deb -x "$work/runsc.deb" "$dest.tmp" && rm -rf "$dest" && mv "$dest.tmp" "$dest"
  log "runsc $version from $suite in $dest"
fi
binary="$dest/usr/bin/runsc"
"$binary" --version >/dev/null

# Register the runtimes (the existing ones are kept), then have dockerd reload its configuration.
python3 - "$binary" "$default" <<'EOF'
import json, os, sys
binary, default = sys.argv[1], sys.argv[2]
path = "/etc/docker/daemon.json"
config = json.load(open(path)) if os.path.exists(path) else {}
runtimes = config.setdefault("runtimes", {})
for platform in ("systrap", "ptrace"):
    runtimes[f"runsc-{platform}"] = {"path": binary, "runtimeArgs": [f"--platform={platform}", "--network=none"]}
if default:
    system = runtimes.get("runsc")
    if system and not system.get("path", "").startswith("/opt/passk/runsc/"):
        runtimes["runsc-system"] = system      # the system package's runsc, still there to compare with
    runtimes["runsc"] = dict(runtimes[f"runsc-{default}"])
os.makedirs(os.path.dirname(path), exist_ok=True)
tmp = path + ".tmp"
with open(tmp, "w") as f:
    json.dump(config, f, indent=2)
    f.write("\n")
os.replace(tmp, path)
EOF
if [ -f /var/run/docker.pid ] && kill -HUP "$(cat /var/run/docker.pid)" 2>/dev/null; then
  sleep 1
fi
docker info --format '{{json .Runtimes}}' | python3 -c '
import json, sys
have = json.load(sys.stdin)
missing = [r for r in ("runsc-systrap", "runsc-ptrace") if r not in have]
sys.exit("[install_runsc] dockerd did not load the runtimes: " + ", ".join(missing) if missing else 0)'
log "registered runsc-systrap and runsc-ptrace (runsc $version)${default:+; runsc runs it with $default}"
