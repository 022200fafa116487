//! `rightsize export` end to end on runs made against the simulator: the SVG is parsed and
//! holds the series, axis labels, knee marker and SLA line; the PNG decodes at the asked size
//! and is not blank; CSV and JSON hold every level; `--compare` overlays two runs.

use crate::support::common;
use crate::support::export_support;

use common::{stderr, stdout, tmpdir};
use export_support::{id, root, rs, saturating_run, sim_run};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Two runs in one root, made once: (root, A with knee 8 and SLA 250 ms, B).
fn runs() -> &'static (PathBuf, PathBuf, PathBuf) {
    static RUNS: OnceLock<(PathBuf, PathBuf, PathBuf)> = OnceLock::new();
    RUNS.get_or_init(|| {
        let r = root("export");
        // 4, not 2, at the bottom: 96 requests at concurrency 2 took half the run (6.7 s of 13)
        let a = saturating_run(&r, "4,8,16,32", Some("p90:250ms"));
        let b = sim_run(&r, "2,8");
        (r, a, b)
    })
}

fn export(args: &[&str]) -> Vec<PathBuf> {
    let (r, _, _) = runs();
    let o = rs(r, args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stdout(&o).lines().map(PathBuf::from).collect()
}

/// Every `<text>` in the SVG.
fn texts(doc: &roxmltree::Document) -> Vec<String> {
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

/// The polylines drawn in `stroke` (uppercase `#RRGGBB`).
fn polylines<'a>(doc: &'a roxmltree::Document, stroke: &str) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some(stroke))
        .collect()
}

#[test]
fn svg_holds_series_axis_labels_knee_and_sla_line() {
    let (_, a, _) = runs();
    let dir = tmpdir("svg");
    let out = export(&["export", &id(a), "--svg", dir.to_str().unwrap()]);
    assert_eq!(out, vec![dir.join(format!("{}.svg", id(a)))]);
    let text = std::fs::read_to_string(&out[0]).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("the SVG is well-formed XML");
    let svg = doc.root_element();
    assert_eq!(svg.attribute("width"), Some("1600"));
    assert_eq!(svg.attribute("height"), Some("900"));
    let t = texts(&doc);
    let has = |s: &str| t.iter().any(|x| x == s);
    // panels and axis descriptions
    for want in [
        "output throughput",
        "end-to-end latency",
        "time to first token",
        "throughput against p99 latency",
        "concurrency",
        "output tok/s",
        "latency",
        "TTFT",
        "e2e p99 latency",
    ] {
        assert!(has(want), "no text '{want}' in {t:?}");
    }
    // series legends
    for want in [
        "output tok/s",
        "e2e p50",
        "e2e p99",
        "p50-p99 spread",
        "TTFT p50",
        "TTFT p95",
    ] {
        assert!(has(want), "no legend '{want}' in {t:?}");
    }
    // the title names endpoint, model and workload; the subtitle the run and date
    assert!(t
        .iter()
        .any(|x| x.starts_with("sim | sim-") && x.contains("64 in / 64 out")));
    assert!(t.iter().any(|x| x.contains(&id(a)) && x.contains("UTC")));
    // points labelled by concurrency on the throughput-latency panel
    for c in ["c=4", "c=8", "c=16"] {
        assert!(has(c), "no point label {c}");
    }
    // knee marker and SLA line: legend entries and dashed strokes in their colours
    assert!(has("knee c=8"), "{t:?}");
    assert!(has("SLA e2e p90 <= 250 ms"), "{t:?}");
    assert!(polylines(&doc, "#5A5A5A").len() >= 3, "knee dashes");
    assert!(polylines(&doc, "#D62728").len() >= 3, "SLA dashes");
    // series polylines: throughput / p50 / TTFT p50 in blue, p99 / TTFT p95 in orange, each
    // through the four levels
    let level_points = |n: &roxmltree::Node| {
        n.attribute("points")
            .is_some_and(|p| p.split_whitespace().count() == 4)
    };
    assert!(
        polylines(&doc, "#1F77B4")
            .iter()
            .filter(|n| level_points(n))
            .count()
            >= 4
    );
    assert!(
        polylines(&doc, "#FF7F0E")
            .iter()
            .filter(|n| level_points(n))
            .count()
            >= 2
    );
    // the spread band
    assert!(doc
        .descendants()
        .any(|n| n.has_tag_name("polygon") && n.attribute("fill") == Some("#FF7F0E")));
}

fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .expect("a PNG header");
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).expect("PNG data decodes");
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

#[test]
fn png_decodes_at_the_asked_size_and_is_not_blank() {
    let (_, a, _) = runs();
    let dir = tmpdir("png");
    for (size, w, h) in [("1600x900", 1600, 900), ("800x450", 800, 450)] {
        let path = dir.join(format!("chart-{size}.png"));
        export(&[
            "export",
            &id(a),
            "--png",
            path.to_str().unwrap(),
            "--size",
            size,
        ]);
        let (pw, ph, rgb) = decode(&path);
        assert_eq!((pw, ph), (w, h));
        let px: Vec<&[u8]> = rgb.chunks(3).collect();
        let inked = px.iter().filter(|p| p.iter().any(|c| *c < 200)).count();
        let share = inked as f64 / px.len() as f64;
        assert!(
            share > 0.01 && share < 0.5,
            "{size}: {share} of pixels inked"
        );
        // the SLA line's red and the series' blue are drawn
        assert!(px.iter().any(|p| p == &[214, 39, 40]), "{size}: no SLA red");
        assert!(
            px.iter().any(|p| p == &[31, 119, 180]),
            "{size}: no series blue"
        );
        // the title band (top 4 %) holds glyphs: text renders with no system fonts
        let band = (h as usize * 4 / 100) * w as usize;
        let title_ink = px[..band].iter().filter(|p| p[0] < 100).count();
        assert!(title_ink > 50, "{size}: title has {title_ink} dark pixels");
    }
}

