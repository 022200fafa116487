//! The dashboard's loop: a frame-throttled `select!` over the frame tick, engine events
//! (drained between frames), key presses, stopping signals and the run's completion. Draws
//! only when something changed; never blocks the engine (bounded channel, progress snapshots
//! may be dropped).
//!
//! SIGINT, SIGTERM and SIGHUP end the dashboard the way they end a headless run
//! ([`crate::headless::signals`]): the terminal is given back at once (after a SIGHUP there
//! may be none to draw on), the live run stops keeping what it measured (the cut level
//! written partial, `summary.json`, `run.json` interrupted), and the exit code names the
//! signal.

use super::app::{Action, App};
use super::history::load_runs;
use super::render::render;
use super::setup::{SetupChoices, SetupForm};
use crate::engine::{self, EngineEvent, RunError, RunOutcome};
use crate::headless::signals::Caught;
use crate::launch::{prepare, LaunchRequest, Prepared};
use crate::plan::Analysis;
use crate::serve::follow::{Followed, Watched};
use ratatui::crossterm::event::{self, Event, KeyEventKind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio::task::{JoinError, JoinHandle};
use tokio::time::Interval;
use tokio_util::sync::CancellationToken;

/// Time between frames at most (20 frames/s).
const FRAME: Duration = Duration::from_millis(50);

/// What the terminal reports, forwarded from the input thread.
enum Input {
    Key(ratatui::crossterm::event::KeyEvent),
    Resize,
}

/// Reads terminal input on its own thread (crossterm's read blocks) until `stop` is set.
fn spawn_input(tx: mpsc::Sender<Input>, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match event::poll(Duration::from_millis(100)) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(_) => break,
            }
            let msg = match event::read() {
                Ok(Event::Key(k)) if k.kind != KeyEventKind::Release => Input::Key(k),
                Ok(Event::Resize(..)) => Input::Resize,
                Ok(_) => continue,
                Err(_) => break,
            };
            if tx.blocking_send(msg).is_err() {
                break;
            }
        }
    })
}

/// A served run being watched: the follower's task and how to leave it.
struct Watching {
    watched: Watched,
    leave: CancellationToken,
    handle: JoinHandle<Result<Followed, String>>,
}

impl Watching {
    /// Asks the run to stop, when the watcher has its token.
    async fn stop(&self) -> String {
        if !self.watched.can_stop {
            return "this watcher has no token: set RIGHTSIZE_SERVE_TOKEN to the run's to ask \
                    it to stop"
                .into();
        }
        self.watched.stop().await
    }
}

/// A run going on in the background.
struct LiveRun {
    cancel: CancellationToken,
    handle: JoinHandle<Result<RunOutcome, RunError>>,
    sim: Option<crate::sim::SimServer>,
}

/// Setup choices from the config files.
pub fn choices(config: Option<&Path>) -> anyhow::Result<SetupChoices> {
    let (cfg, _) = crate::config::file::load_layered(config)?;
    let plan = cfg
        .defaults
        .sweep
        .as_ref()
        .and_then(|n| cfg.sweeps.get(n))
        .cloned()
        .unwrap_or_default();
    Ok(SetupChoices {
        endpoints: cfg.endpoints.keys().cloned().collect(),
        sagemaker_endpoints: cfg
            .endpoints
            .iter()
            .filter(|(_, e)| e.kind == crate::config::file::EndpointKind::Sagemaker)
            .map(|(name, _)| name.clone())
            .collect(),
        profiles: cfg.profiles.keys().cloned().collect(),
        default_endpoint: cfg
            .defaults
            .endpoint
            .clone()
            .unwrap_or_else(|| "sim".into()),
        default_profile: cfg.defaults.profile.clone().unwrap_or_else(|| "rag".into()),
        default_levels: plan
            .concurrency
            .map(|v| v.iter().map(|p| p.0).collect())
            .unwrap_or_else(|| vec![16, 64, 256, 1024]),
        default_requests: plan.request_count.map_or(1024, |p| p.0),
    })
}

