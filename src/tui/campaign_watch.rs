//! `rightsize watch` on a served campaign: the campaign view, read-only, folded from the
//! campaign's events as they come (from its start, so a late watcher sees every candidate so
//! far). `q` leaves the campaign running; `x` asks it to stop (only with its token); when
//! the stream ends the status line says how the campaign ended.

use super::campaign::CampaignView;
use super::campaign_keys::{spawn_key_reader, StopKey};
use crate::campaign::campaign_file::CampaignRecord;
use crate::campaign::events::CampaignEvent;
use crate::serve::follow::{Followed, Watched};
use std::process::ExitCode;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

type Following = JoinHandle<Result<Followed, String>>;

/// Opens the view on the campaign `watched` serves, `rec` its record as it began. Exits 0
/// when the campaign's stream ended with its last event (or the user left), 1 when it broke
/// off (the campaign failed, or stayed out of reach).
pub async fn run_campaign_watch(watched: Watched, rec: CampaignRecord) -> anyhow::Result<ExitCode> {
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut view = CampaignView::new(&rec, color);
    view.keys = if watched.can_stop {
        "watching: x asks it to stop, q leaves it running"
    } else {
        "watching (read-only): q leaves it running"
    };
    let (tx, mut rx) = mpsc::channel::<CampaignEvent>(512);
    let leave = CancellationToken::new();
    let (follower, until) = (watched.clone(), leave.clone());
    let mut following: Option<Following> =
        Some(tokio::spawn(
            async move { follower.follow(tx, until).await },
        ));
    let signalled = CancellationToken::new();
    let _signals = crate::headless::signals::watch(signalled.clone());
    let (mut key_rx, keys) = spawn_key_reader();
    let mut terminal = super::terminal::init()?;
    let mut frame = tokio::time::interval(Duration::from_millis(50));
    frame.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let (mut dirty, mut failed) = (true, false);
    // left because the terminal went away or a signal came: nobody at the keys
    let mut unattended = false;
    loop {
        if dirty {
            if terminal
                .draw(|f| super::render::campaign::render(f, &view))
                .is_err()
            {
                unattended = true;
                break;
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
            done = async { following.as_mut().expect("guarded by is_some").await }, if following.is_some() => {
                following = None;
                view.apply_sent(&mut rx);
                let (status, broke) = ended_status(&view, done);
                (view.status, view.ended, failed) = (Some(status), true, broke);
                dirty = true;
            }
            key = key_rx.recv() => match key {
                Some(StopKey::Stop) if !view.ended => {
                    view.status = Some(if watched.can_stop {
                        watched.stop().await
                    } else {
                        "x asks the campaign to stop only with its token: set \
                         RIGHTSIZE_SERVE_TOKEN and watch again"
                            .into()
                    });
                    dirty = true;
                }
                Some(StopKey::Stop) => {}
                // q or Ctrl-C: the watcher leaves, the campaign goes on
                Some(StopKey::Quit | StopKey::Interrupt) => break,
                // the terminal gone: the same
                None => {
                    unattended = true;
                    break;
                }
            },
            _ = signalled.cancelled() => {
                unattended = true;
                break;
            }
        }
    }
    leave.cancel();
    super::terminal::restore();
    keys.end(unattended);
    Ok(ExitCode::from(u8::from(failed)))
}

/// What the status line says once the stream has ended, and whether it broke off.
fn ended_status(
    view: &CampaignView,
    done: Result<Result<Followed, String>, tokio::task::JoinError>,
) -> (String, bool) {
    match (done, view.outcome) {
        (Ok(Ok(Followed::Finished)), Some(end)) => {
            (format!("{}: q leaves", end.status_line()), false)
        }
        (Ok(Ok(Followed::Left)), _) => ("left: q leaves".into(), false),
        (Ok(Ok(_)), _) => (
            "the campaign's stream ended before the campaign did: it failed (its own output \
             says why); q leaves"
                .into(),
            true,
        ),
        (Ok(Err(e)), _) => (format!("{e}; q leaves"), true),
        (Err(e), _) => (format!("the watcher's task failed: {e}; q leaves"), true),
    }
}
