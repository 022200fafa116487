//! Whether a closed-loop level's TTFT tail is its start: a cold level (`--warmup 0`; levels
//! start warm by default) sends its first round (one request per stream) at once, and the
//! server queues their prefills, so on a short level those requests can hold most of the
//! values above the p95. Said once per level, with what would fix it (a round of warmup,
//! which the level takes over from stream by stream), since no interval from the level's own
//! values can see it.

use crate::record::RequestRecord;

/// The TTFTs (ms) of a level's first round: its requests numbered below the concurrency.
#[derive(Debug, Default)]
pub struct FirstRound {
    concurrency: u64,
    ttfts_ms: Vec<f64>,
}

impl FirstRound {
    pub fn new(concurrency: u32) -> Self {
        FirstRound {
            concurrency: u64::from(concurrency),
            ttfts_ms: Vec::new(),
        }
    }

    /// Keeps `rec`'s TTFT if it is a measured request of the first round.
    pub fn add(&mut self, rec: &RequestRecord) {
        if rec.counted() && rec.index < self.concurrency {
            if let Some(t) = rec.ttft_ns() {
                self.ttfts_ms.push(t as f64 / 1e6);
            }
        }
    }

    /// The note, when the first round holds at least half (and two or more) of the about 5 %
    /// of the level's `ok` TTFTs above its p95 (`p95_ms`).
    pub fn note(&self, p95_ms: f64, ok: u64) -> Option<String> {
        let above_all = (ok as f64 * 0.05).round() as usize;
        let above_first = self.ttfts_ms.iter().filter(|t| **t > p95_ms).count();
        if above_first < 2 || (above_first as f64) < 0.5 * above_all as f64 {
            return None;
        }
        let c = self.concurrency;
        Some(format!(
            "{above_first} of the about {above_all} TTFTs above its p95 ({p95_ms:.1} ms) are its \
             first round's, the {c} requests sent at once: the percentile measures the level's \
             start more than its load; a round of warmup, the default (--warmup {c}), lets the \
             level begin on a loaded server"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(c: u32, ttfts: &[f64]) -> FirstRound {
        FirstRound {
            concurrency: u64::from(c),
            ttfts_ms: ttfts.to_vec(),
        }
    }

    #[test]
    fn said_when_the_first_round_holds_the_tail() {
        // 1,024 requests: about 51 above the p95 of 23 ms
        let many: Vec<f64> = (0..128).map(|i| if i < 40 { 50.0 } else { 10.0 }).collect();
        let cases = [
            // (first-round TTFTs, p95, ok, said)
            (many.clone(), 23.0, 1024, Some(40)),
            // 26 of 51: still half
            (
                (0..128).map(|i| if i < 26 { 50.0 } else { 10.0 }).collect(),
                23.0,
                1024,
                Some(26),
            ),
            (
                (0..128).map(|i| if i < 25 { 50.0 } else { 10.0 }).collect(),
                23.0,
                1024,
                None,
            ),
            // a long level dilutes the start: 40 of about 410
            (many, 23.0, 8192, None),
            // one value is not a pattern
            (vec![50.0, 1.0], 23.0, 20, None),
        ];
        for (ttfts, p95, ok, said) in cases {
            let n = round(128, &ttfts).note(p95, ok);
            assert_eq!(
                n.as_deref()
                    .map(|t| t.split(' ').next().unwrap().parse::<usize>().unwrap()),
                said,
                "{n:?}"
            );
        }
        assert_eq!(
            round(128, &[50.0; 40]).note(23.0, 1024).unwrap(),
            "40 of the about 51 TTFTs above its p95 (23.0 ms) are its first round's, the 128 \
             requests sent at once: the percentile measures the level's start more than its \
             load; a round of warmup, the default (--warmup 128), lets the level begin on a \
             loaded server"
        );
    }
}
