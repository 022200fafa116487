//! The CI gate: a run fails it (exit code 3) when its answer is below a required concurrency,
//! or when the answer or the throughput at it regressed against a baseline run.

use serde::{Deserialize, Serialize};

/// A run's answer: the concurrency it supports and the output throughput there.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub concurrency: u32,
    /// Output tokens/sec at `concurrency`.
    pub output_tps: f64,
}

/// What the gate checks.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Gate {
    /// Fail when the answer is below this.
    pub require_concurrency: Option<u32>,
    /// An earlier run's answer to compare with.
    pub baseline: Option<Answer>,
    /// Largest tolerated drop against the baseline (0.1 = 10 %).
    pub max_regression: f64,
}

/// Why the run fails the gate; empty when it passes.
pub fn check(answer: Option<&Answer>, gate: &Gate) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(n) = gate.require_concurrency {
        match answer {
            None => out.push(format!("no answer; at least {n} is required")),
            Some(a) if a.concurrency < n => out.push(format!(
                "the answer {} is below the required {n}",
                a.concurrency
            )),
            _ => {}
        }
    }
    if let Some(b) = gate.baseline {
        let floor = 1.0 - gate.max_regression;
        match answer {
            None => out.push(format!(
                "no answer; the baseline supported {}",
                b.concurrency
            )),
            Some(a) => {
                let pct = |now: f64, then: f64| (1.0 - now / then) * 100.0;
                if (a.concurrency as f64) < b.concurrency as f64 * floor {
                    out.push(format!(
                        "the answer fell from {} to {} ({:.1} % down, more than {:.0} %)",
                        b.concurrency,
                        a.concurrency,
                        pct(a.concurrency as f64, b.concurrency as f64),
                        gate.max_regression * 100.0
                    ));
                }
                if a.output_tps < b.output_tps * floor {
                    out.push(format!(
                        "throughput at the answer fell from {:.1} to {:.1} tok/s ({:.1} % down, \
                         more than {:.0} %)",
                        b.output_tps,
                        a.output_tps,
                        pct(a.output_tps, b.output_tps),
                        gate.max_regression * 100.0
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Answer = Answer {
        concurrency: 256,
        output_tps: 2800.0,
    };

    #[test]
    fn gate_table() {
        let base = |c, t| Gate {
            baseline: Some(Answer {
                concurrency: c,
                output_tps: t,
            }),
            max_regression: 0.1,
            ..Default::default()
        };
        let req = |n| Gate {
            require_concurrency: Some(n),
            ..Default::default()
        };
        let cases: &[(Option<&Answer>, Gate, Vec<&str>)] = &[
            (Some(&A), Gate::default(), vec![]),
            (Some(&A), req(256), vec![]),
            (
                Some(&A),
                req(257),
                vec!["the answer 256 is below the required 257"],
            ),
            (None, req(1), vec!["no answer; at least 1 is required"]),
            (Some(&A), base(284, 3000.0), vec![]),
            (
                Some(&A),
                base(320, 2800.0),
                vec!["the answer fell from 320 to 256 (20.0 % down, more than 10 %)"],
            ),
            (
                Some(&A),
                base(256, 3200.0),
                vec![
                    "throughput at the answer fell from 3200.0 to 2800.0 tok/s (12.5 % down, \
                     more than 10 %)",
                ],
            ),
            (
                None,
                base(64, 1.0),
                vec!["no answer; the baseline supported 64"],
            ),
        ];
        for (answer, gate, want) in cases {
            assert_eq!(check(*answer, gate), *want, "{gate:?}");
        }
    }
}
