//! The dashboard's state and its one update path: keys (handled in `keys.rs`) and engine
//! events come in, the state (and the chart series derived from it) changes, and an
//! [`Action`] tells the loop what to do outside (start or stop a run, quit). Nothing here
//! touches the terminal.

use super::series::RunView;
use super::setup::{SetupChoices, SetupForm};
use super::timeline::TimeView;
use crate::engine::EngineEvent;
use crate::launch::LaunchRequest;
use crate::plan::analysis::{is_rate_level, Axis};
use crate::plan::capacity::Peak;
use crate::plan::{Analysis, RunAnalysis};
use crate::record::sla::SlaMetric;
use crate::report::history::RunStatus;
use crate::state::RunState;
use std::path::PathBuf;

/// Which screen is showing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Screen {
    Setup,
    Run,
    Runs,
}

/// Panels of the run screen that take focus with Tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Panel {
    Charts,
    Results,
    Levels,
    Warnings,
}

impl Panel {
    /// The next panel Tab moves to (`back`: Shift-Tab).
    pub(super) fn step(self, back: bool) -> Panel {
        const ORDER: [Panel; 4] = [
            Panel::Charts,
            Panel::Results,
            Panel::Levels,
            Panel::Warnings,
        ];
        let i = ORDER.iter().position(|p| *p == self).unwrap_or(0);
        ORDER[if back { (i + 3) % 4 } else { (i + 1) % 4 }]
    }
}

/// What the run screen's charts show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChartMode {
    /// The time view while an open-loop level runs (and after the run when it has no
    /// curve: fewer than two levels on the load axis), else the curves.
    #[default]
    Auto,
    /// Throughput and latency against the run's load axis.
    Curves,
    /// The open-loop level against time.
    Time,
}

/// What the loop must do after an update.
#[derive(Debug, Clone)]
pub enum Action {
    None,
    Start(Box<LaunchRequest>),
    Stop,
    Quit,
    /// Reload the list of past runs.
    LoadRuns,
    DeleteRun(PathBuf),
    /// Write charts (PNG, SVG) and data (CSV, JSON) of a run, overlaying `compare` if set.
    Export {
        run: PathBuf,
        compare: Option<PathBuf>,
    },
}

/// A past run in the results folder.
#[derive(Debug, Clone, PartialEq)]
pub struct RunEntry {
    pub id: String,
    pub path: PathBuf,
    /// When it began (`2026-12-06 09:25`; empty when unknown).
    pub date: String,
    /// `sweep`, `search`, `import-aiperf`, ...
    pub kind: String,
    /// The search answer or the ideal balance, in `rightsize runs`'s words.
    pub answer: String,
    pub status: RunStatus,
    pub levels: usize,
    pub endpoint: String,
    pub model: String,
    pub workload: String,
    /// Why the run cannot be read, when it cannot (listed, not opened).
    pub problem: Option<String>,
}

/// The whole dashboard state.
#[derive(Debug, Clone)]
pub struct App {
    pub screen: Screen,
    pub setup: SetupForm,
    pub run: RunState,
    pub view: RunView,
    /// The open-loop level running (or last run) against time.
    pub time: Option<TimeView>,
    /// Curves or time view (`t` switches).
    pub chart_mode: ChartMode,
    /// A run is going on in the background.
    pub live: bool,
    /// The run on the run screen is served elsewhere and watched (`rightsize watch`): `q`
    /// leaves it running, no confirmation asked.
    pub watching: bool,
    pub focus: Panel,
    /// How the run on the run screen ended (`None` while live or before any run).
    pub ended: Option<RunStatus>,
    /// Why the last run failed, whole (the notes panel shows it until the next run starts).
    pub failure: Option<String>,
    /// The full-screen results view is showing (`r`, or Enter on a panel).
    pub full_results: bool,
    /// Lines scrolled in the full-screen results view, the results panel and the notes.
    pub full_scroll: usize,
    pub results_scroll: usize,
    pub notes_scroll: usize,
    /// The levels table keeps the newest level in view (until the user scrolls away).
    pub level_follow: bool,
    /// The terminal's size (columns, rows), so scrolling can stop at the last row.
    pub size: (u16, u16),
    pub help: bool,
    /// Rows the help box is scrolled (it is taller than a small screen).
    pub help_scroll: usize,
    pub confirm_quit: bool,
    /// A past run to delete once the user says yes (its id and folder).
    pub confirm_delete: Option<(String, PathBuf)>,
    /// One line of status or error text for the footer.
    pub status: Option<String>,
    pub color: bool,
    pub level_scroll: usize,
    pub runs: Vec<RunEntry>,
    pub runs_selected: usize,
    /// The simulator's time scale, shown so its rates are not mistaken for a GPU's.
    pub sim_time_scale: Option<f64>,
    /// A past run drawn over the current one: (run id, its folder, its levels).
    pub overlay: Option<(String, PathBuf, Vec<crate::metrics::LevelSummary>)>,
    /// How to read the run (SLAs, search bounds, peak and price), from the run's settings.
    pub analysis: Analysis,
    /// What the finished levels mean: iteration table, search answer, knee, planning numbers.
    pub report: Option<RunAnalysis>,
    /// The gate of the run this session launched, while it is the one on the run screen
    /// (`None` before any launch, and once a past run is opened): the exit code applies it
    /// as a headless run's does.
    pub gate: Option<crate::plan::gate::Gate>,
}

