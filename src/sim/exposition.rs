//! The Prometheus text exposition (format 0.0.4) the simulator serves, one writer for its three
//! dialects (vLLM's `/metrics`, llama.cpp's, and the GPU's dcgm-exporter): each metric as its
//! `# HELP` and `# TYPE` lines and one sample, every sample with the same labels.

use std::fmt::Write as _;

/// One metric: (name, type, help, value as written).
pub type Metric<'a> = (&'a str, &'a str, &'a str, String);

/// `metrics` in the text format, each sample labelled `{labels}` (none when empty).
pub fn write(metrics: &[Metric<'_>], labels: &str) -> String {
    let braces = if labels.is_empty() {
        String::new()
    } else {
        format!("{{{labels}}}")
    };
    let mut out = String::with_capacity(metrics.len() * 128);
    for (name, kind, help, value) in metrics {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        let _ = writeln!(out, "{name}{braces} {value}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_type_and_sample_with_or_without_labels() {
        let m = [("a_total", "counter", "As.", "3".to_string())];
        assert_eq!(
            write(&m, "gpu=\"0\""),
            "# HELP a_total As.\n# TYPE a_total counter\na_total{gpu=\"0\"} 3\n"
        );
        assert_eq!(
            write(&m, ""),
            "# HELP a_total As.\n# TYPE a_total counter\na_total 3\n"
        );
    }
}
