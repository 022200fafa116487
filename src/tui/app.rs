//! The dashboard's state and its one update path: keys and engine events come in, the state
//! (and the chart series derived from it) changes, and an [`Action`] tells the loop what to
//! do outside (start or stop a run, quit). Nothing here touches the terminal.

use super::series::RunView;
use super::setup::{FieldId, SetupChoices, SetupForm};
use super::timeline::TimeView;
use crate::engine::EngineEvent;
use crate::launch::LaunchRequest;
use crate::plan::analysis::is_rate_level;
use crate::plan::capacity::Peak;
use crate::plan::{Analysis, RunAnalysis};
use crate::record::sla::SlaMetric;
use crate::report::history::RunStatus;
use crate::state::RunState;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
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
    fn step(self, back: bool) -> Panel {
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

/// Rows a page key scrolls.
const PAGE: isize = 10;

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
            confirm_delete: None,
            status: None,
            color,
            level_scroll: 0,
            runs: Vec::new(),
            runs_selected: 0,
            sim_time_scale: None,
            overlay: None,
            analysis: Analysis::default(),
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
    fn reset_run_view(&mut self) {
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

    fn clear_overlay(&mut self) {
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
    fn replan(&mut self) {
        self.analysis.capacity = self.setup.to_request().capacity;
        self.refresh_view();
    }

    /// Handles one key press.
    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        let ctrl_c =
            key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        if self.confirm_quit {
            // a second Ctrl-C is a yes, as `q` is
            return match key.code {
                KeyCode::Char('y') | KeyCode::Char('q') => Action::Quit,
                _ if ctrl_c => Action::Quit,
                _ => {
                    self.confirm_quit = false;
                    Action::None
                }
            };
        }
        if let Some((_, path)) = self.confirm_delete.take() {
            return match key.code {
                KeyCode::Char('y') => Action::DeleteRun(path),
                _ => {
                    self.status = Some("kept the run".into());
                    Action::None
                }
            };
        }
        if ctrl_c {
            // a live run is never stopped by one key press: Ctrl-C asks, as `q` does
            return if self.live {
                self.confirm_quit = true;
                Action::None
            } else {
                Action::Quit
            };
        }
        if self.help {
            let max = super::render::help_max_scroll(self);
            match key.code {
                KeyCode::Down | KeyCode::Char('j') => {
                    self.help_scroll = (self.help_scroll + 1).min(max)
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    self.help_scroll = self.help_scroll.saturating_sub(1)
                }
                _ => self.help = false,
            }
            return Action::None;
        }
        // on the setup screen a printable key on a text field types there, never a command
        if let Some(c) = self.typed_into_setup(key) {
            self.setup.start_typing(c);
            return Action::None;
        }
        if self.setup.editing.is_some() {
            return self.on_edit_key(key);
        }
        match key.code {
            KeyCode::Char('?') | KeyCode::F(1) => {
                self.help = true;
                self.help_scroll = 0;
                Action::None
            }
            KeyCode::Char('q') => {
                if self.live {
                    self.confirm_quit = true;
                    Action::None
                } else {
                    Action::Quit
                }
            }
            KeyCode::Char('x') if self.live => {
                self.status = Some("stopping: keeping finished levels".into());
                Action::Stop
            }
            KeyCode::Char('1') => self.go(Screen::Setup),
            KeyCode::Char('2') => self.go(Screen::Run),
            KeyCode::Char('3') => {
                self.screen = Screen::Runs;
                Action::LoadRuns
            }
            _ => match self.screen {
                Screen::Setup => self.on_setup_key(key),
                Screen::Run => self.on_run_key(key),
                Screen::Runs => self.on_runs_key(key),
            },
        }
    }

    fn go(&mut self, s: Screen) -> Action {
        self.screen = s;
        Action::None
    }

    fn on_edit_key(&mut self, key: KeyEvent) -> Action {
        const MAX_TYPED_BYTES: usize = 1024;
        let on_setup = self.screen == Screen::Setup;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let Some(text) = self.setup.editing.as_mut() else {
            return Action::None;
        };
        match key.code {
            // Ctrl-S keeps what was typed and starts
            KeyCode::Char('s') | KeyCode::Char('S') if ctrl && on_setup => return self.start(),
            // room for a custom format's request template
            KeyCode::Char(c)
                if plain && !c.is_control() && text.len() + c.len_utf8() <= MAX_TYPED_BYTES =>
            {
                text.push(c)
            }
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Esc => self.setup.finish_edit(false),
            KeyCode::Enter => self.confirm_edit(0),
            // Tab (and the arrows) keep it and move on, as in a spreadsheet
            KeyCode::Tab | KeyCode::Down if on_setup => self.confirm_edit(1),
            KeyCode::BackTab | KeyCode::Up if on_setup => self.confirm_edit(-1),
            KeyCode::Tab => self.confirm_edit(0),
            KeyCode::F(1) => {
                self.help = true;
                self.help_scroll = 0;
            }
            _ => {}
        }
        Action::None
    }

    fn on_setup_key(&mut self, key: KeyEvent) -> Action {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('s') | KeyCode::Char('S') if ctrl => return self.start(),
            KeyCode::Up | KeyCode::Char('k') | KeyCode::BackTab => self.setup.move_cursor(-1),
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => self.setup.move_cursor(1),
            KeyCode::Home => self.setup.move_cursor(-(self.setup.fields.len() as i32)),
            KeyCode::End => self.setup.move_cursor(self.setup.fields.len() as i32),
            KeyCode::Left | KeyCode::Char('h') => self.setup.cycle(-1),
            KeyCode::Right | KeyCode::Char('l') => self.setup.cycle(1),
            KeyCode::Enter | KeyCode::Char('e') => self.setup.activate(),
            // Backspace or Delete on a text field empties it and starts typing
            KeyCode::Backspace | KeyCode::Delete if self.setup.selected_takes_text() => {
                self.setup.editing = Some(String::new())
            }
            KeyCode::Char('s') => return self.start(),
            _ => {}
        }
        self.refresh_fix_status();
        Action::None
    }

    fn start(&mut self) -> Action {
        if self.live {
            self.status = Some("a run is already going; x stops it".into());
            return Action::None;
        }
        // what is being typed is kept first (Ctrl-S while editing)
        self.setup.finish_edit(true);
        if !self.setup.validate() {
            // the cursor goes to the first field to fix, and the status says what
            if let Some((i, label, e)) = self.setup.first_error() {
                self.status = Some(format!("fix {label}: {e}"));
                self.setup.selected = i;
            }
            self.screen = Screen::Setup;
            return Action::None;
        }
        Action::Start(Box::new(self.setup.to_request()))
    }

    /// The character a key types into the setup form's selected text field when it is not
    /// being edited yet: any printable key (no Control, no Alt) starts editing it.
    fn typed_into_setup(&self, key: KeyEvent) -> Option<char> {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Char(c)
                if plain
                    && !c.is_control()
                    && self.screen == Screen::Setup
                    && self.setup.editing.is_none()
                    && self.setup.selected_takes_text() =>
            {
                Some(c)
            }
            _ => None,
        }
    }

    /// Keeps the text being typed (checking it as the field is left) and moves the cursor
    /// `step` rows; on the run screen (peak, price) the planning numbers follow.
    fn confirm_edit(&mut self, step: i32) {
        self.setup.finish_edit(true);
        if self.screen == Screen::Run {
            self.replan();
        } else {
            self.setup.move_cursor(step);
            self.refresh_fix_status();
        }
    }

    /// After a refused start the status says what to fix: it follows the form, naming the
    /// next field still wrong, and goes once none is.
    fn refresh_fix_status(&mut self) {
        if self
            .status
            .as_deref()
            .is_some_and(|s| s.starts_with("fix "))
        {
            self.status = self
                .setup
                .first_error()
                .map(|(_, label, e)| format!("fix {label}: {e}"));
        }
    }

    fn on_run_key(&mut self, key: KeyEvent) -> Action {
        if self.full_results {
            return self.on_full_results_key(key);
        }
        match key.code {
            KeyCode::Tab | KeyCode::Right | KeyCode::Char('l') => {
                self.focus = self.focus.step(false)
            }
            KeyCode::BackTab | KeyCode::Left | KeyCode::Char('h') => {
                self.focus = self.focus.step(true)
            }
            KeyCode::Down | KeyCode::Char('j') => self.scroll(1),
            KeyCode::Up | KeyCode::Char('k') => self.scroll(-1),
            KeyCode::PageDown => self.scroll(PAGE),
            KeyCode::PageUp => self.scroll(-PAGE),
            KeyCode::End | KeyCode::Char('G') => self.scroll(isize::MAX / 2),
            KeyCode::Home | KeyCode::Char('g') => self.scroll(-(isize::MAX / 2)),
            KeyCode::Char('r') | KeyCode::Enter => {
                self.full_results = true;
                self.full_scroll = 0;
            }
            KeyCode::Char('C') => self.clear_overlay(),
            KeyCode::Char('s') => return self.start(),
            KeyCode::Char('t') => {
                if self.time.is_none() {
                    self.status = Some(
                        "the time view shows open-loop levels: rates, schedules and replays".into(),
                    );
                } else {
                    self.chart_mode = if self.shows_time_view() {
                        ChartMode::Curves
                    } else {
                        ChartMode::Time
                    };
                }
            }
            KeyCode::Char('e') if !self.live => match &self.run.dir {
                Some(dir) => {
                    return Action::Export {
                        run: dir.clone(),
                        compare: self.overlay.as_ref().map(|o| o.1.clone()),
                    }
                }
                None => self.status = Some("no run to export yet".into()),
            },
            KeyCode::Char('p') => self.setup.edit(FieldId::PeakConcurrency),
            KeyCode::Char('$') => self.setup.edit(FieldId::PricePerHour),
            _ => {}
        }
        Action::None
    }

    /// Keys of the full-screen results view: scroll it, or leave it.
    fn on_full_results_key(&mut self, key: KeyEvent) -> Action {
        let max = super::render::layout::full_results_max_scroll(self);
        let to = |from: usize, by: isize| from.saturating_add_signed(by).min(max);
        match key.code {
            KeyCode::Esc | KeyCode::Enter | KeyCode::Char('r') => self.full_results = false,
            KeyCode::Down | KeyCode::Char('j') => self.full_scroll = to(self.full_scroll, 1),
            KeyCode::Up | KeyCode::Char('k') => self.full_scroll = to(self.full_scroll, -1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.full_scroll = to(self.full_scroll, PAGE),
            KeyCode::PageUp => self.full_scroll = to(self.full_scroll, -PAGE),
            KeyCode::End | KeyCode::Char('G') => self.full_scroll = max,
            KeyCode::Home | KeyCode::Char('g') => self.full_scroll = 0,
            KeyCode::Char('s') => return self.start(),
            KeyCode::Char('e') if !self.live => {
                self.full_results = false;
                return self.on_run_key(key);
            }
            KeyCode::Char('p') | KeyCode::Char('$') => {
                self.full_results = false;
                return self.on_run_key(key);
            }
            _ => {}
        }
        Action::None
    }

    /// Scrolls the focused panel by `by` rows, stopping at its first and last rows. The
    /// levels table follows the newest level again once scrolled to its end.
    fn scroll(&mut self, by: isize) {
        let limits = super::render::layout::scroll_limits(self);
        let to = |from: usize, max: usize| from.saturating_add_signed(by).min(max);
        match self.focus {
            Panel::Levels => {
                let from = if self.level_follow {
                    limits.levels
                } else {
                    self.level_scroll.min(limits.levels)
                };
                self.level_scroll = to(from, limits.levels);
                self.level_follow = self.level_scroll >= limits.levels;
            }
            Panel::Results => self.results_scroll = to(self.results_scroll, limits.results),
            Panel::Warnings => self.notes_scroll = to(self.notes_scroll, limits.notes),
            Panel::Charts => {}
        }
    }

    fn on_runs_key(&mut self, key: KeyEvent) -> Action {
        let n = self.runs.len();
        match key.code {
            KeyCode::Down | KeyCode::Char('j') if n > 0 => {
                self.runs_selected = (self.runs_selected + 1).min(n - 1)
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.runs_selected = self.runs_selected.saturating_sub(1)
            }
            KeyCode::Char('d') | KeyCode::Delete => {
                if let Some(r) = self.runs.get(self.runs_selected) {
                    self.confirm_delete = Some((r.id.clone(), r.path.clone()));
                }
            }
            KeyCode::Enter | KeyCode::Char('o') => {
                if let Some(r) = self.runs.get(self.runs_selected).cloned() {
                    return self.open_run(&r);
                }
            }
            KeyCode::Char('c') => {
                if let Some(r) = self.runs.get(self.runs_selected).cloned() {
                    match crate::report::load_levels(&r.path) {
                        Ok(levels) => {
                            let id = r.id.clone();
                            self.overlay = Some((r.id, r.path, levels));
                            self.refresh_view();
                            self.status = Some(if self.view.overlay.is_some() {
                                format!("{id} is drawn over the run screen's charts (C clears)")
                            } else {
                                format!(
                                    "{id} varies the other load (rate or concurrency): \
                                     its curves cannot share these axes"
                                )
                            });
                        }
                        Err(e) => self.status = Some(format!("cannot read {}: {e}", r.id)),
                    }
                }
            }
            KeyCode::Char('C') => self.clear_overlay(),
            _ => {}
        }
        Action::None
    }

    /// Shows a past run on the run screen.
    fn open_run(&mut self, r: &RunEntry) -> Action {
        if self.live {
            self.status = Some("a run is going; open past runs when it ends".into());
            return Action::None;
        }
        if let Some(p) = &r.problem {
            self.status = Some(format!("cannot open {}: {p}", r.id));
            return Action::None;
        }
        match crate::report::history::load_run(&r.path) {
            Ok(data) => {
                // read with the run's own SLAs, search bounds, peak and price, as `show` and
                // the report read it: the same answer, bracket and breaking point
                self.analysis = data.analysis();
                self.run = RunState {
                    run_id: Some(r.id.clone()),
                    dir: Some(r.path.clone()),
                    endpoint: Some(r.endpoint.clone()),
                    model: Some(r.model.clone()),
                    levels: data.levels,
                    finished: true,
                    ..RunState::default()
                };
                self.refresh_view();
                self.screen = Screen::Run;
                self.reset_run_view();
                self.ended = Some(r.status);
                self.failure = data.echo["failure"].as_str().map(str::to_string);
                // `p` and `$` start from the peak and price the run was sized with
                let cap = &self.analysis.capacity;
                if let Some(Peak::Concurrency(v)) = cap.peak {
                    self.setup.set(FieldId::PeakConcurrency, &v.to_string());
                }
                if let Some(price) = cap.price_per_hour {
                    self.setup.set(FieldId::PricePerHour, &price.to_string());
                }
                // the header names the run
                self.status = None;
            }
            Err(e) => self.status = Some(format!("cannot open {}: {e}", r.id)),
        }
        Action::None
    }
}