impl App {
    /// A fresh dashboard on the setup screen.
    pub fn new(choices: &SetupChoices, color: bool) -> Self {
        App {
            screen: Screen::Setup,
            setup: SetupForm::new(choices),
            run: RunState::default(),
            view: RunView::default(),
            time: None,
            chart_mode: ChartMode::Auto,
            live: false,
            focus: Panel::Charts,
            ended: None,
            failure: None,
            full_results: false,
            full_scroll: 0,
            results_scroll: 0,
            notes_scroll: 0,
            level_follow: true,
            size: (120, 40),
            help: false,
            help_scroll: 0,
            confirm_quit: false,
            watching: false,
            confirm_delete: None,
            status: None,
            color,
            level_scroll: 0,
            runs: Vec::new(),
            runs_selected: 0,
            sim_time_scale: None,
            overlay: None,
            analysis: Analysis::default(),
            gate: None,
            report: None,
        }
    }

    /// A run was launched with these settings.
    pub fn run_started(&mut self, sim_time_scale: Option<f64>, analysis: Analysis) {
        self.run = RunState::default();
        self.analysis = analysis;
        self.chart_mode = ChartMode::Auto;
        self.refresh_view();
        self.live = true;
        self.screen = Screen::Run;
        self.reset_run_view();
        self.sim_time_scale = sim_time_scale;
        self.status = Some("starting: pre-flight check".into());
    }

    /// The run ended (finished, stopped, or failed with `error`).
    pub fn run_ended(&mut self, error: Option<String>) {
        self.live = false;
        self.ended = Some(match (&error, self.run.interrupted) {
            (Some(_), _) => RunStatus::Failed,
            (None, true) => RunStatus::Stopped,
            (None, false) => RunStatus::Finished,
        });
        self.failure = error.clone();
        self.status = Some(match error {
            Some(_) => "run failed: the notes panel says why".into(),
            None if self.run.interrupted => {
                "stopped: finished levels are saved, the cut level is marked partial".into()
            }
            None => match &self.run.dir {
                Some(d) => format!("finished; saved in {}", d.display()),
                None => "finished".into(),
            },
        });
    }

    /// A run (live or past) takes the run screen: no failure, panels at their tops, the
    /// levels table following the newest level.
    pub(super) fn reset_run_view(&mut self) {
        self.ended = None;
        self.failure = None;
        self.full_results = false;
        self.full_scroll = 0;
        self.results_scroll = 0;
        self.notes_scroll = 0;
        self.level_scroll = 0;
        self.level_follow = true;
    }

    /// A run could not start (its settings did not resolve): it failed before it began.
    pub fn start_failed(&mut self, error: String) {
        self.ended = Some(RunStatus::Failed);
        self.status = Some(format!("cannot start: {error}"));
        self.failure = Some(format!("cannot start: {error}"));
    }

