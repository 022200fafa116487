//! `rightsize export RUN --html FILE` end to end on a search and a sweep against the
//! simulator: one small file with nothing fetched, parsed for the answer box, one SVG per
//! chart and a table row per level; `--compare` of two runs; and both pages as a person sees
//! them, in headless Chromium (skipped, saying so, where Chromium is not installed, failing
//! under `CI=true`; `.ci/run` installs it).

mod common;
mod export_support;
mod report_support;

use common::{stderr, stdout, tmpdir};
use export_support::{id, report_xhtml, rs};
use report_support::{
    chromium, decode_png, runs, screenshot, single_and_compare, summary, text_of, with_attr,
};
use std::path::{Path, PathBuf};

/// `export ARGS --html DIR/`; the HTML file written.
fn export_html(args: &[&str]) -> PathBuf {
    let (root, _, _) = runs();
    let dir = tmpdir("html");
    let mut all: Vec<&str> = args.to_vec();
    let d = format!("{}/", dir.display());
    all.extend(["--html", &d]);
    let o = rs(root, &all);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out: Vec<PathBuf> = stdout(&o).lines().map(PathBuf::from).collect();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].extension().unwrap(), "html");
    out[0].clone()
}

/// Checks what every report holds; returns the page's text.
fn check_page(path: &Path, runs_in_it: &[&Path]) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.len() < 2 << 20, "{} bytes", text.len());
    assert!(text.starts_with("<!DOCTYPE html>"));
    let doc = report_xhtml(&text);
    // nothing fetched: no element names a resource anywhere
    for n in doc.descendants() {
        for a in ["src", "href"] {
            if let Some(v) = n.attribute(a) {
                assert!(!v.contains("http"), "<{} {a}={v}>", n.tag_name().name());
                assert!(!v.contains("//"), "<{} {a}={v}>", n.tag_name().name());
            }
        }
        assert!(
            !matches!(n.tag_name().name(), "script" | "link" | "img" | "iframe"),
            "a <{}> in the report",
            n.tag_name().name()
        );
    }
    // the answer box, one per run, with its headline
    let boxes = with_attr(&doc, "div", "class", "answer");
    assert_eq!(boxes.len(), runs_in_it.len());
    for b in &boxes {
        let head = b
            .descendants()
            .find(|n| n.attribute("class") == Some("headline"))
            .expect("a headline");
        assert!(!text_of(&head).is_empty());
        assert!(b.descendants().any(|n| text_of(&n) == "knee"));
    }
    // four charts, one SVG each, and the server chart in the telemetry section when the
    // run recorded the server's metrics (the simulator serves them)
    let figures = with_attr(&doc, "figure", "class", "chart");
    let server: Vec<_> = figures
        .iter()
        .filter(|f| f.attribute("id") == Some("chart-server"))
        .collect();
    assert_eq!(figures.len() - server.len(), 4);
    assert!(server.len() <= 1);
    for f in &server {
        let section = f.ancestors().find(|n| n.tag_name().name() == "section");
        assert_eq!(section.and_then(|s| s.attribute("id")), Some("telemetry"));
    }
    for f in &figures {
        let svgs = f
            .children()
            .filter(|n| n.tag_name().name() == "svg")
            .count();
        assert_eq!(svgs, 1, "{:?}", f.attribute("id"));
    }
    // one row per level in each run's levels table
    let tables = with_attr(&doc, "table", "class", "levels");
    assert_eq!(tables.len(), runs_in_it.len());
    for (t, run) in tables.iter().zip(runs_in_it) {
        let rows = t
            .descendants()
            .filter(|n| n.tag_name().name() == "tr")
            .filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("level")))
            .count();
        let levels = std::fs::read_dir(run)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                let name = name.to_string_lossy();
                name.starts_with("level-") && name.ends_with(".json")
            })
            .count();
        assert_eq!(rows, levels, "{}", run.display());
        let head: Vec<String> = t
            .descendants()
            .filter(|n| n.tag_name().name() == "th")
            .map(|n| text_of(&n))
            .collect();
        for want in ["e2e", "p50", "p90", "p99", "verdict"] {
            assert!(head.iter().any(|h| h == want), "no {want} in {head:?}");
        }
    }
    for section in ["errors", "telemetry", "warnings", "identity", "reproduce"] {
        assert!(
            doc.descendants()
                .any(|n| n.tag_name().name() == "section" && n.attribute("id") == Some(section)),
            "no section {section}"
        );
    }
    text
}

