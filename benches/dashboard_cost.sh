#!/usr/bin/env bash
# What the dashboard costs the measurement: TTFT p50 of one level at concurrency 256
# (2,048 requests, the built-in simulator at 10x) with the dashboard open in a 120x40 tmux
# session, and with --no-tui, RUNS times each (default 3), alternating. The dashboard draws
# at most 20 frames/s from a bounded channel; its figure should stay within 3 % of the
# headless one.
#
#   cargo build --release && bash benches/dashboard_cost.sh [RUNS]
set -euo pipefail
runs=${1:-3}
bin=${RIGHTSIZE_BIN:-target/release/rightsize}
work=$(mktemp -d)
sock="rs-dashboard-cost-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
args=(sweep -c 256 -n 2048 --sim-time-scale 10)

ttft_p50() { # the level file's TTFT p50 (ms) under $1
  python3 - "$1" <<'EOF'
import glob, json, sys
f = glob.glob(sys.argv[1] + "/*/level-*.json")[0]
print(json.load(open(f))["time_to_first_token"]["p50"])
EOF
}

for i in $(seq 1 "$runs"); do
  out="$work/tui-$i"
  tmux -L "$sock" new-session -d -s d -x 120 -y 40 "$bin ${args[*]} --out $out"
  # the level file is written when the level ends; then quit the dashboard
  until compgen -G "$out/*/summary.json" >/dev/null; do sleep 0.5; done
  tmux -L "$sock" send-keys -t d q
  while tmux -L "$sock" has-session -t d 2>/dev/null; do sleep 0.2; done
  tui=$(ttft_p50 "$out")
  out="$work/headless-$i"
  "$bin" "${args[@]}" --no-tui --out "$out" >/dev/null 2>&1
  headless=$(ttft_p50 "$out")
  echo "run $i: TTFT p50 ${tui} ms with the dashboard, ${headless} ms with --no-tui"
done
