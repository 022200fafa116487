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
use ratatui::crossterm::event::{self, Event, KeyEventKind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
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

/// Runs the dashboard until the user quits or a stopping signal comes; `start` launches a
/// run at once.
pub async fn run_loop(
    terminal: &mut ratatui::DefaultTerminal,
    mut app: App,
    config: Option<PathBuf>,
    results_root: Option<PathBuf>,
    start: Option<LaunchRequest>,
) -> anyhow::Result<Ended> {
    let signalled = CancellationToken::new();
    let signals = crate::headless::signals::watch(signalled.clone());
    let (input_tx, mut input_rx) = mpsc::channel::<Input>(64);
    let stop_input = Arc::new(AtomicBool::new(false));
    let input_thread = spawn_input(input_tx, stop_input.clone());
    // replaced by a fresh channel for each run
    let (_, mut events_rx) = mpsc::channel::<EngineEvent>(1);
    let mut live: Option<LiveRun> = None;
    let mut exporting: Option<Export> = None;
    let mut quitting = false;
    let mut stopping_for_signal = false;
    // the terminal went away (a draw failed: EIO on a closed tty)
    let mut terminal_lost = false;
    let mut dirty = true;
    let mut frame = tokio::time::interval(FRAME);
    frame.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    // flags fill the form, and the form is what runs, now and every time after
    let mut pending = start.map(|req| {
        app.setup = SetupForm::from_request(&choices(config.as_deref()).unwrap_or_default(), &req);
        Action::Start(Box::new(app.setup.to_request()))
    });

    loop {
        if let Some(action) = pending.take() {
            match action {
                Action::Start(args) => {
                    let (tx, rx) = mpsc::channel(256);
                    events_rx = rx;
                    match start_run(*args, config.as_deref(), tx).await {
                        Ok((run, scale, analysis)) => {
                            app.run_started(scale, analysis);
                            live = Some(run);
                        }
                        Err(e) => app.start_failed(format!("{e:#}")),
                    }
                }
                Action::Stop => {
                    if let Some(r) = &live {
                        r.cancel.cancel();
                    }
                }
                Action::Quit => {
                    quitting = true;
                    match &live {
                        Some(r) => {
                            r.cancel.cancel();
                            app.status = Some("stopping the run before quitting...".into());
                        }
                        None => break,
                    }
                }
                Action::LoadRuns => match &results_root {
                    Some(root) => match load_runs(root) {
                        Ok(runs) => {
                            app.runs_selected = app.runs_selected.min(runs.len().saturating_sub(1));
                            app.runs = runs;
                        }
                        Err(e) => app.status = Some(format!("cannot list runs: {e}")),
                    },
                    None => app.status = Some("no results folder on this platform".into()),
                },
                Action::DeleteRun(path) => {
                    match std::fs::remove_dir_all(&path) {
                        Ok(()) => {
                            app.run_deleted(&path);
                            app.status = Some(format!("deleted {}", path.display()));
                        }
                        Err(e) => app.status = Some(format!("cannot delete: {e}")),
                    }
                    pending = Some(Action::LoadRuns);
                    continue;
                }
                Action::Export { run, compare } => match &exporting {
                    Some(_) => app.status = Some("an export is already running".into()),
                    None => {
                        let job = Export::start(run, compare);
                        app.status = Some(job.progress());
                        exporting = Some(job);
                    }
                },
                Action::None => {}
            }
            dirty = true;
        }
        // after a signal the terminal is given back: nothing more is drawn
        if dirty && !signalled.is_cancelled() && !terminal_lost {
            // the size scrolling stops by is the one drawn on
            if let Ok(size) = terminal.size() {
                app.size = (size.width, size.height);
            }
            if terminal.draw(|f| render(f, &app)).is_err() {
                // nobody is left to see or press anything: the run ends as a hangup ends a
                // headless one, keeping what it measured
                terminal_lost = true;
                quitting = true;
                match &live {
                    Some(r) => r.cancel.cancel(),
                    None => break,
                }
            }
            dirty = false;
        }
        tokio::select! {
            _ = frame.tick() => {
                // the export's clock: the screen keeps drawing while the files are written
                if let Some(job) = &exporting {
                    app.status = Some(job.progress());
                    dirty = true;
                }
            }
            done = async { (&mut exporting.as_mut().expect("guarded by is_some").handle).await }, if exporting.is_some() => {
                if let Some(job) = exporting.take() {
                    app.status = Some(job.finished(done));
                }
                dirty = true;
            }
            Some(ev) = events_rx.recv() => {
                app.on_engine(&ev);
                while let Ok(ev) = events_rx.try_recv() {
                    app.on_engine(&ev);
                }
                dirty = true;
            }
            _ = signalled.cancelled(), if !stopping_for_signal => {
                stopping_for_signal = true;
                quitting = true;
                super::terminal::restore();
                match &live {
                    Some(r) => r.cancel.cancel(),
                    None => break,
                }
            }
            Some(input) = input_rx.recv(), if !signalled.is_cancelled() && !terminal_lost => {
                if let Input::Key(k) = input {
                    pending = Some(app.on_key(k));
                }
                dirty = true;
            }
            done = async { (&mut live.as_mut().expect("guarded by is_some").handle).await }, if live.is_some() => {
                // deliver what the engine sent before it ended
                while let Ok(ev) = events_rx.try_recv() {
                    app.on_engine(&ev);
                }
                if let Some(r) = live.take() {
                    if let Some(sim) = r.sim {
                        sim.shutdown();
                    }
                }
                let error = match done {
                    Ok(Ok(_)) => None,
                    // a results write failed: the finished levels' summary is kept where it
                    // still can be, and the failure says where
                    Ok(Err(e @ RunError::Results(_))) => {
                        let kind = if app.analysis.search.is_some() { "search" } else { "sweep" };
                        Some(match crate::headless::keep_summary(&app.run, kind, &app.analysis) {
                            Some(kept) => format!("{e}; {kept}"),
                            None => e.to_string(),
                        })
                    }
                    Ok(Err(e)) => Some(e.to_string()),
                    Err(e) => Some(format!("the run task failed: {e}")),
                };
                app.run_ended(error);
                dirty = true;
                if quitting {
                    break;
                }
            }
        }
    }
    stop_input.store(true, Ordering::Relaxed);
    // after a signal or a failed draw the terminal may be gone, and its input thread with it
    // in a poll that never settles (crossterm on a closed tty): not waited for
    if !terminal_lost && !signalled.is_cancelled() {
        let _ = input_thread.join();
    }
    Ok(Ended {
        app,
        signal: signals
            .caught()
            .or(terminal_lost.then_some(crate::headless::signals::Caught::Hangup)),
    })
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
) -> anyhow::Result<(LiveRun, Option<f64>, crate::plan::Analysis)> {
    let launch = crate::launch::resolve(&request, config)?;
    let Prepared {
        req,
        planner,
        analysis,
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
    ))
}
