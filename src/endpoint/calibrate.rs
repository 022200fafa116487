//! Server calibration, the requests: in pre-flight, a few prompts of known client length with
//! `max_tokens = 1`, each answer's `usage.prompt_tokens` read back, and the line through the
//! pairs (`workload::calibration`). Synthetic prompts are then sized so that the server's count
//! is the target. See `docs/workloads.md`.

use super::client::Endpoint;
use crate::workload::calibration::{Calibration, CalibrationPoint, LengthFit, CALIBRATION_LENGTHS};
use crate::workload::WorkloadSpec;

/// Sends the calibration requests and fits the line. A calibration that cannot be made (a
/// failed request, no usage in the answers) comes back not applied, with a note saying why.
pub async fn calibrate(ep: &Endpoint, w: &WorkloadSpec) -> Calibration {
    let mut points = Vec::with_capacity(CALIBRATION_LENGTHS.len());
    let not_applied = |points: Vec<CalibrationPoint>, note: String| Calibration {
        points,
        fit: None,
        applied: false,
        note: Some(note),
    };
    for (i, tokens) in CALIBRATION_LENGTHS.into_iter().enumerate() {
        let prompt = w.calibration_prompt(i as u64, tokens);
        let out = ep.send(&prompt.text, prompt.max_tokens).await;
        if let Some(e) = out.error {
            return not_applied(
                points,
                format!(
                    "the calibration request of {tokens} tokens failed ({}: {}); prompts keep \
                     the client's lengths",
                    e.kind, e.message
                ),
            );
        }
        let Some(server_tokens) = out.server_input_tokens else {
            return not_applied(
                points,
                "the server reports no usage.prompt_tokens; prompts keep the client's lengths"
                    .into(),
            );
        };
        points.push(CalibrationPoint {
            client_tokens: prompt.input_tokens,
            server_tokens,
        });
    }
    let Some(fit) = LengthFit::through(&points) else {
        return not_applied(
            points,
            "the server's counts do not grow with the prompt; prompts keep the client's \
             lengths"
                .into(),
        );
    };
    let dataset = w.dataset.is_some();
    Calibration {
        points,
        fit: Some(fit),
        applied: !dataset,
        note: dataset
            .then(|| "measured only: a dataset's prompts are sent as the file has them".into()),
    }
}
