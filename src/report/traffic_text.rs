//! `rightsize traffic`'s text (`docs/open-loop.md`, "Your own traffic"): the rates, the
//! lengths, concurrency and the suggested flags of a [`Traffic`], one figure a line.

use std::fmt::Write as _;

use crate::values::fmt_rps;
use crate::workload::traffic::{Concurrency, Lengths, Peak, Traffic};

fn when(p: &Peak) -> String {
    match &p.start_utc {
        Some(t) => format!("from {t}"),
        None => format!("from {:.0} s", p.start_s),
    }
}

fn lengths(l: &Option<Lengths>) -> String {
    match l {
        Some(l) => format!(
            "p50 {}  p90 {}  p99 {}  max {}  ({} requests)",
            l.p50, l.p90, l.p99, l.max, l.count
        ),
        None => "absent (no record says)".into(),
    }
}

/// The whole report, ending with a newline.
pub fn traffic_text(t: &Traffic) -> String {
    let mut out = String::new();
    let start = t
        .first_utc
        .as_deref()
        .map(|u| format!(" from {u}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{}: {} requests over {:.0} s{start} ({} minutes counted)",
        t.file, t.requests, t.span_s, t.minutes
    );
    let _ = writeln!(out, "requests per second");
    let _ = writeln!(out, "  mean         {:.3} req/s", t.mean_rps);
    let _ = writeln!(
        out,
        "  peak minute  {:.3} req/s ({} requests {})",
        t.peak_minute.rps,
        t.peak_minute.requests,
        when(&t.peak_minute)
    );
    let _ = writeln!(
        out,
        "  peak second  {} req/s ({})",
        t.peak_second.requests,
        when(&t.peak_second)
    );
    let _ = writeln!(
        out,
        "  per minute   p50 {:.3}  p99 {:.3} req/s",
        t.minute_rps_p50, t.minute_rps_p99
    );
    let _ = writeln!(
        out,
        "  peak hour    {:.3} req/s ({} requests {})",
        t.peak_hour.rps,
        t.peak_hour.requests,
        when(&t.peak_hour)
    );
    let _ = writeln!(out, "input tokens   {}", lengths(&t.input_tokens));
    let _ = writeln!(out, "output tokens  {}", lengths(&t.output_tokens));
    match &t.concurrency {
        Concurrency::Absent { why } => {
            let _ = writeln!(out, "concurrency    absent: {why}");
        }
    }
    let s = &t.suggested;
    let _ = writeln!(out, "suggested");
    let _ = writeln!(
        out,
        "  --peak-rps {}   (the peak minute, for planning)",
        fmt_rps(s.peak_rps)
    );
    match s.peak_concurrency {
        Some(c) => {
            let _ = writeln!(out, "  --peak-concurrency {c:.1}");
        }
        None => {
            let _ = writeln!(
                out,
                "  --peak-concurrency: absent (needs response times); plan by --peak-rps"
            );
        }
    }
    let _ = writeln!(
        out,
        "  --speedup {} / {}   (a replay averaging 1.5x / 2x the peak hour's rate)",
        fmt_rps(s.speedup_1_5x),
        fmt_rps(s.speedup_2x)
    );
    out
}