/// How the dashboard ended: its final state (so the caller can print the report after the
/// terminal is restored), and the signal that ended it, if one did.
pub struct Ended {
    pub app: App,
    pub signal: Option<Caught>,
}

/// What the dashboard does first.
pub enum Opening {
    /// The setup screen.
    Setup,
    /// Launches this run at once.
    Launch(Box<LaunchRequest>),
    /// Watches a run served elsewhere (`rightsize watch`), read-only, read with its plan
    /// (fetched before the terminal was taken over).
    Watch(Box<(Watched, Analysis)>),
}

/// Runs the dashboard until the user quits or a stopping signal comes.
pub async fn run_loop(
    terminal: &mut ratatui::DefaultTerminal,
    mut app: App,
    config: Option<PathBuf>,
    results_root: Option<PathBuf>,
    opening: Opening,
) -> anyhow::Result<Ended> {
    let signalled = CancellationToken::new();
    let signals = crate::headless::signals::watch(signalled.clone());
    let (input_tx, mut input_rx) = mpsc::channel::<Input>(64);
    let stop_input = Arc::new(AtomicBool::new(false));
    let input_thread = spawn_input(input_tx, stop_input.clone());
    let mut frame = tokio::time::interval(FRAME);
    frame.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    // flags fill the form, and the form is what runs, now and every time after
    let (mut pending, watch) = match opening {
        Opening::Setup => (None, None),
        Opening::Launch(req) => {
            let req = *req;
            let choices = choices(config.as_deref()).unwrap_or_default();
            app.setup = SetupForm::from_request(&choices, &req);
            (Some(Action::Start(Box::new(app.setup.to_request()))), None)
        }
        Opening::Watch(w) => (None, Some(*w)),
    };
    let mut dash = Dashboard::new(app, config, results_root, signalled);
    if let Some((watched, analysis)) = watch {
        dash.watch(watched, analysis);
    }

    loop {
        if let Some(action) = pending.take() {
            match dash.apply(action).await {
                Next::Wait => dash.dirty = true,
                Next::Then(action) => {
                    pending = Some(action);
                    continue;
                }
                Next::Leave => break,
            }
        }
        if let Next::Leave = dash.draw(terminal) {
            break;
        }
        match dash.wait(&mut frame, &mut input_rx).await {
            Next::Wait => {}
            Next::Then(action) => pending = Some(action),
            Next::Leave => break,
        }
    }
    stop_input.store(true, Ordering::Relaxed);
    // after a signal or a failed draw the terminal may be gone, and its input thread with it
    // in a poll that never settles (crossterm on a closed tty): not waited for
    if !dash.terminal_lost && !dash.signalled.is_cancelled() {
        let _ = input_thread.join();
    }
    Ok(Ended {
        app: dash.app,
        signal: signals
            .caught()
            .or(dash.terminal_lost.then_some(Caught::Hangup)),
    })
}

/// What the loop does after a step.
enum Next {
    /// Draw if something changed, then wait for what happens next.
    Wait,
    /// Carry out this action first, before drawing (a deleted run's list is reloaded).
    Then(Action),
    /// Leave the loop.
    Leave,
}

/// The loop's state between frames: the app, the run and export going on, and how the
/// dashboard is ending.
struct Dashboard {
    app: App,
    config: Option<PathBuf>,
    results_root: Option<PathBuf>,
    /// Set by a stopping signal.
    signalled: CancellationToken,
    /// The live run's events; replaced by a fresh channel for each run.
    events_rx: mpsc::Receiver<EngineEvent>,
    live: Option<LiveRun>,
    /// A run served elsewhere, being watched (the session launches no run of its own while
    /// or after it is: `app.watching`).
    watching: Option<Watching>,
    exporting: Option<Export>,
    quitting: bool,
    stopping_for_signal: bool,
    /// The terminal went away (a draw failed: EIO on a closed tty).
    terminal_lost: bool,
    dirty: bool,
}

