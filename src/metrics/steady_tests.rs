//! The folded window against the same definitions computed over every request kept whole.

use super::*;
use crate::rng::SplitMix64;

/// A request as the reference keeps it: its worker, its send, its span.
type Whole = (u32, u64, Span);

fn overlap(a: u64, b: u64, lo: u64, hi: u64) -> u64 {
    b.min(hi).saturating_sub(a.max(lo))
}

/// The definitions of the module docs over every request, as the accumulator computed them
/// before the tally folded them.
fn reference(k: usize, all: &[Whole]) -> Option<(Window, After)> {
    let mut last: HashMap<u32, (u64, u64)> = HashMap::new();
    for (w, sent, s) in all {
        let e = last.entry(*w).or_insert((*sent, s.end_ns));
        if *sent >= e.0 {
            *e = (*sent, s.end_ns);
        }
    }
    if k == 0 || all.len() < k || last.len() < k {
        return None;
    }
    let mut starts: Vec<u64> = all.iter().map(|(_, _, s)| s.start_ns).collect();
    starts.sort_unstable();
    let (ws, we) = (starts[k - 1], last.values().map(|(_, e)| *e).min()?);
    if we <= ws {
        return None;
    }
    let tokens = all
        .iter()
        .filter_map(|(_, _, s)| s.tokens)
        .map(|(n, a, b)| {
            if b > a {
                f64::from(n) * overlap(a, b, ws, we) as f64 / (b - a) as f64
            } else if (ws..we).contains(&a) {
                f64::from(n)
            } else {
                0.0
            }
        })
        .sum();
    let busy: u128 = all
        .iter()
        .map(|(_, _, s)| u128::from(overlap(s.start_ns, s.end_ns, ws, we)))
        .sum();
    let mut after = After::default();
    for (_, _, s) in all.iter().filter(|(_, _, s)| s.start_ns > ws) {
        after.requests += 1;
        after.tokens += s.tokens.map_or(0, |t| u64::from(t.0));
        after.busy_ns += u128::from(s.end_ns - s.start_ns);
    }
    let window = Window {
        start_ns: ws,
        end_ns: we,
        tokens,
        in_flight: busy as f64 / (we - ws) as f64,
    };
    Some((window, after))
}

fn fold(k: usize, all: &[Whole]) -> SteadyTally {
    let mut t = SteadyTally::new(k as u32);
    for (w, sent, s) in all {
        t.add(*w, *sent, *s);
    }
    t
}

fn assert_same(k: usize, all: &[Whole], what: &str) {
    let t = fold(k, all);
    let want = reference(k, all);
    let got = t.window().map(|w| (w, t.after(w.start_ns)));
    match (got, want) {
        (None, None) => {}
        (Some((g, ga)), Some((r, ra))) => {
            assert_eq!((g.start_ns, g.end_ns), (r.start_ns, r.end_ns), "{what}");
            assert!(
                (g.tokens - r.tokens).abs() <= 1e-9 * r.tokens.max(1.0),
                "{what}: tokens {} vs {}",
                g.tokens,
                r.tokens
            );
            assert!(
                (g.in_flight - r.in_flight).abs() <= 1e-12 * r.in_flight.max(1.0),
                "{what}: in flight {} vs {}",
                g.in_flight,
                r.in_flight
            );
            assert_eq!(ga, ra, "{what}");
        }
        (g, r) => panic!("{what}: folded {g:?}, reference {r:?}"),
    }
}

/// A closed loop: `k` workers sharing `k * per_worker` requests, each taking the next one
/// when its previous one ends (after a think now and then), a failure now and then, a
/// non-streamed answer now and then; in the order they end.
fn closed_loop(rng: &mut SplitMix64, k: u32, per_worker: u32) -> Vec<Whole> {
    let mut free: Vec<u64> = (0..k).map(|_| rng.below(50)).collect();
    let mut all = Vec::new();
    for _ in 0..k * per_worker {
        let w = (0..k as usize).min_by_key(|w| free[*w]).unwrap_or(0);
        let t = free[w];
        let think = if rng.below(4) == 0 { rng.below(30) } else { 0 };
        let sent = t + think;
        let end = sent + 1 + rng.below(200);
        let tokens = match rng.below(10) {
            0 => None,
            1 => Some((1 + rng.below(9) as u32, end, end)),
            _ => {
                let first = sent + rng.below(end - sent);
                Some((1 + rng.below(300) as u32, first, end))
            }
        };
        let span = Span {
            start_ns: t,
            end_ns: end,
            tokens,
        };
        all.push((w as u32, sent, span));
        free[w] = end;
    }
    all.sort_by_key(|(_, _, s)| s.end_ns);
    all
}

