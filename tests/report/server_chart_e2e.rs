//! The server chart and table end to end: a sweep at 2 and 8 against a simulator with 4 batch
//! slots records what its `/metrics` said per level; `show` prints the server table, and
//! `export` draws the server panel in the SVG and PNG (the fifth panel) and in the HTML
//! report's telemetry section.

use crate::support::common;
use common::{bin, stderr, stdout, tmpdir, SimProcess};

#[test]
fn show_and_the_exports_draw_what_the_server_said() {
    let sim = SimProcess::llama_like("20");
    let out = tmpdir("server-chart");
    let o = bin()
        .args(["sweep", "-e", &sim.url, "--input-tokens", "64"])
        .args(["--output-tokens", "64", "-c", "2,8", "-n", "64", "--no-tui"])
        .args(["--telemetry-interval", "250ms", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    drop(sim);
    let run = common::only_run_dir(&out);
    let dir = run.to_str().unwrap();

    let shown = bin().args(["show", dir]).output().unwrap();
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let text = stdout(&shown);
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == "server (vllm): its own metrics during each level")
        .unwrap_or_else(|| panic!("no server table in\n{text}"));
    assert_eq!(
        lines[at + 1],
        "concurrency  running mean / max  waiting mean / max  KV use % mean / max  \
         prefix hits %  preemptions"
    );
    // one row per level (load, running mean / max, waiting mean / max, ...): two streams
    // fit the four slots, at 8 the four are full
    let row = |c: &str| -> Vec<&str> {
        lines[at + 3..]
            .iter()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|w| w.first() == Some(&c))
            .unwrap_or_else(|| panic!("no row {c} in\n{text}"))
    };
    assert_eq!(row("8")[3], "4", "{text}");
    let two: f64 = row("2")[3].parse().unwrap();
    assert!(two <= 2.0, "{text}");

    let files = tmpdir("server-chart-export");
    let e = bin()
        .args(["export", dir, "--svg"])
        .arg(files.join("run.svg"))
        .arg("--png")
        .arg(files.join("run.png"))
        .arg("--html")
        .arg(files.join("run.html"))
        .output()
        .unwrap();
    assert_eq!(e.status.code(), Some(0), "{}", stderr(&e));
    let svg = std::fs::read_to_string(files.join("run.svg")).unwrap();
    for want in [
        "server: batch, queue, KV cache",
        "running (batch)",
        "waiting (queue)",
        "KV-cache use (right)",
        "100 %",
    ] {
        assert!(svg.contains(want), "no '{want}' in the SVG");
    }
    let png = std::fs::read(files.join("run.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let html = std::fs::read_to_string(files.join("run.html")).unwrap();
    let telemetry = &html[html.find("<section id=\"telemetry\">").expect("telemetry")..];
    let telemetry = &telemetry[..telemetry.find("</section>").unwrap()];
    assert!(
        telemetry.contains("id=\"chart-server\"") && telemetry.contains("<svg"),
        "{telemetry}"
    );
    assert!(telemetry.contains("server: batch, queue, KV cache"));
}
