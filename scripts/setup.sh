#!/usr/bin/env bash
# Everything a fresh machine needs before passk can run: a Docker engine, the project installed,
# the offline base image (when no registry answers) and passk's sandbox image.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure_docker.sh
# gVisor: Debian trixie's runsc with ptrace is the default `runsc` (faster than bookworm's on passk's
# workload); PASSK_RUNSC=system keeps the system's. Without Debian's archive, the system's runsc stays.
if [ "${PASSK_RUNSC:-trixie}" != system ] && command -v runsc >/dev/null 2>&1 \
   && ! grep -q '"path": "/opt/passk/runsc/' /etc/docker/daemon.json 2>/dev/null; then
  bash scripts/install_runsc.sh --default ptrace \
    || echo "[setup] trixie's runsc could not be installed: --runtime runsc runs the system's" >&2
fi
here="$(pwd -P)"
# Installed, and installed from this checkout (not another one that happens to be on the machine)?
installed=$(cd / && python3 -c "import harness, harness.containers.box, docker, yaml, tqdm, ray, mkdocs, pymdownx, ruff, starlette, uvicorn, sandbox_fusion, inspect_ai, os; print(os.path.dirname(os.path.dirname(os.path.realpath(harness.__file__))))" 2>/dev/null || true)
if [ "$installed" != "$here" ] || ! command -v passk >/dev/null 2>&1; then
  echo "[setup] installing passk (pip install -e .)" >&2
  python3 -m pip install -q -e ".[test,ray,docs,serve,inspect]" 2>&1 | grep -v -E "^(WARNING|DEPRECATION)" >&2 || true
fi
(cd / && python3 -c "import harness") || { echo "[setup] pip install failed" >&2; exit 1; }
base="${PASSK_BASE_IMAGE:-passk-base:bookworm}"
if [ "$base" = "passk-base:bookworm" ]; then
  bash scripts/bootstrap_base_image.sh "$base"
fi
passk images build --base-image "$base" >&2