#[test]
fn a_search_report_is_one_small_file_with_the_answer_charts_and_levels() {
    let (_, search, _) = runs();
    let page = export_html(&["export", &id(search)]);
    assert_eq!(page.file_name().unwrap(), &*format!("{}.html", id(search)));
    let text = check_page(&page, &[search]);
    let answer = summary(search)["search"]["max_passing"].as_u64().unwrap();
    assert!(
        text.contains(&format!("{answer} concurrent requests at")),
        "the headline names the answer {answer}"
    );
    // the bracket, when the search found a failing level (one that passes up to --max has
    // none: how far the simulator gets depends on how busy the machine is)
    if summary(search)["search"]["first_failing"].is_u64() {
        assert!(text.contains("bracket "), "the bracket is named");
    }
    assert!(text.contains("binding SLA"));
    // the command that reproduces the run, rebuilt from run.json
    assert!(
        text.contains(
            "rightsize search -e sim --input-tokens 64 --output-tokens 32 --stream --min 16 \
             --max 256"
        ),
        "{}",
        &text[text.find("id=\"reproduce\"").unwrap()..]
    );
    assert!(text.contains("--e2e-sla p95:400ms --max-error-rate 0.05 -n 48"));
}

#[test]
fn a_sweep_report_has_the_same_parts() {
    let (_, _, sweep) = runs();
    let page = export_html(&["export", &id(sweep)]);
    let text = check_page(&page, &[sweep]);
    assert!(text.contains("rightsize sweep -e sim"), "the command line");
    assert!(text.contains("-c 2,4,8,16"), "the levels");
}

#[test]
fn a_compare_report_sets_two_runs_side_by_side() {
    let (_, search, sweep) = runs();
    let page = export_html(&["export", &id(search), "--compare", &id(sweep)]);
    assert_eq!(
        page.file_name().unwrap(),
        &*format!("{}-vs-{}.html", id(search), id(sweep))
    );
    let text = check_page(&page, &[search, sweep]);
    assert!(text.contains("<table class=\"compare\">"));
    for want in [
        format!("A: {}", id(search)),
        format!("B: {}", id(sweep)),
        "A output tok/s".to_string(),
        "B output tok/s".to_string(),
    ] {
        assert!(text.contains(&want), "no {want}");
    }
}

/// Not blank: most of the page is not one colour, and it has many colours (text, charts).
fn assert_not_blank(png: &[u8]) {
    let (w, h, px, bpp) = decode_png(png);
    assert!(w >= 800 && h >= 800, "{w}x{h}");
    let pixels: Vec<&[u8]> = px.chunks(bpp).collect();
    let white = pixels.iter().filter(|p| p[..3] == [255, 255, 255]).count();
    let ink = pixels.len() - white;
    assert!(
        ink * 20 > pixels.len(),
        "only {ink} of {} pixels inked",
        pixels.len()
    );
    let mut colours: Vec<[u8; 3]> = pixels.iter().map(|p| [p[0], p[1], p[2]]).collect();
    colours.sort_unstable();
    colours.dedup();
    assert!(colours.len() > 100, "{} colours", colours.len());
}

/// Console errors Chromium logged for the page, if any.
fn console_errors(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| {
            l.contains("CONSOLE")
                || l.contains("Uncaught")
                || l.contains("Failed to load resource")
                || l.contains("ERR_FILE_NOT_FOUND")
        })
        .collect()
}

#[test]
fn chromium_draws_the_reports_and_logs_no_console_error() {
    let Some(browser) = chromium() else {
        common::tool_missing("chromium", ".ci/run installs Debian's chromium");
        return;
    };
    let (_, search, sweep) = runs();
    for (name, args) in single_and_compare(search, sweep) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let page = export_html(&args);
        let shot = page.with_file_name(format!("{name}.png"));
        let (png, log) = screenshot(browser, &page, &shot);
        assert_not_blank(&png);
        let errors = console_errors(&log);
        assert!(errors.is_empty(), "{name}: {errors:?}");
        eprintln!("{name}: screenshot {}", shot.display());
    }
}
