//! A campaign served over HTTP (`campaign --serve ADDR`, docs/watch.md): its events (each
//! candidate's state, its search's engine events, the ranking, the end) for `rightsize watch`,
//! and for Prometheus the running candidate's figures under the run's names, labelled with
//! the candidate, beside how many candidates are in each state.

use super::campaign_file::{CampaignRecord, CandidateState};
use super::events::CampaignEvent;
use super::runner::CampaignRun;
use crate::serve::log::{Logged, Snapshot};
use crate::serve::metrics_text::{campaign_candidates, render, RunLabels};
use crate::serve::{MetricsOf, ServeOptions, Served};
use crate::state::RunState;
use std::collections::BTreeMap;
use tokio_util::sync::CancellationToken;

/// What a served campaign's events fold into, for `/metrics`.
#[derive(Debug, Default)]
pub struct CampaignFold {
    /// The states the events have given, by candidate.
    states: BTreeMap<usize, CandidateState>,
    /// The running (or last run) candidate and its run so far.
    current: Option<(usize, RunState)>,
}

impl Logged for CampaignEvent {
    type Folded = CampaignFold;

    fn snapshot(&self) -> Option<Snapshot> {
        match self {
            CampaignEvent::Engine { event, .. } => Snapshot::of(event),
            _ => None,
        }
    }

    fn is_last(&self) -> bool {
        matches!(self, CampaignEvent::Ended(_))
    }

    fn fold(&self, into: &mut CampaignFold) {
        match self {
            CampaignEvent::State { index, state, .. } => {
                into.states.insert(*index, *state);
                if *state == CandidateState::Running {
                    into.current = Some((*index, RunState::default()));
                }
            }
            CampaignEvent::Engine { index, event } => {
                if let Some((i, run)) = &mut into.current {
                    if i == index {
                        run.apply(event);
                    }
                }
            }
            CampaignEvent::Ranking(_) | CampaignEvent::Ended(_) => {}
        }
    }
}

/// The states in the order `/metrics` writes them.
const STATES: [CandidateState; 5] = [
    CandidateState::Waiting,
    CandidateState::Running,
    CandidateState::Done,
    CandidateState::Interrupted,
    CandidateState::Failed,
];

/// Serves `run` on the options' address: `GET /run` answers its record, `POST /stop` cancels
/// `cancel`.
pub async fn serve(
    opts: &ServeOptions,
    cancel: CancellationToken,
    run: &CampaignRun,
) -> anyhow::Result<Served<CampaignEvent>> {
    let rec = &run.record;
    let analyses = rec
        .candidates
        .iter()
        .map(|c| run.analysis(c.price_per_hour))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let labels: Vec<String> = rec.candidates.iter().map(|c| c.label.clone()).collect();
    let before: Vec<CandidateState> = rec.candidates.iter().map(|c| c.state).collect();
    let metrics: MetricsOf<CampaignEvent> = Box::new(move |fold: &CampaignFold| {
        let mut text = match &fold.current {
            Some((i, state)) => {
                let analysed = crate::plan::analyse(&analyses[*i], &state.levels);
                let labels = RunLabels {
                    plan: "search",
                    candidate: labels.get(*i).map(String::as_str),
                };
                render(&labels, state, &analysed)
            }
            None => String::new(),
        };
        text += &campaign_candidates(&counts(&before, &fold.states));
        text
    });
    let described = serde_json::json!({ "campaign": described(rec) });
    Served::listen(opts, cancel, described, metrics).await
}

/// The record a watcher opens the view with (as `campaign.json` holds it).
fn described(rec: &CampaignRecord) -> serde_json::Value {
    serde_json::to_value(rec).unwrap_or_default()
}

/// How many candidates are in each state: the record's states as the campaign began, with
/// what the events have said since.
fn counts(
    before: &[CandidateState],
    since: &BTreeMap<usize, CandidateState>,
) -> Vec<(&'static str, usize)> {
    let now: Vec<CandidateState> = before
        .iter()
        .enumerate()
        .map(|(i, s)| since.get(&i).copied().unwrap_or(*s))
        .collect();
    STATES
        .iter()
        .map(|s| (s.label(), now.iter().filter(|n| *n == s).count()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineEvent;

    #[test]
    fn the_fold_follows_the_running_candidate_and_counts_every_state() {
        use CandidateState::*;
        let mut fold = CampaignFold::default();
        let state = |index, state| CampaignEvent::State {
            index,
            state,
            error: None,
        };
        let events = [
            state(0, Running),
            CampaignEvent::Engine {
                index: 0,
                event: EngineEvent::LevelsLeft([1, 2]),
            },
            state(0, Done),
            state(1, Running),
            // an event of another candidate than the running one is not its
            CampaignEvent::Engine {
                index: 0,
                event: EngineEvent::LevelsLeft([5, 6]),
            },
        ];
        for ev in &events {
            ev.fold(&mut fold);
        }
        let (i, run) = fold.current.as_ref().unwrap();
        assert_eq!((*i, run.levels_left), (1, None));
        let before = [Waiting, Waiting, Done, Failed];
        assert_eq!(
            counts(&before, &fold.states),
            vec![
                ("waiting", 0),
                ("running", 1),
                ("done", 2),
                ("interrupted", 0),
                ("failed", 1)
            ]
        );
        assert!(CampaignEvent::Ended(crate::campaign::events::CampaignEnd::Interrupted).is_last());
        assert_eq!(
            CampaignEvent::Engine {
                index: 0,
                event: EngineEvent::Warning("w".into())
            }
            .snapshot(),
            None
        );
    }
}
