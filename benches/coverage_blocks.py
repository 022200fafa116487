#!/usr/bin/env python3
"""How long a mean's blocks must be (docs/search.md, "Why a mean's blocks hold three rounds"):
reads the requests of many short levels and one long level of the coverage benchmark's setup
and prints, for several ways to cut a level into blocks, how often the mean ITL's 95 %
interval contains the long level's value, with the median width; then how the rounds' means
correlate within a level (the server's memory, in rounds).

Collect the levels first (release build; about ten minutes for 200):

    B=target/release/rightsize; D=/tmp/blocks; mkdir -p $D
    $B sim --port 0 --noise 0.3 --noise-period-ms 2000 --time-scale 4 --seed 25 > $D/sim &
    sleep 1; URL=$(grep -o 'http://[0-9.:]*/v1' $D/sim)
    run() { $B sweep -e $URL --input-tokens 64 --output-tokens 32 --output-stddev 8 \\
        --no-calibrate --seed $2 -c 128 -n $3 --no-tui --out $D/$1 > /dev/null; }
    for i in $(seq 1 200); do run s$i $i 1024; done; run long 0 40960; kill %1
    python3 benches/coverage_blocks.py $D

Standard library only. A request's ITL is (last token - first token) / (tokens - 1), as the
tool's; cooldown requests and failures are left out, as the tool leaves them out.
"""
import glob
import json
import math
import statistics as st
import sys

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def itls(directory):
    """The level's per-request mean ITL in ms, in the order the requests started."""
    rows = []
    for line in open(glob.glob(f"{directory}/*/requests.jsonl")[0]):
        r = json.loads(line)
        n = r.get("output_tokens") or 0
        if r.get("cooldown") or r.get("error") or r.get("first_token_ns") is None or n < 2:
            continue
        if r.get("last_token_ns") is None:
            continue
        rows.append((r["start_ns"], (r["last_token_ns"] - r["first_token_ns"]) / (n - 1) / 1e6))
    rows.sort()
    return [v for _, v in rows]


def block_means(values, blocks):
    n = len(values)
    cuts = [b * n // blocks for b in range(blocks + 1)]
    return [st.mean(values[a:e]) for a, e in zip(cuts, cuts[1:])]


def bm(values, blocks):
    """Batch-means variance of the level's mean over `blocks` blocks."""
    return st.variance(block_means(values, blocks)) / blocks


def half_widths(values):
    """Candidate 95 % half-widths, each floored at the independent one."""
    iid = st.variance(values) / len(values)
    return {
        "4 blocks (two rounds)": T975[3] * math.sqrt(max(bm(values, 4), iid)),
        "3 blocks (three rounds)": T975[2] * math.sqrt(max(bm(values, 3), iid)),
        "8 blocks (one round)": T975[7] * math.sqrt(max(bm(values, 8), iid)),
        "lugsail 4 on 12, floored": T975[3]
        * math.sqrt(max(2 * bm(values, 4) - bm(values, 12), bm(values, 4), iid)),
    }


def main(root):
    long_mean = st.mean(itls(f"{root}/long"))
    shorts = sorted(glob.glob(f"{root}/s*/"), key=lambda p: int(p.rstrip("/").rsplit("s", 1)[1]))
    levels = [itls(s.rstrip("/")) for s in shorts]
    means = [st.mean(v) for v in levels]
    print(f"long level {long_mean:.3f} ms; {len(levels)} short levels, "
          f"mean {st.mean(means):.3f} ms, sd {st.stdev(means):.3f} ms")
    widths = [half_widths(v) for v in levels]
    for name in widths[0]:
        hw = [w[name] for w in widths]
        hits = sum(abs(m - long_mean) <= h for m, h in zip(means, hw))
        print(f"  {name:<26} coverage {100 * hits / len(hw):5.1f} %   "
              f"median width {2 * st.median(hw):.2f} ms")
    rounds = [block_means(v, 8) for v in levels]
    for lag in (1, 2, 3, 4):
        corr = []
        for i in range(8 - lag):
            a, b = [r[i] for r in rounds], [r[i + lag] for r in rounds]
            corr.append(st.correlation(a, b))
        print(f"  round means {lag} apart correlate {st.mean(corr):.2f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/blocks")