#[test]
fn folded_closed_loops_match_the_reference() {
    let mut rng = SplitMix64::new(7);
    for case in 0..300 {
        let k = 1 + rng.below(12) as u32;
        let per = rng.below(60) as u32;
        let all = closed_loop(&mut rng, k, per);
        assert_same(k as usize, &all, &format!("case {case}: k {k}, {per} each"));
    }
}

/// Requests in any order, overlapping on one worker, ending when they were sent: the
/// definitions hold for records no engine makes too.
#[test]
fn folded_arbitrary_records_match_the_reference() {
    let mut rng = SplitMix64::new(11);
    for case in 0..300 {
        let k = 1 + rng.below(6) as usize;
        let n = rng.below(3000) as usize;
        let workers = k as u64;
        let all: Vec<Whole> = (0..n)
            .map(|_| {
                let start = rng.below(1000);
                let end = start + rng.below(100);
                let tokens = match rng.below(3) {
                    0 => None,
                    1 => Some((rng.below(5) as u32, start + rng.below(3), end)),
                    _ => Some((7, end, end)),
                };
                let sent = start + rng.below(5);
                let span = Span {
                    start_ns: start,
                    end_ns: end.max(sent),
                    tokens: tokens.map(|(n, a, b)| (n, a.min(b), b)),
                };
                (rng.below(workers) as u32, sent, span)
            })
            .collect();
        assert_same(k, &all, &format!("case {case}: k {k}, {n} records"));
    }
}

#[test]
fn a_long_closed_loop_holds_about_a_round_not_every_request() {
    let mut rng = SplitMix64::new(3);
    let all = closed_loop(&mut rng, 64, 2000);
    let t = fold(64, &all);
    assert_eq!(t.count(), 128_000);
    // of 128,000: the 64 earliest, and the late ones, which between two prunings grow to
    // twice what the last one kept (a few rounds of 64) plus 1,024
    assert!(
        t.held() < 64 + 2 * 4 * 64 + PRUNE_AFTER,
        "held {}",
        t.held()
    );
    assert_same(64, &all, "long");
}

#[test]
fn hand_made_window() {
    // two workers fully busy from 0; worker 1's last request ends first, at 1.5 s
    let ms = 1_000_000;
    let span = |s: u64, a: u64, b: u64, n: u32| Span {
        start_ns: s * ms,
        end_ns: b * ms,
        tokens: (n > 0).then_some((n, a * ms, b * ms)),
    };
    let all = vec![
        (0, 0, span(0, 100, 1000, 11)),
        (1, 0, span(0, 300, 1000, 11)),
        (0, 1000 * ms, span(1000, 1200, 2000, 11)),
        (1, 1000 * ms, span(1000, 1000, 1500, 0)),
    ];
    let t = fold(2, &all);
    let w = t.window().unwrap();
    assert_eq!((w.start_ns, w.end_ns), (0, 1500 * ms));
    // 11 + 11 whole, and 11 x 300 / 800 of the third
    assert!((w.tokens - 26.125).abs() < 1e-12);
    assert_eq!(w.in_flight, 2.0);
    assert_eq!(
        t.after(0),
        After {
            requests: 2,
            tokens: 11,
            busy_ns: 1500 * u128::from(ms)
        }
    );
    assert_eq!(SteadyTally::new(0).window(), None);
    assert_eq!(fold(3, &all).window(), None, "three slots, two workers");
}

#[test]
fn a_worker_outside_the_slots_keeps_everything_or_leaves_no_window() {
    let mut rng = SplitMix64::new(5);
    let mut all = closed_loop(&mut rng, 4, 800);
    // first: nothing was let go yet, so the window is still exact
    let (_, sent, span) = all[0];
    let outside = Span {
        end_ns: span.end_ns + 1,
        ..span
    };
    all.insert(0, (9, sent, outside));
    assert_same(4, &all, "outside worker first");
    assert!(fold(4, &all).window().is_some());
    // last: spans were let go on the bound, which the outside worker did not respect
    let outside = all.remove(0);
    all.push(outside);
    assert_eq!(fold(4, &all).window(), None);
}
