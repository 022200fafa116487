//! `rightsize export RUN --html FILE` end to end on a search and a sweep against the
//! simulator: one small file with nothing fetched, parsed for the answer box, one SVG per
//! chart and a table row per level; `--compare` of two runs; a right-size section, in
//! `rightsize show`'s words, exactly when the run was sized by a peak; and the pages as a
//! person sees them, in headless Chromium: drawn, no wider than a 1,280 px window, printed
//! within an A4 page (skipped, saying so, where Chromium is not installed, failing under
//! `CI=true`; `.ci/run` installs it).

use crate::support::common;
use crate::support::export_support;
use crate::support::report_support;

use common::{stderr, stdout, tmpdir};
use export_support::{id, report_xhtml, rs};
use report_support::{
    chromium, decode_png, overflow, print_pdf, runs, screenshot, single_and_compare, sized_sweep,
    summary, text_of, with_attr,
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
    // one row per level in each run's levels table (verdicts, e2e) and latency table (the
    // other distributions: the runs here stream, so they have TTFT and TPOT)
    for (class, heads) in [
        (
            "levels",
            &[
                "requests",
                "output tok/s",
                "verdict",
                "e2e",
                "p50",
                "p90",
                "p99",
            ][..],
        ),
        ("latency", &["TTFT", "TPOT", "p50", "p90", "p99"][..]),
    ] {
        let tables = with_attr(&doc, "table", "class", class);
        assert_eq!(tables.len(), runs_in_it.len(), "{class} tables");
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
            assert_eq!(rows, levels, "{class}: {}", run.display());
            let head: Vec<String> = t
                .descendants()
                .filter(|n| n.tag_name().name() == "th")
                .map(|n| text_of(&n))
                .collect();
            for want in heads {
                assert!(head.iter().any(|h| h == want), "no {want} in {head:?}");
            }
        }
    }
    // a right-size section exactly when a run was sized (its summary has one); none, not a
    // placeholder, otherwise
    let sized = runs_in_it
        .iter()
        .filter(|r| !summary(r)["planning"]["right_size"].is_null())
        .count();
    let section = right_size_section(&doc);
    match section {
        Some(s) => {
            assert!(sized > 0, "a right-size section for runs not sized");
            assert_eq!(with_attr_in(&s, "div", "answer rightsize"), sized);
        }
        None => assert_eq!(sized, 0, "no right-size section for a sized run"),
    }
    if sized == 0 {
        let body = &text[text.find("<body>").expect("a body")..];
        assert!(
            !body.contains("right-size"),
            "a run not sized says right-size"
        );
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

/// The report's right-size section, if any.
fn right_size_section<'a>(doc: &'a roxmltree::Document) -> Option<roxmltree::Node<'a, 'a>> {
    with_attr(doc, "section", "id", "right-size")
        .into_iter()
        .next()
}

/// How many `tag` elements of `class` are inside `n`.
fn with_attr_in(n: &roxmltree::Node, tag: &str, class: &str) -> usize {
    n.descendants()
        .filter(|d| d.tag_name().name() == tag && d.attribute("class") == Some(class))
        .count()
}

