//! How many warmup requests a closed-loop level sends before it is measured (`--warmup`,
//! a plan's or the file's `warmup`). Unset means one round: the level's concurrency in
//! requests, so every level begins on a loaded server (`docs/search.md`, "The level's start,
//! and the warmup"). This is the one place that default is decided.

use serde::{Serialize, Serializer};

/// A run's warmup per closed-loop level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Warmup {
    /// One round: as many requests as the level's concurrency (the default).
    #[default]
    Round,
    /// A fixed count per level (`--warmup N`); 0 is a cold start.
    Requests(u32),
}

impl Warmup {
    /// The warmup as given (`--warmup`, else the plan's or the file's `warmup`): unset is
    /// one round.
    pub fn given(count: Option<u32>) -> Warmup {
        count.map_or(Warmup::Round, Warmup::Requests)
    }

    /// Warmup requests before a level of `concurrency` streams.
    pub fn requests(self, concurrency: u32) -> u32 {
        match self {
            Warmup::Round => concurrency,
            Warmup::Requests(n) => n,
        }
    }

    /// The count given with `--warmup`, if one was (not the default).
    pub fn explicit(self) -> Option<u32> {
        match self {
            Warmup::Round => None,
            Warmup::Requests(n) => Some(n),
        }
    }
}

/// In `run.json`: the count given, or `"round"` for the default.
impl Serialize for Warmup {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Warmup::Round => s.serialize_str("round"),
            Warmup::Requests(n) => s.serialize_u32(*n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_is_one_round_and_a_count_is_kept() {
        assert_eq!(Warmup::given(None).requests(256), 256);
        assert_eq!(Warmup::given(Some(0)).requests(256), 0);
        assert_eq!(Warmup::given(Some(100)).requests(256), 100);
        assert_eq!(serde_json::to_string(&Warmup::Round).unwrap(), "\"round\"");
        assert_eq!(serde_json::to_string(&Warmup::Requests(0)).unwrap(), "0");
    }
}
