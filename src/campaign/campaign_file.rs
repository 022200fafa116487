//! `campaign.json`: what a campaign folder holds (docs/campaigns.md). Written atomically after
//! every change of state, so an interrupted campaign knows where to resume.

use super::rank::{RankBy, RankedRow};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file's name in a campaign folder.
pub const CAMPAIGN_FILE: &str = "campaign.json";

/// Where the campaign's definition came from, to read it again on `--resume`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CampaignSource {
    /// `[campaigns.NAME]` in the config (`config`: the file given with `--config`, if any).
    Plan {
        name: String,
        config: Option<PathBuf>,
    },
    /// A campaign file.
    File {
        path: PathBuf,
        config: Option<PathBuf>,
    },
}

impl CampaignSource {
    /// The config file given with `--config`.
    pub fn config(&self) -> Option<&Path> {
        match self {
            CampaignSource::Plan { config, .. } | CampaignSource::File { config, .. } => {
                config.as_deref()
            }
        }
    }
}

/// A candidate's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CandidateState {
    Waiting,
    Running,
    Done,
    /// Cut by a signal: `--resume` runs it again from its first level.
    Interrupted,
    /// The run failed (pre-flight, I/O): the message says why.
    Failed,
}

impl CandidateState {
    pub fn label(self) -> &'static str {
        match self {
            CandidateState::Waiting => "waiting",
            CandidateState::Running => "running",
            CandidateState::Done => "done",
            CandidateState::Interrupted => "interrupted",
            CandidateState::Failed => "failed",
        }
    }
}

/// One candidate in `campaign.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateRecord {
    pub label: String,
    pub price_per_hour: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// What the endpoint is (no secrets), or the finished run it names.
    pub endpoint: String,
    pub state: CandidateState,
    /// The run folder of its search (inside the campaign folder), or the finished run.
    pub run_dir: Option<PathBuf>,
    /// Runs of this candidate cut by an interrupt and run again since (kept, not ranked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub abandoned_runs: Vec<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `campaign.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignRecord {
    pub tool: String,
    pub version: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub source: CampaignSource,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub rank_by: RankBy,
    pub candidates: Vec<CandidateRecord>,
    /// The ranking over the candidates finished so far.
    pub ranking: Vec<RankedRow>,
}

impl CampaignRecord {
    /// Writes `campaign.json` into `dir` (atomically).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        crate::report::folder::write_json_atomic(&dir.join(CAMPAIGN_FILE), self)
    }

    /// Reads `campaign.json` from a campaign folder.
    pub fn read(dir: &Path) -> std::io::Result<CampaignRecord> {
        crate::report::folder::read_json(&dir.join(CAMPAIGN_FILE))
    }

    /// The first candidate not done, if any.
    pub fn first_unfinished(&self) -> Option<usize> {
        self.candidates
            .iter()
            .position(|c| c.state != CandidateState::Done)
    }
}

/// Whether `dir` is a campaign folder.
pub fn is_campaign_dir(dir: &Path) -> bool {
    dir.join(CAMPAIGN_FILE).is_file()
}