/// All the text inside `n`, its pieces joined by single spaces.
fn all_text(n: &roxmltree::Node) -> String {
    n.descendants()
        .filter(|d| d.is_text())
        .filter_map(|d| d.text())
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `rightsize show RUN`'s `right-size:` line, without its prefix.
fn shows_right_size(root: &Path, run: &Path) -> String {
    let o = rs(root, &["show", &id(run)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stdout(&o)
        .lines()
        .find_map(|l| l.trim().strip_prefix("right-size: ").map(str::to_string))
        .unwrap_or_else(|| panic!("show says no right-size: {}", stdout(&o)))
}

#[test]
fn a_run_sized_by_a_peak_and_a_price_has_a_right_size_section_in_shows_words() {
    let (root, search, _) = runs();
    let sized = sized_sweep();
    let right = &summary(sized)["planning"]["right_size"];
    assert!(right["instances"].is_u64(), "the sweep was sized: {right}");
    assert!(right["cost_per_hour"].is_number(), "and priced: {right}");
    let line = shows_right_size(root, sized);
    for page in [
        export_html(&["export", &id(sized)]),
        export_html(&["export", &id(search), "--compare", &id(sized)]),
    ] {
        let text = if page.to_string_lossy().contains("-vs-") {
            check_page(&page, &[search, sized])
        } else {
            check_page(&page, &[sized])
        };
        let doc = report_xhtml(&text);
        let section = right_size_section(&doc).expect("a right-size section");
        let said = all_text(&section);
        // show's line, piece by piece: the instances with their 95 % range, the peak with its
        // headroom and one instance's capacity, the cost per hour and per million output
        // tokens, in the same words and figures
        for piece in line.split(", ") {
            assert!(said.contains(piece), "{piece:?} not in the section: {said}");
        }
        for words in [
            format!("{} instances", right["instances"]),
            "% headroom".into(),
            "per instance".into(),
            "per hour".into(),
            "per million output tokens".into(),
        ] {
            assert!(said.contains(&words), "no {words:?} in {said}");
        }
        // and the answer box does not say it a second time
        for b in with_attr(&doc, "div", "class", "answer") {
            assert!(!all_text(&b).contains("right-size"), "{}", all_text(&b));
        }
        // it follows the answer
        let ids: Vec<&str> = doc
            .descendants()
            .filter(|n| n.tag_name().name() == "section")
            .filter_map(|n| n.attribute("id"))
            .collect();
        assert_eq!(&ids[..3], ["answer", "right-size", "charts"], "{ids:?}");
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

/// The report pages the layout checks cover: a search, a sweep, a ten-level sweep sized by a
/// peak and a price (the longest tables and the right-size section), and a search compared
/// with it (two runs overlaid, two of every table).
fn layout_pages() -> Vec<(&'static str, PathBuf)> {
    let (_, search, sweep) = runs();
    let long = sized_sweep();
    vec![
        ("search", export_html(&["export", &id(search)])),
        ("sweep", export_html(&["export", &id(sweep)])),
        ("ten-level sweep", export_html(&["export", &id(long)])),
        (
            "search vs ten-level sweep",
            export_html(&["export", &id(search), "--compare", &id(long)]),
        ),
    ]
}

#[test]
fn at_a_1280_px_window_no_report_scrolls_sideways_or_cuts_a_column() {
    let Some(browser) = chromium() else {
        common::tool_missing("chromium", ".ci/run installs Debian's chromium");
        return;
    };
    for (name, page) in layout_pages() {
        let o = overflow(browser, &page, 1280, false);
        assert!(
            o.scroll_width <= 1280,
            "{name}: the page is {} px wide at a 1,280 px window: {:?}",
            o.scroll_width,
            o.past_the_edge
        );
        // nor does a table hide columns in its own scrolling box at this width
        assert!(
            o.past_the_edge.is_empty(),
            "{name}: past the window's right edge at 1,280 px: {:?}",
            &o.past_the_edge[..o.past_the_edge.len().min(12)]
        );
    }
}

/// A4 is 210 mm wide; the print stylesheet's margins are 12 mm: 186 mm of page, 703 CSS px.
const A4_TEXT_WIDTH_PX: u32 = 703;

#[test]
fn a_report_prints_on_a4_within_the_pages_width() {
    let Some(browser) = chromium() else {
        common::tool_missing("chromium", ".ci/run installs Debian's chromium");
        return;
    };
    for (name, page) in layout_pages() {
        let o = overflow(browser, &page, A4_TEXT_WIDTH_PX, true);
        assert!(
            o.scroll_width <= A4_TEXT_WIDTH_PX && o.past_the_edge.is_empty(),
            "{name}: printed, {} px wide on a {A4_TEXT_WIDTH_PX} px page: {:?}",
            o.scroll_width,
            &o.past_the_edge[..o.past_the_edge.len().min(12)]
        );
    }
    // Chromium's own print: A4 pages (595 x 842 points)
    let (_, search, _) = runs();
    let page = export_html(&["export", &id(search)]);
    let pdf = print_pdf(browser, &page, &page.with_extension("pdf"));
    let text = String::from_utf8_lossy(&pdf);
    let boxes: Vec<&str> = text
        .match_indices("/MediaBox")
        .map(|(i, _)| &text[i..text[i..].find(']').map_or(text.len(), |j| i + j + 1)])
        .collect();
    assert!(!boxes.is_empty(), "no page in the PDF");
    for b in &boxes {
        let nums: Vec<f64> = b
            .trim_start_matches("/MediaBox")
            .trim_matches(|c: char| c == ' ' || c == '[' || c == ']')
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        assert_eq!(nums.len(), 4, "{b}");
        let (w, h) = (nums[2] - nums[0], nums[3] - nums[1]);
        assert!(
            (w - 595.3).abs() < 2.0 && (h - 841.9).abs() < 2.0,
            "a page of {w} x {h} points, not A4: {b}"
        );
    }
}
