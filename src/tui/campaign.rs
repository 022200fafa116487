//! The campaign view (docs/campaigns.md): the candidates with their states (waiting, running
//! with its current level, done with its answer), the ranking filling in as candidates finish,
//! and the running candidate's live curves. The state folds [`CampaignEvent`]s; the loop
//! (`campaign_loop.rs`) draws it frame-throttled and stops the campaign on `x`, `q` or Ctrl-C.

use crate::campaign::campaign_file::{CampaignRecord, CandidateState};
use crate::campaign::events::{CampaignEnd, CampaignEvent};
use crate::campaign::rank::RankedRow;
use crate::state::RunState;

/// One candidate's line.
#[derive(Debug, Clone)]
pub struct CandidateLine {
    pub label: String,
    pub endpoint: String,
    pub price_per_hour: f64,
    pub state: CandidateState,
    /// Its search as far as it went (levels, the running one).
    pub run: RunState,
}

/// What the campaign view shows.
#[derive(Debug, Clone)]
pub struct CampaignView {
    pub name: String,
    pub candidates: Vec<CandidateLine>,
    pub ranking: Vec<RankedRow>,
    /// The candidate running now.
    pub running: Option<usize>,
    /// The campaign ended (finished or stopped): `q` quits.
    pub ended: bool,
    /// How it ended, as its last event said.
    pub outcome: Option<CampaignEnd>,
    /// The title's key hint.
    pub keys: &'static str,
    pub status: Option<String>,
    pub color: bool,
}

impl CampaignView {
    /// The view of a campaign about to run.
    pub fn new(rec: &CampaignRecord, color: bool) -> Self {
        CampaignView {
            name: rec.name.clone(),
            candidates: rec
                .candidates
                .iter()
                .map(|c| CandidateLine {
                    label: c.label.clone(),
                    endpoint: c.endpoint.clone(),
                    price_per_hour: c.price_per_hour,
                    state: c.state,
                    run: RunState::default(),
                })
                .collect(),
            ranking: rec.ranking.clone(),
            running: None,
            ended: false,
            outcome: None,
            keys: "x or q: stop (finished candidates are kept); q again to quit",
            status: None,
            color,
        }
    }

    /// Folds one event in.
    pub fn apply(&mut self, ev: &CampaignEvent) {
        match ev {
            CampaignEvent::State { index, state, .. } => {
                if let Some(c) = self.candidates.get_mut(*index) {
                    c.state = *state;
                    if *state == CandidateState::Running {
                        c.run = RunState::default();
                        self.running = Some(*index);
                    } else if self.running == Some(*index) {
                        self.running = None;
                    }
                }
            }
            CampaignEvent::Engine { index, event } => {
                if let Some(c) = self.candidates.get_mut(*index) {
                    c.run.apply(event);
                }
            }
            CampaignEvent::Ranking(rows) => self.ranking = rows.clone(),
            CampaignEvent::Ended(end) => self.outcome = Some(*end),
        }
    }

    /// Folds in every event already sent on `rx` (without waiting for more).
    pub fn apply_sent(&mut self, rx: &mut tokio::sync::mpsc::Receiver<CampaignEvent>) {
        while let Ok(ev) = rx.try_recv() {
            self.apply(&ev);
        }
    }

    /// The answer of a candidate that is done, from the ranking.
    pub fn answer_of(&self, label: &str) -> Option<&RankedRow> {
        self.ranking.iter().find(|r| r.numbers.label == label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::campaign_file::{CampaignSource, CandidateRecord};
    use crate::campaign::rank::RankBy;

    fn record() -> CampaignRecord {
        let cand = |label: &str| CandidateRecord {
            label: label.into(),
            price_per_hour: 1.0,
            gpus: None,
            notes: None,
            endpoint: "simulator".into(),
            state: CandidateState::Waiting,
            run_dir: None,
            abandoned_runs: Vec::new(),
            error: None,
        };
        CampaignRecord {
            tool: "rightsize".into(),
            version: "0".into(),
            name: "t".into(),
            description: None,
            source: CampaignSource::Plan {
                name: "t".into(),
                config: None,
            },
            started_at: String::new(),
            ended_at: None,
            rank_by: RankBy::CostPerMillion,
            candidates: vec![cand("a"), cand("b")],
            ranking: Vec::new(),
        }
    }

    #[test]
    fn states_follow_the_events() {
        let mut v = CampaignView::new(&record(), false);
        v.apply(&CampaignEvent::State {
            index: 0,
            state: CandidateState::Running,
            error: None,
        });
        assert_eq!(v.running, Some(0));
        v.apply(&CampaignEvent::State {
            index: 0,
            state: CandidateState::Done,
            error: None,
        });
        assert_eq!(v.running, None);
        assert_eq!(v.candidates[0].state, CandidateState::Done);
        assert_eq!(v.candidates[1].state, CandidateState::Waiting);
    }
}