#[test]
fn csv_has_stable_columns_and_one_row_per_level() {
    let (_, a, _) = runs();
    let dir = tmpdir("csv");
    let path = dir.join("levels.csv");
    export(&["export", &id(a), "--csv", path.to_str().unwrap()]);
    let csv = std::fs::read_to_string(&path).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header.join(","),
        rightsize::report::csv_columns().join(","),
        "the header is the documented column list"
    );
    assert_eq!(&header[..3], &["index", "concurrency", "partial"]);
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 4);
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let levels = rightsize::report::load_levels(a).unwrap();
    for (row, level) in rows.iter().zip(&levels) {
        assert_eq!(row.len(), header.len());
        assert_eq!(row[col("concurrency")], level.concurrency.to_string());
        let p99: f64 = row[col("request_latency_p99_ms")].parse().unwrap();
        assert_eq!(Some(p99), level.e2e_p99_ms());
        let tps: f64 = row[col("output_tps")].parse().unwrap();
        assert_eq!(tps, level.sustained_tps());
        let whole: f64 = row[col("whole_level_output_tps")].parse().unwrap();
        assert_eq!(whole, level.output_tps());
        // 96 requests asked; a level runs at least twice its concurrency
        let n = 96.max(2 * level.concurrency);
        assert_eq!(row[col("time_to_first_token_count")], n.to_string());
        assert_eq!(row[col("requests_asked")], "96");
        assert_eq!(row[col("held")], level.held.to_string());
        assert_eq!(row[col("errors_http_status")], "0");
    }
}

#[test]
fn csv_and_json_go_to_stdout_with_a_dash() {
    let (r, a, _) = runs();
    let o = rs(r, &["export", &id(a), "--csv", "-"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let csv = stdout(&o);
    assert!(csv.starts_with("index,concurrency,partial,"), "{csv}");
    assert_eq!(csv.lines().count(), 5);
    let dir = tmpdir("json-dash");
    let o = rs(
        r,
        &[
            "export",
            &id(a),
            "--json",
            "-",
            "--svg",
            dir.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("stdout is the JSON");
    assert_eq!(v["levels"].as_array().unwrap().len(), 4);
    assert!(
        stderr(&o).contains(".svg"),
        "the files written are listed on stderr"
    );
}

#[test]
fn json_export_holds_the_run_and_every_level() {
    let (_, a, _) = runs();
    let dir = tmpdir("json");
    let out = export(&["export", &id(a), "--json", &format!("{}/", dir.display())]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out[0]).unwrap()).unwrap();
    assert_eq!(v["run_id"], id(a).as_str());
    assert_eq!(v["run"]["kind"], "sweep");
    assert_eq!(v["levels"].as_array().unwrap().len(), 4);
    assert_eq!(
        v["summary"]["knee"]["concurrency"],
        8,
        "knee not named: undecided {}, skipped {}, levels' held {:?}",
        v["summary"]["knee_undecided"],
        v["summary"]["skipped"],
        v["levels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l["concurrency"].clone(), l["held"].clone()))
            .collect::<Vec<_>>()
    );
}

#[test]
fn compare_overlays_two_runs_on_one_chart() {
    let (_, a, b) = runs();
    let dir = tmpdir("compare");
    let out = export(&[
        "export",
        &id(a),
        "--compare",
        &id(b),
        "--svg",
        dir.to_str().unwrap(),
        "--png",
        dir.to_str().unwrap(),
    ]);
    let stem = format!("{}-vs-{}", id(a), id(b));
    assert_eq!(
        out,
        vec![
            dir.join(format!("{stem}.png")),
            dir.join(format!("{stem}.svg"))
        ]
    );
    let text = std::fs::read_to_string(&out[1]).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let t = texts(&doc);
    for want in [
        "A e2e p99",
        "B e2e p99",
        "A output tok/s",
        "B output tok/s",
        "A knee c=8",
    ] {
        assert!(t.iter().any(|x| x == want), "no '{want}' in {t:?}");
    }
    assert!(t
        .iter()
        .any(|x| x.contains(&format!("A: run {}", id(a))) && x.contains("vs")));
    // run B's series in its own colour, through its two levels
    assert!(!polylines(&doc, "#2CA02C").is_empty());
    let (w, h, _) = decode(&out[0]);
    assert_eq!((w, h), (1600, 900));
}

#[test]
fn export_without_a_format_or_with_a_bad_size_is_bad_input() {
    let (r, a, _) = runs();
    let o = rs(r, &["export", &id(a)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--png, --svg, --html, --csv, --json"),
        "{}",
        stderr(&o)
    );
    let o = rs(
        r,
        &["export", &id(a), "--png", "/tmp/x.png", "--size", "12x7"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("WIDTHxHEIGHT"), "{}", stderr(&o));
}
