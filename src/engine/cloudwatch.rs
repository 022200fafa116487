//! After a run against a SageMaker endpoint: its per-minute CloudWatch metrics for each level's
//! window (`telemetry::cloudwatch`), put into the level's `server.cloudwatch` and its file
//! written again. A failure to read them is a warning: the run's own measurements stand.

use std::collections::HashMap;

use tokio::sync::mpsc;

use super::events::EngineEvent;
use super::sink::RunSink;
use crate::endpoint::SageMakerTarget;
use crate::metrics::LevelSummary;
use crate::telemetry::cloudwatch::{read, Window};

/// Reads CloudWatch for every level in `windows` and records it in `levels` (and their files).
pub async fn record(
    target: &SageMakerTarget,
    timeout: std::time::Duration,
    windows: &HashMap<u32, Window>,
    levels: &mut [LevelSummary],
    sink: &mut dyn RunSink,
    events: &mpsc::Sender<EngineEvent>,
) -> std::io::Result<()> {
    let with: Vec<(usize, Window)> = levels
        .iter()
        .enumerate()
        .filter_map(|(i, l)| Some((i, *windows.get(&l.index)?)))
        .collect();
    if with.is_empty() {
        return Ok(());
    }
    let spans: Vec<Window> = with.iter().map(|(_, w)| *w).collect();
    let summaries = match read(target, timeout, &spans).await {
        Ok(s) => s,
        Err(why) => {
            let _ = events
                .send(EngineEvent::Warning(format!(
                    "CloudWatch: could not read the metrics of endpoint {}: {why}; the run has \
                     no per-minute server figures (they need cloudwatch:GetMetricData)",
                    target.endpoint_name
                )))
                .await;
            return Ok(());
        }
    };
    let mut empty = 0;
    for ((i, _), cw) in with.into_iter().zip(summaries) {
        if cw.minutes == 0 {
            empty += 1;
            continue;
        }
        let level = &mut levels[i];
        level.server.get_or_insert_with(Default::default).cloudwatch = Some(cw);
        sink.write_level(level)?;
    }
    if empty > 0 {
        let _ = events
            .send(EngineEvent::Warning(format!(
                "CloudWatch: no per-minute metrics yet for {empty} level(s) of endpoint {} \
                 (CloudWatch publishes a minute or more late)",
                target.endpoint_name
            )))
            .await;
    }
    Ok(())
}
