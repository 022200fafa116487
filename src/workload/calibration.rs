//! Server calibration, the arithmetic: from a few (client count, server count) pairs, the
//! straight line `server = server_per_client * client + overhead` by least squares, and the
//! client length that makes the server count a target. With the server's own tokenizer on the
//! client, `server_per_client` is 1 and `overhead` is the chat template (plus BOS); with
//! another tokenizer the slope absorbs the difference. The requests themselves are sent in
//! pre-flight (`endpoint::calibrate`). See `docs/workloads.md`.

use serde::{Deserialize, Serialize};

/// Client lengths (tokens) of the calibration prompts.
pub const CALIBRATION_LENGTHS: [u32; 3] = [16, 128, 1024];

/// One calibration request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalibrationPoint {
    /// The prompt's length by the client's tokenizer.
    pub client_tokens: u32,
    /// The server's `usage.prompt_tokens` for it.
    pub server_tokens: u32,
}

/// The line through the points.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LengthFit {
    /// Server tokens per client token (1 when both tokenize alike).
    pub server_per_client: f64,
    /// Tokens the server adds to every prompt (chat template, BOS).
    pub overhead_tokens: f64,
}

/// What calibration found, as `run.json` records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub points: Vec<CalibrationPoint>,
    /// The fitted line, when the points allowed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<LengthFit>,
    /// Synthetic prompts are sized with the fit (datasets keep their own text: false).
    pub applied: bool,
    /// Why the fit is not applied, when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl LengthFit {
    /// The least-squares line through `points`; `None` with fewer than two distinct client
    /// lengths or a slope that is not positive.
    pub fn through(points: &[CalibrationPoint]) -> Option<LengthFit> {
        let n = points.len() as f64;
        let mean = |f: &dyn Fn(&CalibrationPoint) -> f64| points.iter().map(f).sum::<f64>() / n;
        let mx = mean(&|p| f64::from(p.client_tokens));
        let my = mean(&|p| f64::from(p.server_tokens));
        let sxx: f64 = points
            .iter()
            .map(|p| (f64::from(p.client_tokens) - mx).powi(2))
            .sum();
        let sxy: f64 = points
            .iter()
            .map(|p| (f64::from(p.client_tokens) - mx) * (f64::from(p.server_tokens) - my))
            .sum();
        if points.len() < 2 || sxx <= 0.0 {
            return None;
        }
        let slope = sxy / sxx;
        (slope > 0.0 && slope.is_finite()).then_some(LengthFit {
            server_per_client: slope,
            overhead_tokens: my - slope * mx,
        })
    }

    /// The client length whose server count is closest to `server_target` (at least 1).
    pub fn client_tokens_for(&self, server_target: u32) -> u32 {
        let x = (f64::from(server_target) - self.overhead_tokens) / self.server_per_client;
        x.round().clamp(1.0, f64::from(u32::MAX)) as u32
    }
}

impl Calibration {
    /// The client length for `server_target` when the fit is applied, else the target.
    pub fn client_tokens_for(&self, server_target: u32) -> u32 {
        match (&self.fit, self.applied) {
            (Some(f), true) => f.client_tokens_for(server_target),
            _ => server_target,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(p: &[(u32, u32)]) -> Vec<CalibrationPoint> {
        p.iter()
            .map(|&(c, s)| CalibrationPoint {
                client_tokens: c,
                server_tokens: s,
            })
            .collect()
    }

    #[test]
    fn same_tokenizer_gives_slope_one_and_the_template() {
        let f = LengthFit::through(&pts(&[(16, 53), (128, 165), (1024, 1061)])).unwrap();
        assert!((f.server_per_client - 1.0).abs() < 1e-12);
        assert!((f.overhead_tokens - 37.0).abs() < 1e-9);
        assert_eq!(f.client_tokens_for(128), 91);
        assert_eq!(f.client_tokens_for(1024), 987);
        // a target inside the template still sends one token
        assert_eq!(f.client_tokens_for(20), 1);
    }

    #[test]
    fn another_tokenizer_scales() {
        // the server counts 1.25 tokens per client token plus 5
        let f = LengthFit::through(&pts(&[(16, 25), (128, 165), (1024, 1285)])).unwrap();
        assert!((f.server_per_client - 1.25).abs() < 1e-9);
        assert_eq!(f.client_tokens_for(1285), 1024);
    }

    #[test]
    fn degenerate_points_give_no_fit() {
        assert_eq!(LengthFit::through(&pts(&[(16, 20)])), None);
        assert_eq!(LengthFit::through(&pts(&[(16, 20), (16, 21)])), None);
        assert_eq!(LengthFit::through(&pts(&[(16, 90), (128, 20)])), None);
        let c = Calibration {
            points: vec![],
            fit: None,
            applied: false,
            note: Some("no usage".into()),
        };
        assert_eq!(c.client_tokens_for(128), 128);
    }
}
