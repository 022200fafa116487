//! The warmup's answer lengths, spread so the level starts at its steady phases.
//!
//! A warmup of one round whose requests all ask for the same answer ends in a wave: on a
//! server where every request decodes alike (the plain simulator, or any batch of equal
//! lengths under `ignore_eos`) its requests end within the spread of their prefills, the
//! level's workers take their places at once, and the level's first rounds arrive together
//! as a cold start's do (the plain simulator at c=256 read a TTFT p95 of 150 ms in every
//! 1,024-request level against 106 ms over ten times as many). In a level that has run a
//! long time the requests in flight are at every age. So the first round of the warmup asks
//! for shorter answers in turn: the `k`-th of a round of `r` asks for `(r - k) / r` of its
//! answer (rounded up, at least one token). The first sent, prefilled first, decodes the
//! whole answer; the last sent, prefilled last, ends soon after its prefill. Their ends, and
//! so the level's starts, spread over one request's time, as in a level at its steady state,
//! and none comes before the warmup's own prefills have been queued. The prompts are not
//! changed; the warmup's later rounds (`--warmup N` above the concurrency) keep their lengths.

use crate::workload::Prompt;

/// Shortens the answers of the first round (`concurrency` requests, or all of a smaller
/// warmup) as above. Prompts whose turns are built later (`max_tokens` 0) are left alone.
pub(super) fn spread(prompts: &mut [Prompt], concurrency: u32) {
    let round = prompts.len().min(concurrency as usize) as u64;
    for (k, p) in prompts.iter_mut().take(round as usize).enumerate() {
        if p.max_tokens == 0 {
            continue;
        }
        let share = (u64::from(p.max_tokens) * (round - k as u64)).div_ceil(round);
        p.max_tokens = share.max(1) as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(lengths: &[u32], concurrency: u32) -> Vec<u32> {
        let mut prompts: Vec<Prompt> = lengths
            .iter()
            .map(|&m| Prompt {
                max_tokens: m,
                ..Prompt::turn_placeholder()
            })
            .collect();
        spread(&mut prompts, concurrency);
        prompts.iter().map(|p| p.max_tokens).collect()
    }

    #[test]
    fn the_first_round_asks_for_shorter_answers_in_turn() {
        let cases: &[(&[u32], u32, &[u32])] = &[
            // a round of four: 4/4, 3/4, 2/4, 1/4 of 256
            (&[256; 4], 4, &[256, 192, 128, 64]),
            // rounded up, never below one token
            (&[3; 4], 4, &[3, 3, 2, 1]),
            (&[1; 3], 3, &[1, 1, 1]),
            // a warmup above the concurrency: the later rounds keep their lengths
            (&[8; 5], 2, &[8, 4, 8, 8, 8]),
            // a warmup below the concurrency spreads over its own size
            (&[100; 2], 8, &[100, 50]),
            // each request's own length (a dataset's answers differ)
            (&[10, 40, 90], 3, &[10, 27, 30]),
            // turns built later are left alone
            (&[0, 0], 2, &[0, 0]),
            (&[], 4, &[]),
        ];
        for (lengths, c, want) in cases {
            assert_eq!(asked(lengths, *c), *want, "{lengths:?} at c={c}");
        }
    }
}
