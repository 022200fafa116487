//! The headless campaign's progress on stderr, read from its events as the dashboard's view
//! reads them: each candidate's line as it starts, its search's progress as a search prints
//! its own, and why it failed when it did.

use super::campaign_file::CandidateState;
use super::events::CampaignEvent;
use crate::engine::EngineEvent;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The running candidate's printer: its index, where its engine events go, the task.
type Printing = (usize, mpsc::Sender<EngineEvent>, JoinHandle<()>);

/// Prints the campaign's events until they end; `lines` names each candidate
/// (`label (what it is)`).
pub async fn print_campaign(mut rx: mpsc::Receiver<CampaignEvent>, lines: Vec<String>) {
    let n = lines.len();
    let mut running: Option<Printing> = None;
    while let Some(ev) = rx.recv().await {
        match ev {
            CampaignEvent::State {
                index,
                state: CandidateState::Running,
                ..
            } => {
                finish(running.take()).await;
                let line = lines.get(index).map_or("", String::as_str);
                eprintln!("candidate {}/{n}: {line}", index + 1);
                let (tx, engine_rx) = mpsc::channel(256);
                let task = tokio::spawn(async move {
                    crate::headless::printer::print_progress(engine_rx, None).await;
                });
                running = Some((index, tx, task));
            }
            CampaignEvent::State { index, error, .. } => {
                if running.as_ref().is_some_and(|(i, _, _)| *i == index) {
                    finish(running.take()).await;
                }
                if let Some(e) = error {
                    eprintln!("candidate {}/{n} failed: {e}", index + 1);
                }
            }
            CampaignEvent::Engine { index, event } => {
                if let Some((i, tx, _)) = &running {
                    if *i == index {
                        let _ = tx.send(event).await;
                    }
                }
            }
            CampaignEvent::Ranking(_) | CampaignEvent::Ended(_) => {}
        }
    }
    finish(running).await;
}

/// Ends a candidate's printer once it has printed what it was sent.
async fn finish(running: Option<Printing>) {
    if let Some((_, tx, task)) = running {
        drop(tx);
        let _ = task.await;
    }
}
