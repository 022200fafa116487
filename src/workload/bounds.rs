//! The largest counts and sizes a run accepts, checked before any work: a level's prompts
//! are made before it runs (a closed-loop batch) or a few thousand ahead of the sends (an
//! open-loop level), and its send times are held for the level, so a count is bounded by
//! what the machine can hold. A value past a bound is refused naming the flag and the
//! largest value accepted; nothing is allocated first.

use std::time::Duration;

/// The fewest tokens a drawn token count is clamped to.
pub const MIN_TOKENS: u32 = 1;
/// Largest input a synthetic prompt may have (tokens).
pub const MAX_INPUT_TOKENS: u32 = 1_000_000;
/// Largest output a request may ask for (tokens).
pub const MAX_OUTPUT_TOKENS: u32 = 1_000_000;
/// The most requests per level (`-n`, a plan's `requests`) and warmup requests per level.
pub const MAX_REQUESTS: u32 = 1_000_000;
/// The most requests one open-loop level may send (its rate times `--level-duration`, or a
/// schedule's): 80 MB of send times.
pub const MAX_LEVEL_REQUESTS: u64 = 10_000_000;
/// The share of the memory available now that one batch of prompts may take.
const MEMORY_SHARE: f64 = 0.5;

/// About how many bytes one prompt of `input_tokens` (mean, standard deviation) holds: its
/// text (about 5 bytes a token, 6 to be safe) and the struct around it.
pub fn prompt_bytes((mean, stddev): (u32, u32)) -> u64 {
    let tokens = u64::from(mean) + 3 * u64::from(stddev);
    96 + 6 * tokens
}

/// The most prompts of `bytes` each that fit in `available` bytes of memory (the share a
/// batch may take), never more than [`MAX_REQUESTS`].
pub fn most_prompts(bytes: u64, available: Option<u64>) -> u32 {
    let fit = available.map_or(u64::MAX, |a| {
        (a as f64 * MEMORY_SHARE) as u64 / bytes.max(1)
    });
    fit.min(u64::from(MAX_REQUESTS)) as u32
}

/// Checks a run's request and warmup counts against [`MAX_REQUESTS`] and the memory
/// available (`None`: unknown, only the fixed bound); `requests_from` names where the
/// request count came from (`-n`, or the plan's `request_count`); `input_tokens` is the
/// workload's (mean, standard deviation).
pub fn check_counts(
    requests: u32,
    requests_from: &str,
    warmup: u32,
    input_tokens: (u32, u32),
    available: Option<u64>,
) -> Result<(), String> {
    let bytes = prompt_bytes(input_tokens);
    let most = most_prompts(bytes, available);
    let why = |n: u32| {
        if most < MAX_REQUESTS {
            format!(
                "at most {most}: a level's prompts are made before it runs, about {} bytes each \
                 at {} input tokens, and {n} of them would not fit in half the memory \
                 available now",
                bytes, input_tokens.0
            )
        } else {
            format!("at most {most} per level")
        }
    };
    if requests > most {
        return Err(format!("{requests_from} {requests}: {}", why(requests)));
    }
    if warmup > most {
        return Err(format!("--warmup {warmup}: {}", why(warmup)));
    }
    Ok(())
}

/// Checks that a fixed-rate level of `rps` lasting `level_s` (`--level-duration`) sends at
/// most [`MAX_LEVEL_REQUESTS`]; a level whose request count is given (`requests`) is not
/// bounded by its duration.
pub fn check_rate_level(rps: f64, level_s: Duration, requests: Option<u32>) -> Result<(), String> {
    if requests.is_some() {
        return Ok(());
    }
    let n = rps * level_s.as_secs_f64();
    if n > MAX_LEVEL_REQUESTS as f64 {
        let most_s = MAX_LEVEL_REQUESTS as f64 / rps;
        return Err(format!(
            "a rate of {} req/s with --level-duration {}s would send {:.0} requests in one \
             level; at most {MAX_LEVEL_REQUESTS} (a --level-duration of at most {:.0}s at this \
             rate, or a lower rate)",
            crate::values::fmt_rps(rps),
            level_s.as_secs_f64(),
            n,
            most_s.floor()
        ));
    }
    Ok(())
}

/// The memory available now (bytes), where the platform says (Linux: `MemAvailable`).
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_past_the_bound_or_the_memory_are_refused_naming_the_flag() {
        let w = (512, 0);
        assert_eq!(prompt_bytes(w), 96 + 6 * 512);
        assert_eq!(check_counts(1024, "-n", 0, w, Some(8 << 30)), Ok(()));
        assert_eq!(
            check_counts(4_000_000_000, "-n", 0, w, None).unwrap_err(),
            "-n 4000000000: at most 1000000 per level"
        );
        // a count from the config is named as it is spelled there
        assert_eq!(
            check_counts(2_000_000, "the plan's request_count", 0, w, None).unwrap_err(),
            "the plan's request_count 2000000: at most 1000000 per level"
        );
        assert_eq!(
            check_counts(10, "-n", u32::MAX, w, None).unwrap_err(),
            "--warmup 4294967295: at most 1000000 per level"
        );
        // 1 GiB available, half of it for prompts of 3,168 bytes: 169,466
        assert_eq!(
            check_counts(200_000, "-n", 0, w, Some(1 << 30)).unwrap_err(),
            "-n 200000: at most 169466: a level's prompts are made before it runs, about 3168 \
             bytes each at 512 input tokens, and 200000 of them would not fit in half the \
             memory available now"
        );
    }

    #[test]
    fn a_rate_level_is_bounded_by_its_requests() {
        let secs = Duration::from_secs;
        assert_eq!(check_rate_level(20_000.0, secs(60), None), Ok(()));
        assert_eq!(
            check_rate_level(1_000_000.0, secs(3600), None).unwrap_err(),
            "a rate of 1000000 req/s with --level-duration 3600s would send 3600000000 \
             requests in one level; at most 10000000 (a --level-duration of at most 10s at \
             this rate, or a lower rate)"
        );
        assert_eq!(check_rate_level(1_000_000.0, secs(3600), Some(100)), Ok(()));
    }
}
