//! The dashboard (ratatui): pick an endpoint, workload and plan, launch a run in the
//! background, watch the curves form, browse past runs. The engine knows nothing of it: the
//! dashboard folds the same engine events through the same reducer as the headless printer.

pub mod app;
pub mod campaign;
mod campaign_keys;
pub mod campaign_loop;
pub mod campaign_watch;
pub mod event_loop;
pub mod history;
mod keys;
pub mod render;
pub mod series;
pub mod server_series;
pub mod setup;
pub mod setup_fields;
mod setup_sagemaker;
mod terminal;
pub mod timeline;

use std::path::PathBuf;
use std::process::ExitCode;

/// Opens the dashboard and runs it ([`session`]); exits as the run on its screen would.
pub async fn run_dashboard(
    config: Option<PathBuf>,
    start: Option<crate::launch::LaunchRequest>,
) -> anyhow::Result<ExitCode> {
    let choices = event_loop::choices(config.as_deref())?;
    let (cfg, _) = crate::config::file::load_layered(config.as_deref())?;
    // `--out` is where runs go, where the runs screen looks, and where the log goes
    let results_root = start
        .as_ref()
        .and_then(|r| r.run().out.clone())
        .or_else(|| cfg.defaults.results_dir.clone())
        .or_else(crate::report::default_root);
    let _log_guard = init_file_log(results_root.as_deref());
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let app = app::App::new(&choices, color);
    let opening = match start {
        Some(req) => event_loop::Opening::Launch(Box::new(req)),
        None => event_loop::Opening::Setup,
    };
    let (app, signal) = session(app, config, results_root, opening).await?;
    Ok(ExitCode::from(
        signal.map_or_else(|| exit_code(&app), |s| s.exit_code()),
    ))
}

/// One session on the terminal: the loop from `opening` until the user leaves, the terminal
/// restored on every path (ratatui's panic hook covers panics), then the run screen's level
/// table on stdout. Gives the app as it ended and the stopping signal, if one came.
async fn session(
    app: app::App,
    config: Option<PathBuf>,
    results_root: Option<PathBuf>,
    opening: event_loop::Opening,
) -> anyhow::Result<(app::App, Option<crate::headless::signals::Caught>)> {
    let mut terminal = terminal::init()?;
    let result = event_loop::run_loop(&mut terminal, app, config, results_root, opening).await;
    terminal::restore();
    let event_loop::Ended { app, signal } = result?;
    if !app.run.levels.is_empty() {
        // after a SIGHUP the terminal may be gone: nothing to print to is not an error
        use std::io::Write;
        let table = crate::report::render_table(&app.run.levels, &[]);
        let _ = std::io::stdout().lock().write_all(table.as_bytes());
    }
    Ok((app, signal))
}

/// The dashboard on a run served elsewhere (`rightsize watch URL`), read-only: the same
/// screens, folded by the same reducer from the run's event stream. Ends when the user
/// quits; then prints the run's level table as the dashboard does. Exits 1 when the run
/// could not be followed (out of reach, refused) or ended without finishing, else 0.
pub async fn run_watch(
    config: Option<PathBuf>,
    watched: crate::serve::follow::Watched,
    analysis: crate::plan::Analysis,
) -> anyhow::Result<ExitCode> {
    let choices = event_loop::choices(config.as_deref())?;
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let app = app::App::new(&choices, color);
    let results_root = crate::report::default_root();
    let opening = event_loop::Opening::Watch(Box::new((watched, analysis)));
    let (app, signal) = session(app, config, results_root, opening).await?;
    let failed = u8::from(app.failure.is_some());
    Ok(ExitCode::from(signal.map_or(failed, |s| s.exit_code())))
}

/// The exit code of a dashboard session, from the run on its run screen, as a headless run
/// of it would end: 130 when it was stopped (x or Ctrl-C, what a shell reports for Ctrl-C),
/// 1 when it failed (its failure is in the notes) or every request failed, 3 when its answer
/// failed the gate, else 0 (also when no run was launched, or a past run is on screen).
fn exit_code(app: &app::App) -> u8 {
    use crate::headless::exit::{EXIT_INTERRUPTED, EXIT_RUN_FAILED};
    if app.run.interrupted {
        return EXIT_INTERRUPTED;
    }
    if app.failure.is_some() {
        return EXIT_RUN_FAILED;
    }
    let Some(gate) = &app.gate else {
        return 0;
    };
    // the analysis the run screen shows (refreshed as each level finished)
    let answer = app.report.as_ref().and_then(|r| r.answer);
    let (code, lines) = crate::headless::finished_code(&app.run.levels, answer.as_ref(), gate);
    for line in lines {
        // after a lost terminal stderr may be gone too: nothing to say it to is not an error
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{line}");
    }
    code
}

/// Logs go to `rightsize.log` beside the runs folder, never to the screen.
fn init_file_log(results_root: Option<&std::path::Path>) -> Option<()> {
    let dir = results_root?.parent()?.to_path_buf();
    std::fs::create_dir_all(&dir).ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("rightsize.log"))
        .ok()?;
    tracing_subscriber::fmt()
        .with_writer(std::sync::Mutex::new(file))
        .with_ansi(false)
        .try_init()
        .ok()
}

#[cfg(test)]
mod setup_tests;
#[cfg(test)]
mod snapshot_tests;
#[cfg(test)]
mod snapshot_tests_open_loop;
#[cfg(test)]
mod snapshot_tests_server;
