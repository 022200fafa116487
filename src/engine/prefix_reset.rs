//! The server's prefix cache before each level (`--prefix-cache`): kept, or emptied through
//! the server's own endpoint (`endpoint::cache_reset`) before the level, its warm-up and its
//! telemetry window, so the level's prefix-cache hit rate is the one after the reset. The
//! run's levels call it (`levels`), in the one process that runs them: a distributed run's
//! controller resets once per level, its workers never.
//!
//! The call is chosen once, by the naming scheme of the server's `/metrics` (read once; else
//! the `owned_by` of its models, as pre-flight read them) or the URL the user gave. A reset
//! that is refused (vLLM outside its development mode, a 404, a connection error) or that
//! the server has none of is said once, naming the server setting, and the run goes on with
//! the cache kept; each level file says which ([`PrefixCacheState`]).

use super::events::EngineEvent;
use crate::endpoint::cache_reset::{reset_call, reset_prefix_cache, scheme_of_owner, ResetCall};
use crate::endpoint::Endpoint;
use crate::record::{PrefixCachePolicy, PrefixCacheState};
use tokio::sync::mpsc;

/// The run's prefix-cache policy and how far it got.
#[derive(Debug, Default)]
pub(super) struct PrefixReset {
    policy: PrefixCachePolicy,
    /// `--prefix-cache-reset-url`.
    url: Option<String>,
    /// The `owned_by` of the server's models (pre-flight): its scheme when its `/metrics`
    /// says none.
    owned_by: Option<String>,
    /// The call, once chosen.
    call: Option<ResetCall>,
    /// A reset refused or not served: said once, and every level after keeps the cache.
    gave_up: Option<PrefixCacheState>,
}

impl PrefixReset {
    pub fn new(policy: PrefixCachePolicy, url: Option<String>, owned_by: Option<String>) -> Self {
        PrefixReset {
            policy,
            url,
            owned_by,
            ..PrefixReset::default()
        }
    }

    /// Before level `index` (0-based) begins: the cache kept, or emptied; what the level
    /// began with. The first refusal is said (a warning event), once.
    pub async fn before_level(
        &mut self,
        endpoint: &Endpoint,
        events: &mpsc::Sender<EngineEvent>,
        index: u32,
    ) -> PrefixCacheState {
        if self.policy == PrefixCachePolicy::Keep {
            return PrefixCacheState::Keep;
        }
        if let Some(state) = self.gave_up {
            return state;
        }
        let client = endpoint.control_client();
        let call = match self.call.clone() {
            Some(call) => Ok(call),
            None => self.choose(endpoint).await,
        };
        let (state, why) = match call {
            Err(why) => (PrefixCacheState::ResetUnsupported, why),
            Ok(call) => {
                self.call = Some(call.clone());
                match reset_prefix_cache(&client, &call).await {
                    Ok(_) => return PrefixCacheState::Reset,
                    Err(why) => (PrefixCacheState::ResetRefused, why),
                }
            }
        };
        self.gave_up = Some(state);
        let _ = events
            .send(EngineEvent::Warning(gave_up_note(state, &why, index)))
            .await;
        state
    }

    /// The call: the user's URL, else the one the server's scheme serves (its `/metrics`
    /// read once, else the owner of its models; a SageMaker endpoint has none).
    async fn choose(&self, endpoint: &Endpoint) -> Result<ResetCall, String> {
        let base = &endpoint.spec().base_url;
        if self.url.is_none() && endpoint.is_sagemaker() {
            return Err("a SageMaker endpoint has no prefix-cache reset rightsize can call".into());
        }
        let scheme = match &self.url {
            Some(_) => None,
            None => crate::telemetry::scrape::server_scheme(&endpoint.control_client(), base)
                .await
                .or_else(|| self.owned_by.as_deref().and_then(scheme_of_owner)),
        };
        reset_call(scheme, base, self.url.as_deref())
    }
}

/// The one note of a reset not done: what happened, what to change, and that the run goes
/// on with the cache kept.
fn gave_up_note(state: PrefixCacheState, why: &str, index: u32) -> String {
    let (what, said) = match state {
        PrefixCacheState::ResetUnsupported => (
            "cannot be reset",
            "reset_unsupported; --prefix-cache-reset-url URL names a POST that empties it",
        ),
        _ => ("reset was refused", "reset_refused"),
    };
    format!(
        "--prefix-cache reset: the server's prefix cache {what} before level {}: {why}. The \
         run goes on with the cache kept between levels (level files say {said})",
        index + 1
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_says_what_and_how_the_run_goes_on() {
        assert_eq!(
            gave_up_note(
                PrefixCacheState::ResetRefused,
                "POST http://h/reset_prefix_cache answered 404 Not Found; vLLM needs X",
                0
            ),
            "--prefix-cache reset: the server's prefix cache reset was refused before level 1: \
             POST http://h/reset_prefix_cache answered 404 Not Found; vLLM needs X. The run \
             goes on with the cache kept between levels (level files say reset_refused)"
        );
        assert_eq!(
            gave_up_note(PrefixCacheState::ResetUnsupported, "TGI has none", 2),
            "--prefix-cache reset: the server's prefix cache cannot be reset before level 3: \
             TGI has none. The run goes on with the cache kept between levels (level files \
             say reset_unsupported; --prefix-cache-reset-url URL names a POST that empties it)"
        );
    }
}