impl Dashboard {
    fn new(
        app: App,
        config: Option<PathBuf>,
        results_root: Option<PathBuf>,
        signalled: CancellationToken,
    ) -> Dashboard {
        Dashboard {
            app,
            config,
            results_root,
            signalled,
            events_rx: mpsc::channel::<EngineEvent>(1).1,
            live: None,
            watching: None,
            exporting: None,
            quitting: false,
            stopping_for_signal: false,
            terminal_lost: false,
            dirty: true,
        }
    }

    /// Carries out what a key (or the flags) asked for.
    async fn apply(&mut self, action: Action) -> Next {
        match action {
            Action::Start(_) if self.app.watching => {
                self.app.status =
                    Some("a watched run is read-only: quit (q) to start one of your own".into());
            }
            Action::Start(args) => self.start(*args).await,
            Action::Stop => {
                if let Some(r) = &self.live {
                    r.cancel.cancel();
                }
                if let Some(w) = &self.watching {
                    self.app.status = Some(w.stop().await);
                }
            }
            Action::Quit if self.watching.is_some() => {
                if let Some(w) = self.watching.take() {
                    w.leave.cancel();
                }
                return Next::Leave;
            }
            Action::Quit => {
                if self.live.is_some() {
                    self.app.status = Some("stopping the run before quitting...".into());
                }
                return self.quit();
            }
            Action::LoadRuns => self.load_runs(),
            Action::DeleteRun(path) => {
                self.delete_run(&path);
                return Next::Then(Action::LoadRuns);
            }
            Action::Export { run, compare } => self.export(run, compare),
            Action::None => {}
        }
        Next::Wait
    }

    /// Launches a run in the background, its events on a fresh channel.
    async fn start(&mut self, request: LaunchRequest) {
        let (tx, rx) = mpsc::channel(256);
        self.events_rx = rx;
        match start_run(request, self.config.as_deref(), tx).await {
            Ok((run, scale, analysis, gate)) => {
                self.app.run_started(scale, analysis);
                self.app.gate = Some(gate);
                self.live = Some(run);
            }
            Err(e) => self.app.start_failed(format!("{e:#}")),
        }
    }

    /// Quits once the live run has stopped: cancels it, or leaves now if there is none.
    fn quit(&mut self) -> Next {
        self.quitting = true;
        match &self.live {
            Some(r) => {
                r.cancel.cancel();
                Next::Wait
            }
            None => Next::Leave,
        }
    }

    /// Reads the past runs of the results folder into the runs screen.
    fn load_runs(&mut self) {
        let app = &mut self.app;
        match &self.results_root {
            Some(root) => match load_runs(root) {
                Ok(runs) => {
                    app.runs_selected = app.runs_selected.min(runs.len().saturating_sub(1));
                    app.runs = runs;
                }
                Err(e) => app.status = Some(format!("cannot list runs: {e}")),
            },
            None => app.status = Some("no results folder on this platform".into()),
        }
    }

    /// Deletes a past run's folder.
    fn delete_run(&mut self, path: &Path) {
        match std::fs::remove_dir_all(path) {
            Ok(()) => {
                self.app.run_deleted(path);
                self.app.status = Some(format!("deleted {}", path.display()));
            }
            Err(e) => self.app.status = Some(format!("cannot delete: {e}")),
        }
    }

    /// Starts exporting a run, unless an export is already running.
    fn export(&mut self, run: PathBuf, compare: Option<PathBuf>) {
        match &self.exporting {
            Some(_) => self.app.status = Some("an export is already running".into()),
            None => {
                let job = Export::start(run, compare);
                self.app.status = Some(job.progress());
                self.exporting = Some(job);
            }
        }
    }

