//! The campaign view's loop ([`run_campaign_view`]): runs the campaign in the background,
//! folds its events into the [`CampaignView`], draws it frame-throttled, and stops the
//! campaign on `x`, `q` or Ctrl-C, on a stopping signal, or when the terminal goes away.

use super::campaign::CampaignView;
use super::campaign_keys::spawn_key_reader;
use crate::campaign::events::CampaignEvent;
use crate::campaign::runner::{CampaignEnd, CampaignRun};
use crate::launch::Prepared;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Runs the campaign with the view on the terminal; returns the campaign and how it ended
/// once the user quits (after it ended, or after stopping it).
pub async fn run_campaign_view(
    mut run: CampaignRun,
    prepared: Vec<Option<Prepared>>,
    cancel: CancellationToken,
) -> anyhow::Result<(CampaignRun, anyhow::Result<CampaignEnd>)> {
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut view = CampaignView::new(&run.record, color);
    let (tx, mut rx) = mpsc::channel::<CampaignEvent>(512);
    let worker_cancel = cancel.clone();
    let mut worker = Some(tokio::spawn(async move {
        let end = run.run_all(prepared, worker_cancel, tx).await;
        (run, end)
    }));
    let (mut key_rx, keys) = spawn_key_reader();
    let mut terminal = super::terminal::init()?;
    let mut frame = tokio::time::interval(Duration::from_millis(50));
    frame.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut dirty = true;
    let mut outcome = None;
    // Stopped by a stopping signal (the token cancelled, not by a key) or by the terminal
    // going away: there is nobody left to press q, so the view quits once the campaign ended.
    let (mut stopped_by_key, mut unattended) = (false, false);
    // the terminal went away (a draw failed): nobody to draw for or to press q
    let mut terminal_lost = false;
    let result = loop {
        if dirty && !terminal_lost {
            if terminal
                .draw(|f| super::render::campaign::render(f, &view))
                .is_err()
            {
                terminal_lost = true;
                unattended = true;
                cancel.cancel();
                if view.ended {
                    break Ok(());
                }
            }
            dirty = false;
        }
        tokio::select! {
            _ = frame.tick() => {}
            Some(ev) = rx.recv() => {
                view.apply(&ev);
                view.apply_sent(&mut rx);
                dirty = true;
            }
            done = async { worker.as_mut().expect("guarded by is_some").await }, if worker.is_some() => {
                worker = None;
                view.apply_sent(&mut rx);
                match done {
                    Ok((r, end)) => {
                        view.status = Some(end_status(&end));
                        outcome = Some((r, end));
                    }
                    Err(e) => break Err(anyhow::anyhow!("the campaign task failed: {e}")),
                }
                view.ended = true;
                dirty = true;
                if unattended {
                    break Ok(());
                }
            }
            _ = cancel.cancelled(), if !stopped_by_key && !unattended => {
                unattended = true;
                view.status = Some("stopping the running candidate (signal)...".into());
                dirty = true;
                if view.ended {
                    break Ok(());
                }
            }
            key = key_rx.recv(), if !unattended => {
                if key.is_none() {
                    unattended = true;
                    cancel.cancel();
                    if view.ended {
                        break Ok(());
                    }
                    continue;
                }
                if view.ended {
                    break Ok(());
                }
                stopped_by_key = true;
                cancel.cancel();
                view.status = Some("stopping the running candidate...".into());
                dirty = true;
            }
        }
    };
    super::terminal::restore();
    keys.end(unattended);
    result?;
    outcome.ok_or_else(|| anyhow::anyhow!("the campaign did not end"))
}

/// What the status line says once the campaign has ended.
fn end_status(end: &anyhow::Result<CampaignEnd>) -> String {
    match end {
        Ok(end) => format!("{}: press q to quit", end.status_line()),
        Err(e) => format!("campaign failed: {e:#}; press q to quit"),
    }
}
