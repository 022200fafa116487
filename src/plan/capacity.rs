//! Capacity planning (docs/search.md, "Planning numbers"): the ideal balance, the breaking point, and the
//! right-size factor with its costs, from a run's levels.

use super::range::at_concurrency;
use serde::{Deserialize, Serialize};

/// The user's peak traffic, in one of three units.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "unit", content = "value")]
pub enum Peak {
    /// Requests in flight at once.
    Concurrency(f64),
    /// Requests per second.
    Rps(f64),
    /// Output tokens per second.
    OutputTps(f64),
}

/// What right-sizing needs besides the measurements.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CapacityInputs {
    pub peak: Option<Peak>,
    /// Spare capacity on top of the peak (0.2 = 20 %).
    pub headroom: f64,
    /// Price of one instance per hour (any currency).
    pub price_per_hour: Option<f64>,
}

impl Default for CapacityInputs {
    fn default() -> Self {
        CapacityInputs {
            peak: None,
            headroom: 0.2,
            price_per_hour: None,
        }
    }
}

/// The operating point one instance is sized at.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IdealPoint {
    pub concurrency: u32,
    /// Output tokens/sec at that point.
    pub output_tps: f64,
    /// Requests/sec at that point.
    pub rps: f64,
    /// Mean end-to-end latency (ms) at that point.
    pub e2e_avg_ms: f64,
    /// Where this point may lie at 95 % (concurrency): the SLA boundary's range when the
    /// point is the highest passing level, the knee's bracket when it is the knee.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<[f64; 2]>,
    /// What the GPUs drew at that point, when `--gpu-metrics` (or the simulator) said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy: Option<PointEnergy>,
}

/// One instance's GPUs at the operating point: from its level's `server.gpu`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PointEnergy {
    /// Mean power of the instance's GPUs, watts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_w: Option<f64>,
    /// Energy per output token, joules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub joules_per_output_token: Option<f64>,
    /// Kilowatt-hours per million output tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kwh_per_million_output_tokens: Option<f64>,
}

/// Instances for the peak, and what they cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RightSize {
    pub peak: Peak,
    pub headroom: f64,
    /// One instance's capacity in the peak's unit (at the ideal point).
    pub per_instance: f64,
    pub instances: u32,
    /// Instances at the two ends of the ideal point's range (fewest, most).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instances_range: Option<[u32; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_hour: Option<f64>,
    /// At the ideal point: price per hour / output tokens per hour, times a million.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_per_million_output_tokens: Option<f64>,
    /// The fleet's GPUs at the peak, kilowatts (so kWh an hour): instances times one
    /// instance's mean GPU power at the ideal point (each loaded as at that point: an upper
    /// figure when the headroom leaves them lighter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet_power_kw: Option<f64>,
}

/// One instance's capacity in the unit of `peak`.
pub fn per_instance(peak: Peak, ideal: &IdealPoint) -> f64 {
    match peak {
        Peak::Concurrency(_) => ideal.concurrency as f64,
        Peak::Rps(_) => ideal.rps,
        Peak::OutputTps(_) => ideal.output_tps,
    }
}

/// Instances for `value` (with headroom) at `cap` per instance: the ceiling, at least 1.
fn instances_for(value: f64, headroom: f64, cap: f64) -> Option<u32> {
    if cap <= 0.0 || !cap.is_finite() {
        return None;
    }
    let need = value * (1.0 + headroom) / cap;
    // 100 * 1.2 / 40 is 3.0000000000000004 in floating point: do not round that up to 4
    Some(((need - 1e-9).ceil().max(1.0)) as u32)
}