    /// Draws a frame if something changed; a failed draw ends the dashboard as a hangup.
    fn draw(&mut self, terminal: &mut ratatui::DefaultTerminal) -> Next {
        // after a signal the terminal is given back: nothing more is drawn
        if !self.dirty || self.signalled.is_cancelled() || self.terminal_lost {
            return Next::Wait;
        }
        // the size scrolling stops by is the one drawn on
        if let Ok(size) = terminal.size() {
            self.app.size = (size.width, size.height);
        }
        let mut next = Next::Wait;
        if terminal.draw(|f| render(f, &self.app)).is_err() {
            // nobody is left to see or press anything: the run ends as a hangup ends a
            // headless one, keeping what it measured
            self.terminal_lost = true;
            next = self.quit();
        }
        self.dirty = false;
        next
    }

    /// Waits for the next thing to happen (a frame, the export's or the run's end, engine
    /// events, a signal, a key) and takes it in.
    async fn wait(&mut self, frame: &mut Interval, input_rx: &mut mpsc::Receiver<Input>) -> Next {
        tokio::select! {
            _ = frame.tick() => {
                // the export's clock: the screen keeps drawing while the files are written
                if let Some(job) = &self.exporting {
                    self.app.status = Some(job.progress());
                    self.dirty = true;
                }
            }
            done = joined(self.exporting.as_mut().map(|job| &mut job.handle)), if self.exporting.is_some() => {
                if let Some(job) = self.exporting.take() {
                    self.app.status = Some(job.finished(done));
                }
                self.dirty = true;
            }
            Some(ev) = self.events_rx.recv() => {
                self.app.on_engine(&ev);
                self.drain_events();
                self.dirty = true;
            }
            _ = self.signalled.cancelled(), if !self.stopping_for_signal => {
                self.stopping_for_signal = true;
                super::terminal::restore();
                return self.quit();
            }
            Some(input) = input_rx.recv(), if !self.signalled.is_cancelled() && !self.terminal_lost => {
                self.dirty = true;
                if let Input::Key(k) = input {
                    return Next::Then(self.app.on_key(k));
                }
            }
            done = joined(self.live.as_mut().map(|r| &mut r.handle)), if self.live.is_some() => {
                return self.run_finished(done);
            }
            done = joined(self.watching.as_mut().map(|w| &mut w.handle)), if self.watching.is_some() => {
                self.watch_ended(done);
            }
        }
        Next::Wait
    }

    /// Starts watching a served run, read with its plan (`analysis`): its events from the
    /// start on a fresh channel.
    fn watch(&mut self, watched: Watched, analysis: Analysis) {
        self.app.run_started(None, analysis);
        self.app.watching = true;
        self.app.status = Some(if watched.can_stop {
            "watching (read-only): x asks the run to stop, q leaves it running".into()
        } else {
            "watching (read-only): q leaves the run running".into()
        });
        let (tx, rx) = mpsc::channel(256);
        self.events_rx = rx;
        let leave = CancellationToken::new();
        let follower = watched.clone();
        let stop = leave.clone();
        let handle = tokio::spawn(async move { follower.follow(tx, stop).await });
        self.watching = Some(Watching {
            watched,
            leave,
            handle,
        });
    }

    /// The watched run's stream ended: its last events, and how the run ended.
    fn watch_ended(&mut self, done: Result<Result<Followed, String>, JoinError>) {
        self.drain_events();
        self.watching = None;
        let error = match done {
            Ok(Ok(Followed::Finished | Followed::Left)) => None,
            Ok(Ok(Followed::EndedEarly)) => Some(
                "the run's stream ended before the run finished: the run failed (its own \
                 output says why)"
                    .to_string(),
            ),
            Ok(Err(e)) => Some(e),
            Err(e) => Some(format!("the watcher's task failed: {e}")),
        };
        self.app.run_ended(error);
        self.dirty = true;
    }

    /// Folds the engine events already sent into the app.
    fn drain_events(&mut self) {
        while let Ok(ev) = self.events_rx.try_recv() {
            self.app.on_engine(&ev);
        }
    }

