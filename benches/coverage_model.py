#!/usr/bin/env python3
"""An idealised model of the coverage benchmark's hard case (docs/search.md, "Why a mean's
blocks hold three rounds"): how often a 95 % interval for a level's mean contains the true mean
when the server's speed is a lognormal factor (sigma 0.3) redrawn every P seconds at a random
phase and the level lasts L seconds, cut into eight rounds.

Methods: batch means on four blocks of two rounds with Student's t (what rightsize did for a
mean until 2026-12-05, and does for a percentile's share), the same with three blocks (what it
does for a mean now), with the blocks' variance raised by their lag-1 correlation (estimated
from the rounds, as AR(1)), the larger of the one-round and two-round estimates, and a
Newey-West estimate over the rounds (bandwidth 2). Prints coverage and median half-width.

    python3 benches/coverage_model.py   # about ten seconds; standard library only
"""
import math
import random
import statistics as st

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365}
SIGMA = 0.3
ROUNDS = 8
TRIALS = 20000


def round_means(length, period):
    """The time-averaged speed factor over each of ROUNDS equal rounds, plus request jitter."""
    offset = random.random() * period
    edges = [0.0]
    x = period - offset
    while x < length:
        edges.append(x)
        x += period
    edges.append(length)
    factors = [math.exp(SIGMA * random.gauss(0, 1)) for _ in range(len(edges) - 1)]

    def average(a, b):
        total = 0.0
        for i, f in enumerate(factors):
            lo, hi = max(a, edges[i]), min(b, edges[i + 1])
            if hi > lo:
                total += f * (hi - lo)
        return total / (b - a)

    step = length / ROUNDS
    return [average(k * step, (k + 1) * step) + random.gauss(0, 0.03) for k in range(ROUNDS)]


def lag1(x):
    m = sum(x) / len(x)
    d = [v - m for v in x]
    return sum(d[i] * d[i + 1] for i in range(len(d) - 1)) / sum(v * v for v in d)


def half_widths(r):
    m = sum(r) / len(r)
    four = [(r[2 * i] + r[2 * i + 1]) / 2 for i in range(4)]
    three = [sum(r[0:3]) / 3, sum(r[3:5]) / 2, sum(r[5:8]) / 3]
    three_mean = (3 * three[0] + 2 * three[1] + 3 * three[2]) / 8
    out = {}
    out["four blocks (rightsize)"] = T975[3] * math.sqrt(st.variance(four) / 4)
    out["three blocks"] = T975[2] * math.sqrt(st.variance(three) / 3)
    rho = max(0.0, lag1(r)) ** 2
    out["four, lag-1 adjusted"] = T975[3] * math.sqrt(
        st.variance(four) / 4 * (1 + rho) / max(1e-9, 1 - rho)
    )
    out["max(one round, two)"] = max(
        out["four blocks (rightsize)"], T975[7] * math.sqrt(st.variance(r) / ROUNDS)
    )
    g = [sum((r[i] - m) * (r[i + k] - m) for i in range(ROUNDS - k)) / ROUNDS for k in range(3)]
    nw = (g[0] + 2 * (2 / 3 * g[1] + 1 / 3 * g[2])) / ROUNDS
    out["Newey-West over rounds"] = T975[3] * math.sqrt(max(nw, 0.0))
    return m, three_mean, out


def coverage(length, period):
    truth = math.exp(SIGMA * SIGMA / 2)
    hits, widths = {}, {}
    for _ in range(TRIALS):
        m, m3, hw = half_widths(round_means(length, period))
        for name, h in hw.items():
            centre = m3 if name == "three blocks" else m
            hits[name] = hits.get(name, 0) + (abs(centre - truth) <= h)
            widths.setdefault(name, []).append(h)
    return {n: (hits[n] / TRIALS, st.median(widths[n])) for n in hits}


if __name__ == "__main__":
    random.seed(25)
    for period in (0.25, 1.0, 2.0, 4.0):
        print(f"level 8.7 s, speed redrawn every {period} s:")
        for name, (c, w) in coverage(8.7, period).items():
            print(f"  {name:<26} coverage {100 * c:5.1f} %   median half-width {w:.3f}")
