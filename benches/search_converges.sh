#!/usr/bin/env bash
# Does the default search converge? Runs `rightsize search --e2e-sla p99:600ms` with every
# other setting at its default (the built-in simulator, 1,024 requests a level, 16 to 4096,
# 10 levels) RUNS times back to back (default 10) and prints, per run, the levels in the order
# measured (x2: measured twice and pooled, ~: left uncertain), the bracket, whether it is
# within 5 %, levels used, measurements and requests; then how many runs landed within 5 %
# in at most 10 levels. docs/search.md ("The default search converges") carries the tables.
#
#   cargo build --release && bash benches/search_converges.sh [RUNS] [extra search flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
shift || true
bin=${RIGHTSIZE_BIN:-target/release/rightsize}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
good=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  "$bin" search --e2e-sla p99:600ms --no-tui --out "$out/run-$i" "$@" >/dev/null 2>"$out/err-$i" || true
  secs=$(( $(date +%s) - start ))
  line=$(python3 - "$out/run-$i" "$secs" <<'PY'
import json, glob, sys
run = glob.glob(sys.argv[1] + "/*/summary.json")[0]
s = json.load(open(run))
search = s.get("search") or {}
seen, order = {}, []
for it in s.get("iterations", []):
    c = it["concurrency"]
    if c not in seen:
        order.append(c)
    seen[c] = it
levels = {l["concurrency"]: l for l in s.get("levels", [])}
words = []
for c in order:
    l = levels.get(c, {})
    w = str(c)
    if len(l.get("measurements") or []) > 1:
        w += "x2"
    if l.get("verdict") == "uncertain":
        w += "~"
    words.append(w)
lo, hi = (search.get("bracket") or [None, None])[:2]
within = lo is not None and hi is not None and hi <= -(-lo * 105 // 100)
requests = sum(m.get("requests", 0) for l in s.get("levels", []) for m in (l.get("measurements") or []))
print(f"{' '.join(words)} | [{lo}, {hi}] | {'within 5 %' if within else 'NOT within 5 %'} | "
      f"{search.get('levels_used')} levels ({search.get('measurements')}) | {requests} requests | "
      f"{sys.argv[2]} s | {'ok' if within and (search.get('levels_used') or 99) <= 10 else 'miss'}")
PY
)
  echo "run $i: $line"
  case "$line" in *"| ok") good=$((good + 1));; esac
done
echo "$good of $runs runs within 5 % in at most 10 levels"