    /// The live run ended: its last events, the simulator stopped, the error it ended with;
    /// leaves if the user was quitting.
    fn run_finished(&mut self, done: Result<Result<RunOutcome, RunError>, JoinError>) -> Next {
        // deliver what the engine sent before it ended
        self.drain_events();
        if let Some(r) = self.live.take() {
            if let Some(sim) = r.sim {
                sim.shutdown();
            }
        }
        let error = match done {
            Ok(Ok(_)) => None,
            // a results write failed: the finished levels' summary is kept where it
            // still can be, and the failure says where
            Ok(Err(e @ RunError::Results(_))) => {
                let app = &self.app;
                let kind = if app.analysis.search.is_some() {
                    "search"
                } else {
                    "sweep"
                };
                Some(
                    match crate::headless::keep_summary(&app.run, kind, &app.analysis) {
                        Some(kept) => format!("{e}; {kept}"),
                        None => e.to_string(),
                    },
                )
            }
            Ok(Err(e)) => Some(e.to_string()),
            Err(e) => Some(format!("the run task failed: {e}")),
        };
        self.app.run_ended(error);
        self.dirty = true;
        if self.quitting {
            Next::Leave
        } else {
            Next::Wait
        }
    }
}

/// Waits for a background task's end; polled only when there is one (a `select!` branch
/// guarded by `is_some`).
async fn joined<T>(handle: Option<&mut JoinHandle<T>>) -> Result<T, JoinError> {
    handle.expect("guarded by is_some").await
}

/// An export running on a blocking thread (rendering a large run's charts takes long enough
/// to freeze the screen if done on the loop).
struct Export {
    handle: JoinHandle<anyhow::Result<Vec<PathBuf>>>,
    folder: PathBuf,
    started: Instant,
}

impl Export {
    /// Exports `run` (with `compare` overlaid) to `run/export/`: PNG, SVG, the HTML report
    /// beside them, CSV and JSON.
    fn start(run: PathBuf, compare: Option<PathBuf>) -> Export {
        let folder = run.join("export");
        let to = Some(folder.join(""));
        let req = crate::report::export_run::ExportRequest {
            png: to.clone(),
            svg: to.clone(),
            html: to.clone(),
            csv: to.clone(),
            json: to,
            compare: compare.into_iter().collect(),
            ..Default::default()
        };
        let dir = folder.clone();
        let handle = tokio::task::spawn_blocking(move || {
            std::fs::create_dir_all(&dir)?;
            crate::report::export_run::export_run(&run, &req)
        });
        Export {
            handle,
            folder,
            started: Instant::now(),
        }
    }

    /// `exporting (1.2 s) to DIR`: the clock first, so a narrow footer still shows it move.
    fn progress(&self) -> String {
        format!(
            "exporting ({:.1} s) to {}",
            self.started.elapsed().as_secs_f64(),
            self.folder.display()
        )
    }

    /// What the status line says when the export ended.
    fn finished(
        &self,
        done: Result<anyhow::Result<Vec<PathBuf>>, tokio::task::JoinError>,
    ) -> String {
        match done {
            Ok(Ok(files)) => format!(
                "exported {} files to {} in {:.1} s",
                files.len(),
                self.folder.display(),
                self.started.elapsed().as_secs_f64()
            ),
            Ok(Err(e)) => format!("export failed: {e:#}"),
            Err(e) => format!("export failed: {e}"),
        }
    }
}

async fn start_run(
    request: LaunchRequest,
    config: Option<&Path>,
    events: mpsc::Sender<EngineEvent>,
) -> anyhow::Result<(
    LiveRun,
    Option<f64>,
    crate::plan::Analysis,
    crate::plan::gate::Gate,
)> {
    let launch = crate::launch::resolve(&request, config)?;
    let Prepared {
        req,
        planner,
        analysis,
        gate,
        sim,
        sim_time_scale,
        ..
    } = prepare(launch).await?;
    let cancel = CancellationToken::new();
    let handle = tokio::spawn(engine::run(req, planner, events, cancel.clone()));
    Ok((
        LiveRun {
            cancel,
            handle,
            sim,
        },
        sim_time_scale,
        analysis,
        gate,
    ))
}