    /// A past run's folder was deleted: its overlay goes with it.
    pub fn run_deleted(&mut self, path: &std::path::Path) {
        if self.overlay.as_ref().is_some_and(|o| o.1 == path) {
            self.clear_overlay();
        }
    }

    pub(super) fn clear_overlay(&mut self) {
        self.overlay = None;
        self.refresh_view();
        self.status = Some("overlay cleared".into());
    }

    /// Folds an engine event in and refreshes the derived series when levels change (the
    /// time view at each snapshot of an open-loop level).
    pub fn on_engine(&mut self, ev: &EngineEvent) {
        self.run.apply(ev);
        match ev {
            EngineEvent::LevelFinished(_) | EngineEvent::RunStarted { .. } => {
                self.refresh_view();
                self.status = None;
            }
            EngineEvent::LevelStarted {
                index,
                concurrency,
                shape,
                earlier,
                ..
            } => {
                self.refresh_time_view();
                self.status = Some(match shape {
                    Some(s) => format!("level {} at {}", index + 1, s.label()),
                    None if *earlier > 0 => format!(
                        "level {} again at concurrency {concurrency} (joins its {earlier} earlier requests)",
                        index + 1
                    ),
                    None => format!("level {} at concurrency {concurrency}", index + 1),
                });
            }
            EngineEvent::Progress(p) if p.open.is_some() => self.refresh_time_view(),
            _ => {}
        }
    }

    /// The SLA limit (ms) on `metric`, if the run has one.
    fn sla_ms(&self, metric: SlaMetric) -> Option<f64> {
        self.analysis
            .slas
            .0
            .iter()
            .find(|t| t.metric == metric)
            .map(|t| t.limit)
    }

    /// Recomputes the chart series from the finished levels.
    pub fn refresh_view(&mut self) {
        // on a rate axis the peak typed on the run screen (`p`) is a request rate: a peak in
        // flight cannot be set against rates (the command line refuses it there too)
        if self.run.levels.iter().any(is_rate_level) {
            if let Some(Peak::Concurrency(v)) = self.analysis.capacity.peak {
                self.analysis.capacity.peak = Some(Peak::Rps(v));
            }
        }
        let report = crate::plan::analyse(&self.analysis, &self.run.levels);
        let knee = report.knee.as_ref().map(|k| k.concurrency);
        let overlay = self
            .overlay
            .as_ref()
            .map(|(id, _, levels)| (id.as_str(), levels.as_slice()));
        self.view = RunView::build(
            &self.run.levels,
            report.axis,
            self.sla_ms(SlaMetric::E2e),
            knee,
            overlay,
        );
        self.view.knee_undecided = report.knee_undecided.as_ref().map(|u| u.from);
        // the answer marker and the SLA's label, as the exported charts draw them
        if !report.slas.is_empty() || report.search.is_some() {
            self.view.answer = report.answer.map(|a| a.concurrency);
        }
        self.view.sla_label = crate::report::chart::SlaLine::of(&self.analysis.slas)
            .into_iter()
            .find(|l| l.metric == SlaMetric::E2e)
            .map(|l| l.label);
        self.report = Some(report);
        self.refresh_time_view();
    }

    /// Recomputes the time view from the open-loop level's timeline.
    fn refresh_time_view(&mut self) {
        self.time = TimeView::build(
            &self.run,
            self.sla_ms(SlaMetric::E2e),
            self.sla_ms(SlaMetric::Ttft),
        );
    }

    /// The run's load axis (concurrency when nothing was analysed yet).
    pub fn axis(&self) -> Axis {
        self.report.as_ref().map_or(Axis::Concurrency, |r| r.axis)
    }

    /// Whether the run screen shows the time view instead of the curves.
    pub fn shows_time_view(&self) -> bool {
        self.time.is_some()
            && match self.chart_mode {
                ChartMode::Time => true,
                ChartMode::Curves => false,
                // one level on the load axis makes no curve
                ChartMode::Auto => self.live || self.view.points.len() < 2,
            }
    }

    /// Peak and price changed on the run screen: the planning numbers follow at once.
    pub(super) fn replan(&mut self) {
        self.analysis.capacity = self.setup.to_request().capacity;
        self.refresh_view();
    }
}
