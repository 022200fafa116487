//! The server's prefix cache between levels: what a run asks (`--prefix-cache keep|reset`,
//! [`PrefixCachePolicy`]) and what each level file says it began with
//! ([`PrefixCacheState`], its `prefix_cache`). The engine does the reset, the endpoint makes
//! the call, the config reads the flag and the file, and a level summary carries the
//! outcome: it lives here because none of them imports another to get it.

use serde::{Deserialize, Serialize};

/// What the run asks of the server's prefix cache before each level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrefixCachePolicy {
    /// Leave it: a level begins with what the levels before it cached.
    #[default]
    Keep,
    /// Empty it before every level (and before the level's warm-up).
    Reset,
}

impl PrefixCachePolicy {
    /// `keep` or `reset`, as the flag and the config file spell it.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s.trim() {
            "keep" => Ok(PrefixCachePolicy::Keep),
            "reset" => Ok(PrefixCachePolicy::Reset),
            other => Err(format!(
                "`{other}` is no prefix-cache policy; use keep (what the levels before \
                 cached stays) or reset (emptied before every level)"
            )),
        }
    }
}

/// What a level began with, as its file says (`prefix_cache`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrefixCacheState {
    /// The cache was left as the levels before left it (`--prefix-cache keep`).
    Keep,
    /// The server emptied its cache before the level (and before its warm-up).
    Reset,
    /// A reset was asked but the server refused it (or could not be reached): the cache was
    /// kept, as with `keep`.
    ResetRefused,
    /// A reset was asked but the server has no reset rightsize knows (TGI, or no known
    /// metrics and no `--prefix-cache-reset-url`): the cache was kept.
    ResetUnsupported,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_and_states_as_spelled() {
        assert_eq!(
            PrefixCachePolicy::parse("keep"),
            Ok(PrefixCachePolicy::Keep)
        );
        assert_eq!(
            PrefixCachePolicy::parse(" reset "),
            Ok(PrefixCachePolicy::Reset)
        );
        assert!(PrefixCachePolicy::parse("flush")
            .unwrap_err()
            .contains("keep"));
        let words: Vec<String> = [
            PrefixCacheState::Keep,
            PrefixCacheState::Reset,
            PrefixCacheState::ResetRefused,
            PrefixCacheState::ResetUnsupported,
        ]
        .iter()
        .map(|s| serde_json::to_string(s).unwrap())
        .collect();
        assert_eq!(
            words,
            [
                "\"keep\"",
                "\"reset\"",
                "\"reset_refused\"",
                "\"reset_unsupported\""
            ]
        );
    }
}
