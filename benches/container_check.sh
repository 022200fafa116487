#!/usr/bin/env bash
# Builds the image of the top-level Containerfile and runs it: `rightsize --version`, then a
# short demo sweep on the built-in simulator as the image's non-root user, and checks that
# the user is not root. Needs a container engine (docker or podman) that answers; without one
# it says so and exits 0 (skipped): `docker --version` answering is only the client.
#
#   bash benches/container_check.sh [IMAGE]      # default rightsize:check
set -euo pipefail
cd "$(dirname "$0")/.."
image="${1:-rightsize:check}"
engine=""
for e in docker podman; do
  if command -v "$e" >/dev/null && "$e" info >/dev/null 2>&1; then engine="$e"; break; fi
done
if [ -z "$engine" ]; then
  echo "skipped: no container engine answers here (docker info / podman info fail); the Containerfile is untested on this machine"
  exit 0
fi
echo "== $engine build -f Containerfile -t $image ."
"$engine" build -f Containerfile -t "$image" .
echo "== rightsize --version"
"$engine" run --rm "$image" --version
uid=$("$engine" run --rm --entrypoint id "$image" -u)
if [ "$uid" = "0" ]; then echo "FAIL: the image runs as root"; exit 1; fi
echo "== a demo sweep on the built-in simulator (user $uid)"
"$engine" run --rm "$image" sweep -c 1,4 -n 8 --sim-time-scale 20 --no-tui --json >/dev/null
echo "ok: $image builds, runs as uid $uid and sweeps the simulator"
