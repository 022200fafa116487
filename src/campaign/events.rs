//! What a running campaign tells its consumers (the dashboard's campaign view, the headless
//! printer, a served campaign's watchers): candidates' states, their engine events, the
//! ranking as it fills in, and how the campaign ended. Serialisable: a served campaign sends
//! them as they are, and a watcher folds them as the view does.

use super::campaign_file::CandidateState;
use super::rank::RankedRow;
use crate::engine::EngineEvent;
use serde::{Deserialize, Serialize};

/// One step of a campaign.
// An engine event's largest variant, a progress snapshot, sits just past clippy's line; a
// few go by a second, not worth a box each.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CampaignEvent {
    /// Candidate `index` (0-based) changed state; a failed one says why.
    State {
        index: usize,
        state: CandidateState,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// An event of the running candidate's search.
    Engine { index: usize, event: EngineEvent },
    /// The ranking over the candidates finished so far.
    Ranking(Vec<RankedRow>),
    /// The campaign ended: the last event of a campaign that was not cut short by a failure
    /// of its own (a results folder that cannot be written).
    Ended(CampaignEnd),
}

/// How a campaign ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CampaignEnd {
    /// Every candidate ran (some may have failed).
    Finished { failed: usize },
    /// Stopped by a signal (or a watcher's stop); `--resume` goes on from the cut candidate.
    Interrupted,
}

impl CampaignEnd {
    /// What the campaign view's status line says once it has ended.
    pub fn status_line(self) -> String {
        match self {
            CampaignEnd::Finished { failed: 0 } => "campaign finished".into(),
            CampaignEnd::Finished { failed } => {
                format!("campaign finished, {failed} candidate(s) failed")
            }
            CampaignEnd::Interrupted => {
                "stopped: finished candidates are kept (--resume goes on)".into()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_as_it_was_written() {
        let events = [
            CampaignEvent::State {
                index: 1,
                state: CandidateState::Running,
                error: None,
            },
            CampaignEvent::State {
                index: 1,
                state: CandidateState::Failed,
                error: Some("pre-flight: 404".into()),
            },
            CampaignEvent::Engine {
                index: 1,
                event: EngineEvent::Warning("w".into()),
            },
            CampaignEvent::Ranking(vec![]),
            CampaignEvent::Ended(CampaignEnd::Finished { failed: 1 }),
            CampaignEvent::Ended(CampaignEnd::Interrupted),
        ];
        let texts: Vec<String> = events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .collect();
        assert_eq!(
            texts,
            [
                r#"{"state":{"index":1,"state":"running"}}"#,
                r#"{"state":{"index":1,"state":"failed","error":"pre-flight: 404"}}"#,
                r#"{"engine":{"index":1,"event":{"warning":"w"}}}"#,
                r#"{"ranking":[]}"#,
                r#"{"ended":{"finished":{"failed":1}}}"#,
                r#"{"ended":"interrupted"}"#,
            ]
        );
        for t in &texts {
            let back: CampaignEvent = serde_json::from_str(t).unwrap();
            assert_eq!(&serde_json::to_string(&back).unwrap(), t);
        }
    }
}