/// Instances needed: ceil(peak * (1 + headroom) / per-instance capacity); `None` when the
/// capacity is zero. With a range on the ideal point, the instances at its two ends too,
/// capacity there read off `curve` (concurrency, output tok/s, req/s of the measured levels).
pub fn right_size(
    inputs: &CapacityInputs,
    ideal: &IdealPoint,
    curve: &[(f64, f64, f64)],
) -> Option<RightSize> {
    let peak = inputs.peak?;
    let value = match peak {
        Peak::Concurrency(v) | Peak::Rps(v) | Peak::OutputTps(v) => v,
    };
    let cap = per_instance(peak, ideal);
    let instances = instances_for(value, inputs.headroom, cap)?;
    let cap_at = |c: f64| match peak {
        Peak::Concurrency(_) => Some(c.floor()),
        Peak::Rps(_) => capacity_at(curve, c).map(|x| x.1),
        Peak::OutputTps(_) => capacity_at(curve, c).map(|x| x.0),
    };
    let instances_range = ideal.range.and_then(|[lo, hi]| {
        let at_hi = instances_for(value, inputs.headroom, cap_at(hi.min(1e9))?)?;
        let at_lo = instances_for(value, inputs.headroom, cap_at(lo)?)?;
        Some([
            at_hi.min(at_lo).min(instances),
            at_hi.max(at_lo).max(instances),
        ])
    });
    let per_million =
        |price: f64| (ideal.output_tps > 0.0).then(|| price / (ideal.output_tps * 3600.0) * 1e6);
    Some(RightSize {
        peak,
        headroom: inputs.headroom,
        per_instance: cap,
        instances,
        instances_range,
        cost_per_hour: inputs.price_per_hour.map(|p| p * instances as f64),
        cost_per_million_output_tokens: inputs.price_per_hour.and_then(per_million),
        fleet_power_kw: ideal
            .energy
            .and_then(|e| e.power_w)
            .map(|w| w * instances as f64 / 1e3),
    })
}

/// The concurrency one instance would need to carry the peak alone (Little's law for a
/// request rate; proportional scaling for a token rate).
pub fn peak_as_concurrency(peak: Peak, ideal: &IdealPoint) -> f64 {
    match peak {
        Peak::Concurrency(v) => v,
        Peak::Rps(v) => v * ideal.e2e_avg_ms / 1e3,
        Peak::OutputTps(v) if ideal.output_tps > 0.0 => {
            v / ideal.output_tps * ideal.concurrency as f64
        }
        Peak::OutputTps(_) => 0.0,
    }
}

/// A warning when one instance's share of the declared peak is beyond what was measured: the
/// right-size spreads the peak (with its headroom) over its instances, so what one instance
/// must carry is the peak x (1 + headroom) / instances, at the fewest instances the 95 % range
/// allows (`right`; one instance without a right-size). On a rate axis (`by_rate`, `highest`
/// in hundredths of a request/s) a request-rate share is compared with the highest rate;
/// otherwise the share in requests in flight (Little's law for a request rate, proportional
/// scaling for a token rate) with the highest level.
pub fn peak_coverage_warning(
    peak: Peak,
    ideal: &IdealPoint,
    highest: u32,
    by_rate: bool,
    headroom: f64,
    right: Option<&RightSize>,
) -> Option<String> {
    let fewest = right
        .map(|r| {
            r.instances_range
                .map_or(r.instances, |[lo, _]| lo.min(r.instances))
        })
        .unwrap_or(1)
        .max(1);
    let spread = 1.0 + headroom;
    let over = |n: u32| {
        if n == 1 {
            "one instance".to_string()
        } else {
            format!("{n} instances")
        }
    };
    let sig3 = crate::values::sig3;
    if by_rate {
        let top = crate::metrics::summary::load_to_rps(highest);
        let need = match peak {
            Peak::Rps(v) => v,
            _ => return None,
        };
        let share = need * spread / fewest as f64;
        return (share > top).then(|| {
            format!(
                "one instance's share of the peak ({} req/s: {need} req/s with {:.0} % headroom \
                 over {}) is above the highest rate measured ({top} req/s): the curve past it is \
                 not measured; add rates up to {} req/s",
                sig3(share),
                headroom * 100.0,
                over(fewest),
                sig3(share)
            )
        });
    }
    let share = peak_as_concurrency(peak, ideal) * spread / fewest as f64;
    (share > highest as f64).then(|| {
        let what = match peak {
            Peak::Concurrency(v) => format!("{v} concurrent"),
            Peak::Rps(v) => format!("{v} req/s"),
            Peak::OutputTps(v) => format!("{v} output tok/s"),
        };
        format!(
            "one instance's share of the peak (~{} in flight: {what} with {:.0} % headroom over \
             {}) is above the highest level measured ({highest}): the curve past it is not \
             measured; add levels up to {}",
            sig3(share),
            headroom * 100.0,
            over(fewest),
            sig3(share.ceil())
        )
    })
}

