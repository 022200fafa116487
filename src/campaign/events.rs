//! What a running campaign tells its consumer (the dashboard's campaign view): candidates'
//! states, their engine events, and the ranking as it fills in. The headless printer does
//! not need them: it prints as the runner goes.

use super::campaign_file::CandidateState;
use super::rank::RankedRow;
use crate::engine::EngineEvent;

/// One step of a campaign.
// An engine event's largest variant, a progress snapshot, sits just past clippy's line; a
// few go by a second, not worth a box each.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum CampaignEvent {
    /// Candidate `index` (0-based) changed state.
    State { index: usize, state: CandidateState },
    /// An event of the running candidate's search.
    Engine { index: usize, event: EngineEvent },
    /// The ranking over the candidates finished so far.
    Ranking(Vec<RankedRow>),
}
