//! Runs a campaign headless: pre-flight of every candidate before any load, then each live
//! candidate's SLA search one after another into the campaign folder, `campaign.json`
//! rewritten at every change of state, and the ranking over what has finished.

use super::campaign_file::{CampaignRecord, CampaignSource, CandidateRecord, CandidateState};
use super::events::CampaignEvent;
use super::rank::{numbers, rank, CandidateNumbers, RankBy, RankedRow};
use super::spec::{CampaignSpec, CandidateSource};
use crate::config::overrides::{EndpointOverrides, InputError};
use crate::engine::RunError;
use crate::launch::{prepare, LaunchRequest, PlanChoice, Prepared};
use crate::plan::Analysis;
use crate::report::folder::FolderSink;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How long pre-flight waits on one candidate at most (a candidate's own timeout may be
/// minutes; a typo should fail in seconds).
const PREFLIGHT_TIMEOUT: Duration = Duration::from_secs(30);

pub use super::events::CampaignEnd;

/// A campaign folder and its record, ready to run.
pub struct CampaignRun {
    pub dir: PathBuf,
    pub record: CampaignRecord,
    pub spec: CampaignSpec,
    pub config: Option<PathBuf>,
}

impl CampaignRun {
    /// A new campaign folder under `root`.
    pub fn create(
        spec: CampaignSpec,
        source: CampaignSource,
        root: &Path,
        rank_by: RankBy,
    ) -> anyhow::Result<CampaignRun> {
        let id = crate::wallclock::new_run_id(
            &format!("campaign-{}", spec.name),
            crate::wallclock::now(),
        );
        let dir = crate::report::folder::ResultsDir::create(root, &id)
            .map_err(|e| anyhow::anyhow!("cannot create a campaign folder: {e}"))?
            .path()
            .to_path_buf();
        let candidates = spec
            .candidates
            .iter()
            .map(|c| CandidateRecord {
                label: c.label.clone(),
                price_per_hour: c.price_per_hour,
                gpus: c.gpus,
                notes: c.notes.clone(),
                endpoint: c.source.describe(),
                state: match c.source {
                    CandidateSource::Finished(_) => CandidateState::Done,
                    CandidateSource::Live { .. } => CandidateState::Waiting,
                },
                run_dir: match &c.source {
                    CandidateSource::Finished(p) => Some(p.clone()),
                    CandidateSource::Live { .. } => None,
                },
                abandoned_runs: Vec::new(),
                error: None,
            })
            .collect();
        let config = source.config().map(Path::to_path_buf);
        let record = CampaignRecord {
            tool: "rightsize".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            name: spec.name.clone(),
            description: spec.description.clone(),
            source,
            started_at: crate::wallclock::rfc3339_utc(crate::wallclock::now()),
            ended_at: None,
            rank_by,
            candidates,
            ranking: Vec::new(),
        };
        Ok(CampaignRun {
            dir,
            record,
            spec,
            config,
        })
    }

    /// An existing campaign folder: its candidates must still be the ones the definition
    /// lists (same labels, same order).
    pub fn resume(dir: &Path, spec: CampaignSpec, record: CampaignRecord) -> anyhow::Result<Self> {
        let then: Vec<&str> = record.candidates.iter().map(|c| c.label.as_str()).collect();
        let now: Vec<&str> = spec.candidates.iter().map(|c| c.label.as_str()).collect();
        if then != now {
            return Err(InputError(format!(
                "--resume {}: the campaign's candidates changed since it started (then: {}; \
                 now: {}); start a new campaign instead",
                dir.display(),
                then.join(", "),
                now.join(", ")
            ))
            .into());
        }
        let config = record.source.config().map(Path::to_path_buf);
        Ok(CampaignRun {
            dir: dir.to_path_buf(),
            record,
            spec,
            config,
        })
    }

    fn save(&self) -> anyhow::Result<()> {
        self.record.write(&self.dir).map_err(|e| {
            anyhow::anyhow!(
                "cannot write {}: {e}",
                self.dir.join("campaign.json").display()
            )
        })
    }

    /// How every candidate's run is read: the campaign's SLAs and search, its peak, and the
    /// candidate's price.
    pub fn analysis(&self, price_per_hour: f64) -> anyhow::Result<Analysis> {
        let req = LaunchRequest {
            plan: PlanChoice::Search(self.spec.search.clone()),
            endpoint: EndpointOverrides::default(),
            workload: self.spec.workload.clone(),
            capacity: crate::plan::capacity::CapacityInputs {
                price_per_hour: Some(price_per_hour),
                ..self.spec.capacity
            },
            gate: Default::default(),
        };
        Ok(crate::launch::resolve(&req, self.config.as_deref())?.analysis)
    }

    /// The ranking over the candidates done (and the failed ones, last, with their reason).
    pub fn ranking(&self) -> anyhow::Result<Vec<RankedRow>> {
        let mut all: Vec<CandidateNumbers> = Vec::new();
        for c in &self.record.candidates {
            match (c.state, &c.run_dir) {
                (CandidateState::Done, Some(dir)) => {
                    let run = crate::report::load_run(dir).map_err(|e| {
                        anyhow::anyhow!("candidate {}: cannot read {}: {e}", c.label, dir.display())
                    })?;
                    let a = crate::plan::analyse(&self.analysis(c.price_per_hour)?, &run.levels);
                    let mut n = numbers(&c.label, c.price_per_hour, c.gpus, &a);
                    n.kwh_per_million = a.answer.and_then(|ans| {
                        super::rank::kwh_per_million_at(&run.levels, ans.concurrency)
                    });
                    all.push(n);
                }
                (CandidateState::Failed, _) => {
                    let mut n = numbers(
                        &c.label,
                        c.price_per_hour,
                        c.gpus,
                        &crate::plan::analyse(&Analysis::default(), &[]),
                    );
                    n.failure = Some(format!(
                        "the run failed: {}",
                        c.error.as_deref().unwrap_or("unknown error")
                    ));
                    all.push(n);
                }
                _ => {}
            }
        }
        Ok(rank(all, self.record.rank_by))
    }

    /// Pre-flight of every live candidate not yet done (starting its simulator if it has
    /// one), and a read of every finished run: all before any load. Every failure is listed.
    pub async fn check_all(&self) -> anyhow::Result<Vec<Option<Prepared>>> {
        let mut prepared = Vec::new();
        let mut failures = Vec::new();
        let mut bad_input = false;
        let n = self.spec.candidates.len();
        for (i, (c, rec)) in self
            .spec
            .candidates
            .iter()
            .zip(&self.record.candidates)
            .enumerate()
        {
            let name = format!("candidate {}/{n} ({})", i + 1, c.label);
            if let CandidateSource::Finished(dir) = &c.source {
                match crate::report::load_run(dir) {
                    Ok(r) if !r.levels.is_empty() => {
                        eprintln!(
                            "{name}: finished run {}, {} levels",
                            dir.display(),
                            r.levels.len()
                        )
                    }
                    Ok(_) => {
                        bad_input = true;
                        failures.push(format!("{name}: {} holds no level files", dir.display()));
                    }
                    Err(e) => {
                        bad_input = true;
                        failures.push(format!("{name}: cannot read {}: {e}", dir.display()));
                    }
                }
                prepared.push(None);
                continue;
            }
            if rec.state == CandidateState::Done {
                prepared.push(None);
                continue;
            }
            let launch = c
                .source
                .launch(self.config.as_deref())?
                .ok_or_else(|| anyhow::anyhow!("{name}: nothing to run"))?;
            let mut p = prepare(launch).await?;
            p.req.sink = Box::new(FolderSink::new(self.dir.clone()));
            match preflight(&p).await {
                Ok(model) => eprintln!("{name}: pre-flight ok ({model})"),
                Err(e) => failures.push(format!("{name}: {e}")),
            }
            prepared.push(Some(p));
        }
        if !failures.is_empty() {
            for p in prepared.into_iter().flatten() {
                if let Some(s) = p.sim {
                    s.shutdown();
                }
            }
            let text = format!(
                "no load was sent; {} of {n} candidates cannot run:\n  {}",
                failures.len(),
                failures.join("\n  ")
            );
            return Err(if bad_input {
                InputError(text).into()
            } else {
                anyhow::anyhow!(text)
            });
        }
        Ok(prepared)
    }

    /// Runs every unfinished candidate in order, sending each step to `events` (the
    /// dashboard's view, or the headless printer, with a served campaign's log between).
    /// `cancel` stops the running one at once.
    pub async fn run_all(
        &mut self,
        prepared: Vec<Option<Prepared>>,
        cancel: CancellationToken,
        events: mpsc::Sender<CampaignEvent>,
    ) -> anyhow::Result<CampaignEnd> {
        // a consumer that has gone (the terminal lost) does not stop the campaign
        let send = |ev: CampaignEvent| {
            let events = events.clone();
            async move {
                let _ = events.send(ev).await;
            }
        };
        let mut failed = 0;
        self.save()?;
        for (i, p) in prepared.into_iter().enumerate() {
            let Some(p) = p else { continue };
            if cancel.is_cancelled() {
                if let Some(s) = p.sim {
                    s.shutdown();
                }
                continue;
            }
            self.mark_running(i)?;
            send(CampaignEvent::State {
                index: i,
                state: CandidateState::Running,
                error: None,
            })
            .await;
            let (tx, mut rx) = mpsc::channel(256);
            let out = events.clone();
            let consumer = tokio::spawn(async move {
                while let Some(event) = rx.recv().await {
                    let _ = out.send(CampaignEvent::Engine { index: i, event }).await;
                }
            });
            let result = crate::engine::run(p.req, p.planner, tx, cancel.clone()).await;
            let _ = consumer.await;
            if let Some(s) = p.sim {
                s.shutdown();
            }
            let rec = &mut self.record.candidates[i];
            match result {
                Ok(o) => {
                    rec.run_dir = Some(o.dir.clone());
                    rec.state = if o.interrupted {
                        CandidateState::Interrupted
                    } else {
                        CandidateState::Done
                    };
                }
                Err(RunError::Cancelled) => rec.state = CandidateState::Interrupted,
                Err(e) => {
                    failed += 1;
                    rec.state = CandidateState::Failed;
                    rec.error = Some(e.to_string());
                }
            }
            let (state, error) = (rec.state, rec.error.clone());
            self.record.ranking = self.ranking()?;
            self.save()?;
            send(CampaignEvent::State {
                index: i,
                state,
                error,
            })
            .await;
            send(CampaignEvent::Ranking(self.record.ranking.clone())).await;
        }
        let end = self.end(cancel.is_cancelled(), failed)?;
        send(CampaignEvent::Ended(end)).await;
        Ok(end)
    }

    /// Each candidate as the headless progress names it: `label (what it is)`.
    pub fn candidate_lines(&self) -> Vec<String> {
        self.spec
            .candidates
            .iter()
            .map(|c| format!("{} ({})", c.label, c.source.describe()))
            .collect()
    }

    /// Candidate `i` is running (an interrupted one's earlier run folder is set aside).
    fn mark_running(&mut self, i: usize) -> anyhow::Result<()> {
        let rec = &mut self.record.candidates[i];
        if rec.state == CandidateState::Interrupted {
            if let Some(d) = rec.run_dir.take() {
                rec.abandoned_runs.push(d);
            }
        }
        rec.state = CandidateState::Running;
        rec.error = None;
        self.save()
    }

    /// Records how the campaign ended.
    fn end(&mut self, cancelled: bool, failed: usize) -> anyhow::Result<CampaignEnd> {
        if cancelled {
            // the candidates after the cut one never started: their simulators are down
            for rec in &mut self.record.candidates {
                if rec.state == CandidateState::Running {
                    rec.state = CandidateState::Interrupted;
                }
            }
            self.save()?;
            return Ok(CampaignEnd::Interrupted);
        }
        self.record.ranking = self.ranking()?;
        self.record.ended_at = Some(crate::wallclock::rfc3339_utc(crate::wallclock::now()));
        self.save()?;
        Ok(CampaignEnd::Finished { failed })
    }
}

/// One candidate's pre-flight: the model (asked of the server when none is named), then one
/// small request. Returns the model.
async fn preflight(p: &Prepared) -> Result<String, RunError> {
    use crate::endpoint::Endpoint;
    let timeout = p.req.timeout.min(PREFLIGHT_TIMEOUT);
    let mut spec = p.req.endpoint.clone();
    if spec.model.is_empty() && spec.sagemaker.is_none() {
        let probe = Endpoint::new(&spec, 1, timeout)?;
        spec.model = crate::endpoint::preflight::only_model(&probe).await?;
    }
    let ep = Endpoint::new(&spec, 1, timeout)?;
    crate::endpoint::preflight(&ep).await?;
    Ok(spec.model)
}
