#!/usr/bin/env python3
"""One process against four local workers on one simulator (docs/distributed.md).

Starts `rightsize sim` (seeded, no noise: fixed latencies) in its own process, runs the same
closed-loop level once in one process at concurrency C and once with `--workers 4` (C/4 each),
and prints throughput, TTFT p50, achieved concurrency and the CPU time the controller and the
workers used, from the level files.

    cargo build --release
    python3 benches/distributed.py [--bin target/release/rightsize] [--concurrency 1024]
        [--requests 4096] [--time-scale 1] [--output-tokens 128]
"""
import argparse
import glob
import json
import os
import subprocess
import tempfile


def level(out):
    runs = glob.glob(os.path.join(out, "*", "level-*.json"))
    assert len(runs) == 1, runs
    return json.load(open(runs[0]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/rightsize")
    ap.add_argument("--concurrency", type=int, default=1024)
    ap.add_argument("--requests", type=int, default=4096)
    ap.add_argument("--time-scale", default="1")
    ap.add_argument("--input-tokens", default="128")
    ap.add_argument("--output-tokens", default="128")
    ap.add_argument("--workers", type=int, default=4)
    a = ap.parse_args()
    rows = []
    for workers in [None, a.workers]:
        # a fresh simulator for each run: the same state (an empty prefix cache) for both
        sim = subprocess.Popen(
            [a.bin, "sim", "--port", "0", "--time-scale", a.time_scale,
             "--max-num-seqs", "2048"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            url = sim.stdout.readline().strip()
            out = tempfile.mkdtemp(prefix="rightsize-dist-bench-")
            cmd = [a.bin, "sweep", "-e", url, "-c", str(a.concurrency), "-n", str(a.requests),
                   "--input-tokens", a.input_tokens, "--output-tokens", a.output_tokens,
                   "--seed", "7", "--no-tui", "--json", "--telemetry-interval", "0",
                   "--out", out]
            if workers:
                cmd += ["--workers", str(workers), "--worker-backend", "local"]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            rows.append((workers, level(out)))
        finally:
            sim.kill()
            sim.wait()
    print(f"level: concurrency {a.concurrency}, {a.requests} requests, "
          f"{a.input_tokens}/{a.output_tokens} tokens, simulator time scale {a.time_scale}")
    print(f"{'run':<22} {'out tok/s':>10} {'steady tok/s':>12} {'ttft p50 ms':>11} "
          f"{'achieved':>9} {'ctrl cpu s':>10} {'workers cpu s':>13}")
    base = None
    for workers, l in rows:
        tps = l["output_token_throughput"]["avg"]
        steady = (l.get("output_token_throughput_steady") or {}).get("avg", float("nan"))
        ttft = l["time_to_first_token"]["p50"]
        w = l.get("workers") or {}
        ctrl = w.get("controller_cpu_s", float("nan"))
        wcpu = sum(s["cpu_s"] for s in w.get("shares", [])) if w else float("nan")
        name = f"{workers} workers x {a.concurrency // workers}" if workers else "one process"
        print(f"{name:<22} {tps:>10.0f} {steady:>12.0f} {ttft:>11.1f} "
              f"{l['achieved_concurrency']:>9.1f} {ctrl:>10.2f} {wcpu:>13.2f}")
        if base is None:
            base = (tps, ttft)
        else:
            print(f"difference: throughput {100 * (tps / base[0] - 1):+.1f} %, "
                  f"TTFT p50 {100 * (ttft / base[1] - 1):+.1f} %; "
                  f"controller CPU {100 * ctrl / wcpu:.1f} % of the workers'")


if __name__ == "__main__":
    main()