/// Output tok/s and req/s at concurrency `c`, read off the capacity curve.
pub fn capacity_at(curve: &[(f64, f64, f64)], c: f64) -> Option<(f64, f64)> {
    let tps: Vec<(f64, f64)> = curve.iter().map(|p| (p.0, p.1)).collect();
    let rps: Vec<(f64, f64)> = curve.iter().map(|p| (p.0, p.2)).collect();
    Some((at_concurrency(&tps, c)?, at_concurrency(&rps, c)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ideal() -> IdealPoint {
        IdealPoint {
            concurrency: 256,
            output_tps: 2823.4,
            rps: 11.0,
            e2e_avg_ms: 23_000.0,
            range: None,
            energy: None,
        }
    }

    /// peak, headroom, price, instances, per-instance capacity, cost per hour
    type Case = (Peak, f64, Option<f64>, u32, f64, Option<f64>);

    #[test]
    fn right_size_table() {
        let cases: &[Case] = &[
            // peak, headroom, price, instances, per-instance, cost per hour
            (
                Peak::Concurrency(1000.0),
                0.2,
                Some(4.0),
                5,
                256.0,
                Some(20.0),
            ),
            (Peak::Concurrency(256.0), 0.0, None, 1, 256.0, None),
            (Peak::Concurrency(213.4), 0.2, None, 2, 256.0, None),
            (Peak::Rps(100.0), 0.2, Some(2.5), 11, 11.0, Some(27.5)),
            (Peak::Rps(55.0), 0.2, None, 6, 11.0, None),
            (
                Peak::OutputTps(10_000.0),
                0.5,
                Some(1.0),
                6,
                2823.4,
                Some(6.0),
            ),
        ];
        for (peak, headroom, price, n, cap, cost) in cases {
            let r = right_size(
                &CapacityInputs {
                    peak: Some(*peak),
                    headroom: *headroom,
                    price_per_hour: *price,
                },
                &ideal(),
                &[],
            )
            .unwrap();
            assert_eq!(r.instances, *n, "{peak:?}");
            assert_eq!(r.per_instance, *cap, "{peak:?}");
            assert_eq!(r.cost_per_hour, *cost, "{peak:?}");
        }
        // 100 * 1.2 / 40 is exactly 3 instances, not 4
        let i = IdealPoint {
            concurrency: 40,
            ..ideal()
        };
        let r = right_size(
            &CapacityInputs {
                peak: Some(Peak::Concurrency(100.0)),
                ..Default::default()
            },
            &i,
            &[],
        )
        .unwrap();
        assert_eq!(r.instances, 3);
    }

    #[test]
    fn cost_per_million_output_tokens_at_the_ideal_point() {
        // $3.60/h at 1000 tok/s = 3.6M tokens/h: $1 per million
        let i = IdealPoint {
            output_tps: 1000.0,
            ..ideal()
        };
        let r = right_size(
            &CapacityInputs {
                peak: Some(Peak::Concurrency(10.0)),
                headroom: 0.2,
                price_per_hour: Some(3.6),
            },
            &i,
            &[],
        )
        .unwrap();
        assert_eq!(r.cost_per_million_output_tokens, Some(1.0));
        assert_eq!(r.instances, 1);
        assert_eq!(r.fleet_power_kw, None, "no GPU figures, no fleet power");
        // 400 W an instance, 25 concurrent with 20 % headroom at 10 each: 3 instances, 1.2 kW
        let with_gpu = IdealPoint {
            energy: Some(PointEnergy {
                power_w: Some(400.0),
                joules_per_output_token: Some(0.4),
                kwh_per_million_output_tokens: Some(0.4 / 3.6),
            }),
            ..i
        };
        let r = right_size(
            &CapacityInputs {
                peak: Some(Peak::Concurrency(25.0)),
                headroom: 0.2,
                price_per_hour: None,
            },
            &IdealPoint {
                concurrency: 10,
                ..with_gpu
            },
            &[],
        )
        .unwrap();
        assert_eq!((r.instances, r.fleet_power_kw), (3, Some(1.2)));
        assert_eq!(
            right_size(&CapacityInputs::default(), &i, &[]),
            None,
            "no peak, no right-size"
        );
    }

    #[test]
    fn instances_over_the_ideal_points_range() {
        // the boundary lies between 200 and 320: 1000 concurrent with 20 % headroom is 4 to 6
        // instances, 5 at the measured 256
        let i = IdealPoint {
            range: Some([200.0, 320.0]),
            ..ideal()
        };
        let inputs = CapacityInputs {
            peak: Some(Peak::Concurrency(1000.0)),
            ..Default::default()
        };
        let r = right_size(&inputs, &i, &[]).unwrap();
        assert_eq!((r.instances, r.instances_range), (5, Some([4, 6])));
        // by output tokens: capacity read off the curve, 2000 tok/s at 200, 2823.4 at 256,
        // 3000 at 320 (held at the top level beyond it)
        let curve = [
            (200.0, 2000.0, 8.0),
            (256.0, 2823.4, 11.0),
            (320.0, 3000.0, 11.5),
        ];
        let inputs = CapacityInputs {
            peak: Some(Peak::OutputTps(10_000.0)),
            headroom: 0.0,
            ..Default::default()
        };
        let r = right_size(&inputs, &i, &curve).unwrap();
        assert_eq!((r.instances, r.instances_range), (4, Some([4, 5])));
    }

    #[test]
    fn warns_when_the_sweep_stops_below_the_peak() {
        // no right-size: one instance carries the peak with its 20 % headroom
        assert_eq!(
            peak_coverage_warning(Peak::Concurrency(2000.0), &ideal(), 1024, false, 0.2, None)
                .unwrap(),
            "one instance's share of the peak (~2.40k in flight: 2000 concurrent with 20 % \
             headroom over one instance) is above the highest level measured (1024): the curve \
             past it is not measured; add levels up to 2.40k"
        );
        assert_eq!(
            peak_coverage_warning(Peak::Concurrency(1024.0), &ideal(), 1024, false, 0.0, None),
            None
        );
        // the right-size spreads 2,000 over 9 instances of 256: each carries ~267, within the
        // 512 measured; at the fewest its range allows (5), ~480, still within
        let spread = |instances, range| RightSize {
            peak: Peak::Concurrency(2000.0),
            headroom: 0.2,
            per_instance: 256.0,
            instances,
            instances_range: range,
            cost_per_hour: None,
            cost_per_million_output_tokens: None,
            fleet_power_kw: None,
        };
        let nine = spread(9, Some([5, 10]));
        assert_eq!(
            peak_coverage_warning(
                Peak::Concurrency(2000.0),
                &ideal(),
                512,
                false,
                0.2,
                Some(&nine)
            ),
            None
        );
        // at 4 instances each would carry 600, beyond the 512 measured
        let four = spread(9, Some([4, 10]));
        assert!(peak_coverage_warning(
            Peak::Concurrency(2000.0),
            &ideal(),
            512,
            false,
            0.2,
            Some(&four)
        )
        .unwrap()
        .starts_with("one instance's share of the peak (~600 in flight: 2000 concurrent with 20 % headroom over 4 instances)"));
        // 100 req/s at 23 s each is 2300 in flight, 2760 with the headroom
        assert!(
            peak_coverage_warning(Peak::Rps(100.0), &ideal(), 1024, false, 0.2, None)
                .unwrap()
                .contains("(~2.76k in flight: 100 req/s with 20 % headroom")
        );
        assert_eq!(
            peak_as_concurrency(Peak::OutputTps(5646.8), &ideal()),
            512.0
        );
        // a rate run: the peak rate's share against the highest rate (1000 = 10 req/s)
        assert_eq!(
            peak_coverage_warning(Peak::Rps(12.5), &ideal(), 1000, true, 0.0, None).unwrap(),
            "one instance's share of the peak (12.5 req/s: 12.5 req/s with 0 % headroom over \
             one instance) is above the highest rate measured (10 req/s): the curve past it is \
             not measured; add rates up to 12.5 req/s"
        );
        assert_eq!(
            peak_coverage_warning(Peak::Rps(10.0), &ideal(), 1000, true, 0.0, None),
            None
        );
    }
}
