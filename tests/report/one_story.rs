//! One story, told the same everywhere (docs/search.md, "Words"; docs/formats.md, "The
//! level's throughput"): a search and a sweep against a `rightsize sim` process, each read back through `show`, the CSV export,
//! the JSON export, the HTML report, the SVG chart and the dashboard's results screen (a past
//! run opened from its runs list, drawn on a test terminal). From every surface the test pulls
//! each level's throughput (`output tok/s`), p99 end-to-end latency, TTFT p95 and verdict, and
//! the answer and the breaking point, and checks they agree at the precision each surface
//! shows: a figure shown as `3.07k` agrees with 3,074.9 and not with 3,090; a point on the
//! chart agrees to within a pixel and a half of its axis.

use crate::support::common;
use crate::support::export_support;

use common::{bin, stderr, stdout, tmpdir, SimProcess};
use export_support::{id, polylines, report_xhtml, rs, runs_in};
use rightsize::tui::app::{App, Screen};
use rightsize::tui::setup::SetupChoices;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Both runs, made once against one simulator with 8 batch slots at 10x (a request of 64
/// tokens out lasts about 70 ms; past 8 in flight requests queue), with an e2e p90 and a
/// TTFT p95 limit that break past 8: (results root, run folder) of the search, then of the
/// sweep, each in a root of its own (run ids are by the second: no waiting between the two).
/// Whatever the machine's load makes of them, the surfaces must tell the same story.
fn runs() -> &'static [(PathBuf, PathBuf); 2] {
    static RUNS: OnceLock<[(PathBuf, PathBuf); 2]> = OnceLock::new();
    RUNS.get_or_init(|| {
        let sim = SimProcess::start(&["--max-num-seqs", "8", "--time-scale", "10"]);
        let cfg = tmpdir("one-story-config").join("rightsize.toml");
        std::fs::write(&cfg, format!("[endpoints.sim]\nurl = \"{}\"\n", sim.url)).unwrap();
        let run = |sub: &str, plan: &[&str]| {
            let root = tmpdir(&format!("one-story-{sub}"));
            let o = bin()
                .args([sub, "--config"])
                .arg(&cfg)
                .args(["-e", "sim", "--input-tokens", "64", "--output-tokens", "64"])
                .args(["--stream", "-n", "96", "--max-error-rate", "0.05"])
                // decided on 96 requests (a p90 needs 36 values, a p95 59): 2 to 8 in flight
                // answer in about 70 ms, 16 queue for half their time
                .args(["--e2e-sla", "p90:110ms", "--ttft-sla", "p95:40ms"])
                .args(["--peak-concurrency", "100", "--price-per-hour", "4"])
                .args(plan)
                .arg("--out")
                .arg(&root)
                .output()
                .expect("run rightsize");
            // 0, or 3 when a search found no passing level: either is a story to tell
            assert!(matches!(o.status.code(), Some(0 | 3)), "{}", stderr(&o));
            let dir = runs_in(&root).pop().expect("a run folder");
            (root, dir)
        };
        let search = run(
            "search",
            &["--min", "2", "--max", "32", "--max-iterations", "6"],
        );
        let sweep = run("sweep", &["-c", "2,8,16,32"]);
        drop(sim);
        [search, sweep]
    })
}

// ---- what a level is, from the JSON export (full precision) ----

/// A level as the JSON export holds it, with its verdict as the tables word it.
#[derive(Debug, Clone)]
struct Level {
    concurrency: u32,
    tps: f64,
    e2e_p99: f64,
    ttft_p95: f64,
    /// `pass`, `fail`, `uncertain`, `not held` or `partial`.
    verdict: String,
}

/// The story the JSON export tells: its levels, the answer (concurrency, output tok/s), the
/// bracket and the breaking point.
#[derive(Debug)]
struct Story {
    levels: Vec<Level>,
    answer: Option<(u32, f64)>,
    bracket: [Option<u32>; 2],
    breaking: Option<u32>,
}

fn u32_of(v: &Value) -> Option<u32> {
    v.as_u64().map(|c| c as u32)
}

fn story(json: &Value) -> Story {
    let s = &json["summary"];
    let iterations = s["iterations"].as_array().expect("summary iterations");
    let levels: Vec<Level> = json["levels"]
        .as_array()
        .unwrap()
        .iter()
        .zip(iterations)
        .map(|(l, r)| {
            // the level file keeps its throughput keys; the export names the one figure
            assert!(l.get("output_token_throughput_steady").is_none(), "{l}");
            assert!(l.get("output_token_throughput_sustained").is_none(), "{l}");
            let verdict = if r["partial"] == true {
                "partial".to_string()
            } else if r["held"] != true {
                "not held".to_string()
            } else {
                r["verdict"].as_str().unwrap().to_string()
            };
            Level {
                concurrency: u32_of(&l["concurrency"]).unwrap(),
                tps: l["output_tps"]["avg"].as_f64().unwrap(),
                e2e_p99: l["request_latency"]["p99"].as_f64().unwrap(),
                ttft_p95: l["time_to_first_token"]["p95"].as_f64().unwrap(),
                verdict,
            }
        })
        .collect();
    assert_eq!(levels.len(), iterations.len());
    // the summary's iterations carry the same figure
    for (l, r) in levels.iter().zip(iterations) {
        assert_eq!(r["output_tps"].as_f64().unwrap(), l.tps, "{r}");
    }
    Story {
        levels,
        answer: s["answer"]["concurrency"]
            .as_u64()
            .map(|c| (c as u32, s["answer"]["output_tps"].as_f64().unwrap())),
        bracket: [u32_of(&s["bracket"][0]), u32_of(&s["bracket"][1])],
        breaking: u32_of(&s["planning"]["breaking_point"]),
    }
}

// ---- agreeing at the precision shown ----

/// A figure as shown (`3.07k`, `150`, `1.61 s`, `23.4 ms`, `1614`, `0.0150`): its value in
/// the base unit (ms for times) and the half-width of its last digit.
fn shown(text: &str) -> (f64, f64) {
    let t = text.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix(" ms") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix(" s") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix('k') {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix('M') {
        (n, 1e6)
    } else {
        (t, 1.0)
    };
    let v: f64 = num
        .parse()
        .unwrap_or_else(|_| panic!("not a figure: {text:?}"));
    let decimals = num.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    (v * mult, 0.5 * 10f64.powi(-decimals) * mult)
}

/// `text` shows `exact` (its rounding, with a hair for binary fractions).
fn agrees(text: &str, exact: f64) -> bool {
    let (v, half) = shown(text);
    (v - exact).abs() <= half * (1.0 + 1e-9) + 1e-9
}

#[track_caller]
fn check(surface: &str, what: &str, c: u32, text: &str, exact: f64) {
    assert!(
        agrees(text, exact),
        "{surface}: {what} at {c} shows {text:?}, the level's figure is {exact}"
    );
}

/// A verdict as a table words it, reduced to the story's words.
fn verdict_word(cell: &str) -> String {
    let c = cell.trim().to_lowercase();
    let first = c.split_whitespace().next().unwrap_or("");
    match first {
        "pass" => "pass".into(),
        "fail" => "fail".into(),
        // a screen left undecided leans, it is not decided
        "uncertain" | "~over" | "~within" => "uncertain".into(),
        "not" => "not held".into(),
        "partial" => "partial".into(),
        other => panic!("not a verdict: {cell:?} ({other})"),
    }
}

/// `bracket: 8 (passed) to 16 (uncertain)` -> the ends named, with the word for each (every
/// `N (word)` of the line: `bracket: none passed, lowest 2 (failed)` names one).
fn bracket_words(line: &str) -> Vec<(u32, String)> {
    // the bracket's own words, not what follows it (the HTML report goes on with the
    // search's confidence after a `;`)
    let rest = line.split_once("bracket: ").map_or("", |(_, r)| r);
    let rest = rest.split(';').next().unwrap_or("");
    let words: Vec<&str> = rest.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let (Ok(c), Some(next)) = (w.parse::<u32>(), words.get(i + 1)) else {
            continue;
        };
        let Some(word) = next.strip_prefix('(') else {
            continue;
        };
        let word = if word == "not" {
            "not held".to_string()
        } else {
            word.trim_end_matches(')').to_string()
        };
        out.push((c, word));
    }
    out
}

/// The word a bracket end should carry for a level of the story.
fn end_word(verdict: &str) -> &str {
    match verdict {
        "pass" => "passed",
        "fail" => "failed",
        "partial" => "cut",
        other => other,
    }
}

/// `answer: 8 concurrent requests at 3.07k output tok/s` -> (8, "3.07k").
fn answer_words(line: &str) -> Option<(u32, String)> {
    let rest = line.split_once("answer: ")?.1;
    if rest.starts_with("none") {
        return None;
    }
    let c: u32 = rest.split_whitespace().next()?.parse().ok()?;
    let tps = rest.split_once(" at ")?.1.split_whitespace().next()?;
    Some((c, tps.to_string()))
}

/// `breaking point: 16` -> Some(16); `breaking point: not decided (...)` -> None.
fn breaking_words(line: &str) -> Option<u32> {
    let rest = line.split_once("breaking point: ")?.1;
    rest.split_whitespace().next()?.parse().ok()
}

/// The agreed story checked against what one surface said of the run as a whole.
#[track_caller]
fn check_run_words(surface: &str, st: &Story, answer: &str, bracket: &str, breaking: &str) {
    match (answer_words(answer), st.answer) {
        (Some((c, tps)), Some((want, exact))) => {
            assert_eq!(c, want, "{surface}: {answer}");
            check(surface, "output tok/s at the answer", c, &tps, exact);
        }
        (None, None) => assert!(answer.contains("answer: none"), "{surface}: {answer}"),
        (got, want) => panic!("{surface}: answer {got:?}, the run's is {want:?}: {answer}"),
    }
    let ends = bracket_words(bracket);
    let want_ends: Vec<u32> = st.bracket.iter().flatten().copied().collect();
    assert_eq!(
        ends.iter().map(|e| e.0).collect::<Vec<_>>(),
        want_ends,
        "{surface}: {bracket}"
    );
    for (c, word) in &ends {
        let at = st
            .levels
            .iter()
            .rfind(|l| l.concurrency == *c)
            .expect("a bracket end is a level");
        assert_eq!(word, end_word(&at.verdict), "{surface}: {bracket}");
    }
    assert!(
        breaking.contains("breaking point: "),
        "{surface}: {breaking}"
    );
    assert_eq!(
        breaking_words(breaking),
        st.breaking,
        "{surface}: {breaking}"
    );
    if st.breaking.is_none() {
        assert!(
            breaking.contains("not decided") || breaking.contains("not reached"),
            "{surface}: {breaking}"
        );
    }
}

/// The line of `text` that holds `key`, from `key` on, up to a double space or a border.
fn phrase(text: &str, key: &str) -> String {
    let Some(at) = text.find(key) else {
        return String::new();
    };
    let rest = &text[at..];
    let end = [rest.find("  "), rest.find('│'), rest.find('\n')]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(rest.len());
    rest[..end].to_string()
}

// ---- the surfaces ----

fn export_to(root: &Path, run: &Path, flag: &str, ext: &str) -> String {
    let dir = tmpdir("one-story-export");
    let path = dir.join(format!("out.{ext}"));
    let o = rs(root, &["export", &id(run), flag, path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::read_to_string(&path).unwrap()
}

/// `show`: the level table (throughput, TTFT p95, e2e p99, verdict) and the planning lines.
fn check_show(root: &Path, run: &Path, st: &Story) {
    let o = rs(root, &["show", &id(run)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let mut lines = out.lines().skip_while(|l| !l.starts_with("concurrency "));
    let header: Vec<&str> = lines.next().expect("a level table").split("  ").collect();
    assert!(header.iter().any(|h| h.trim() == "output tok/s"), "{out}");
    assert!(!header.iter().any(|h| h.contains("steady")), "{out}");
    assert!(header.iter().any(|h| h.trim() == "verdict"), "{out}");
    let rows: Vec<&str> = lines.skip(1).take_while(|l| !l.trim().is_empty()).collect();
    assert_eq!(rows.len(), st.levels.len(), "{out}");
    for (row, l) in rows.iter().zip(&st.levels) {
        let cols: Vec<&str> = row.split_whitespace().collect();
        // concurrency, req/s, output tok/s, ttft p50, ttft p95, itl p95, e2e p50, e2e p99,
        // errors (`3 (0.3%)` when any), verdict
        assert_eq!(cols[0], l.concurrency.to_string(), "{row}");
        check("show", "output tok/s", l.concurrency, cols[2], l.tps);
        check("show", "TTFT p95", l.concurrency, cols[4], l.ttft_p95);
        check("show", "e2e p99", l.concurrency, cols[7], l.e2e_p99);
        let skip = if cols.get(9).is_some_and(|c| c.starts_with('(')) {
            10
        } else {
            9
        };
        assert_eq!(
            verdict_word(&cols[skip..].join(" ")),
            l.verdict,
            "show: {row}"
        );
    }
    let line = |k: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with(k))
            .unwrap_or("")
            .trim()
            .to_string()
    };
    check_run_words(
        "show",
        st,
        &line("answer: "),
        &line("bracket: "),
        &line("breaking point: "),
    );
    // one breaking point, said once
    assert_eq!(out.matches("breaking point").count(), 1, "{out}");
}

/// The CSV export: the level's figures at full precision under their one name.
fn check_csv(root: &Path, run: &Path, st: &Story) {
    let csv = export_to(root, run, "--csv", "csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    assert!(!header.iter().any(|h| h.contains("steady")), "{header:?}");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), st.levels.len());
    for (r, l) in rows.iter().zip(&st.levels) {
        let f = |name: &str| r[col(name)].parse::<f64>().unwrap();
        assert_eq!(r[col("concurrency")], l.concurrency.to_string());
        assert_eq!(
            f("output_tps"),
            l.tps,
            "csv output_tps at {}",
            l.concurrency
        );
        assert_eq!(f("request_latency_p99_ms"), l.e2e_p99);
        assert_eq!(f("time_to_first_token_p95_ms"), l.ttft_p95);
        let verdict = if r[col("held")] == "false" {
            "not held".to_string()
        } else {
            r[col("verdict")].to_string()
        };
        assert_eq!(verdict, l.verdict, "csv verdict at {}", l.concurrency);
    }
}

/// Every element named `tag`.
fn all<'a>(doc: &'a roxmltree::Document, tag: &str) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| n.tag_name().name() == tag)
        .collect()
}

/// The text of an element and all inside it.
fn text_in(n: &roxmltree::Node) -> String {
    n.descendants()
        .filter(|d| d.is_text())
        .filter_map(|d| d.text())
        .collect::<String>()
        .trim()
        .to_string()
}

/// The HTML report: the answer box and the levels table.
fn check_html(root: &Path, run: &Path, st: &Story) {
    let html = export_to(root, run, "--html", "html");
    let doc = report_xhtml(&html);
    let class = |n: &roxmltree::Node, c: &str| n.attribute("class") == Some(c);
    let headline = all(&doc, "p")
        .into_iter()
        .find(|n| class(n, "headline"))
        .map(|n| text_in(&n))
        .unwrap();
    let bracket = all(&doc, "p")
        .into_iter()
        .find(|n| class(n, "bracket"))
        .map(|n| text_in(&n))
        .unwrap();
    let dts = all(&doc, "dt");
    let breaking: Vec<String> = dts
        .iter()
        .filter(|dt| text_in(dt) == "breaking point")
        .filter_map(|dt| dt.next_sibling_element())
        .map(|dd| format!("breaking point: {}", text_in(&dd)))
        .collect();
    assert_eq!(breaking.len(), 1, "one breaking point in the report");
    check_run_words("html", st, &headline, &bracket, &breaking[0]);
    assert!(!html.contains("(fails)"), "{headline}");

    let table = all(&doc, "table")
        .into_iter()
        .find(|n| class(n, "levels"))
        .expect("a levels table");
    let heads: Vec<String> = all(&doc, "th")
        .iter()
        .filter(|th| th.ancestors().any(|a| a == table))
        .map(text_in)
        .collect();
    assert_eq!(heads[5], "output tok/s", "{heads:?}");
    // the limits' columns follow, then the verdict, then e2e p50, p90, p99
    let verdict_at = heads.iter().position(|h| h == "verdict").unwrap();
    let ttft_at = heads[6..verdict_at]
        .iter()
        .position(|h| h.contains("TTFT"))
        .map(|j| 6 + j)
        .expect("a TTFT limit column");
    let e2e_p99_at = verdict_at + 3;
    let rows: Vec<Vec<String>> = all(&doc, "tr")
        .into_iter()
        .filter(|tr| tr.ancestors().any(|a| a == table))
        .filter(|tr| {
            tr.attribute("class")
                .is_some_and(|c| c.starts_with("level"))
        })
        .map(|tr| {
            tr.children()
                .filter(|c| c.is_element())
                .map(|c| text_in(&c))
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), st.levels.len());
    for (r, l) in rows.iter().zip(&st.levels) {
        assert_eq!(r[1], l.concurrency.to_string(), "{r:?}");
        check("html", "output tok/s", l.concurrency, &r[5], l.tps);
        // `pass 23.4 ms [20.1 ms, 25.0 ms]`: the verdict, then the observed TTFT p95
        let ttft = r[ttft_at].split(" [").next().unwrap();
        let ttft = ttft.split_once(' ').unwrap().1;
        check("html", "TTFT p95", l.concurrency, ttft, l.ttft_p95);
        check("html", "e2e p99", l.concurrency, &r[e2e_p99_at], l.e2e_p99);
        assert_eq!(verdict_word(&r[verdict_at]), l.verdict, "html: {r:?}");
    }
}

/// A text element of the SVG: (x, y, anchor, text).
fn svg_texts(doc: &roxmltree::Document) -> Vec<(f64, f64, String, String)> {
    all(doc, "text")
        .iter()
        .map(|n| {
            (
                n.attribute("x").unwrap().parse().unwrap(),
                n.attribute("y").unwrap().parse().unwrap(),
                n.attribute("text-anchor").unwrap_or("start").to_string(),
                text_in(n),
            )
        })
        .collect()
}

/// The SVG chart: the answer marker and bracket, and each level's throughput read off the
/// first panel's curve against its axis (to a pixel and a half).
fn check_svg(root: &Path, run: &Path, st: &Story) {
    let svg = export_to(root, run, "--svg", "svg");
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let texts = svg_texts(&doc);
    let has = |s: &str| texts.iter().any(|t| t.3 == s);
    assert!(has("output tok/s"), "the throughput's one name");
    match st.answer {
        Some((c, _)) => assert!(has(&format!("answer c={c}")), "answer c={c}"),
        None => assert!(
            !texts.iter().any(|t| t.3.starts_with("answer c=")),
            "no answer"
        ),
    }
    if let [Some(lo), Some(hi)] = st.bracket {
        assert!(
            has(&format!("bracket c={lo} to c={hi}")),
            "bracket c={lo} to c={hi}"
        );
    }
    // the first panel: its caption, its y ticks (right-aligned, left of the plot) and the
    // throughput curve (the blue polyline nearest under the caption, one point per load)
    let (cx, cy) = texts
        .iter()
        .find(|t| t.3 == "output throughput")
        .map(|t| (t.0, t.1))
        .unwrap();
    let mut loads: Vec<u32> = st.levels.iter().map(|l| l.concurrency).collect();
    loads.sort_unstable();
    loads.dedup();
    let curves: Vec<Vec<(f64, f64)>> = polylines(&doc, "#1F77B4")
        .into_iter()
        .filter(|pts| pts.len() == loads.len())
        .collect();
    let curve = curves
        .iter()
        .filter(|pts| {
            pts.iter()
                .all(|p| p.1 > cy && (p.0 - cx).abs() < cx.max(300.0))
        })
        .min_by(|a, b| {
            let d = |pts: &Vec<(f64, f64)>| (pts[0].0 - cx).abs() + pts[0].1 - cy;
            d(a).total_cmp(&d(b))
        })
        .expect("the throughput curve");
    let left = curve[0].0;
    // the panel ends at its x axis's title
    let bottom = texts
        .iter()
        .filter(|t| t.1 > cy && (t.0 - cx).abs() < 200.0)
        .filter(|t| t.3 == "concurrency" || t.3.starts_with("request rate"))
        .map(|t| t.1)
        .fold(f64::MAX, f64::min);
    let ticks: Vec<(f64, f64)> = texts
        .iter()
        .filter(|t| t.2 == "end" && t.0 < left && t.0 > left - 200.0 && t.1 > cy)
        .filter(|t| t.1 < bottom)
        .filter_map(|t| {
            let v = t.3.trim();
            let ok = v.chars().all(|c| c.is_ascii_digit() || ".kM".contains(c));
            (ok && !v.is_empty()).then(|| (t.1, shown(v).0))
        })
        .collect();
    assert!(
        ticks.len() >= 2,
        "y ticks of the throughput panel: {ticks:?}"
    );
    let (y0, v0) = ticks
        .iter()
        .copied()
        .fold((0.0, f64::MAX), |a, t| if t.1 < a.1 { t } else { a });
    let (y1, v1) = ticks
        .iter()
        .copied()
        .fold((0.0, f64::MIN), |a, t| if t.1 > a.1 { t } else { a });
    let per_px = (v1 - v0) / (y0 - y1);
    for (c, p) in loads.iter().zip(curve) {
        // the chart reads a re-measured load's latest level, as every surface does
        let l = st.levels.iter().rfind(|l| l.concurrency == *c).unwrap();
        let read = v0 + (y0 - p.1) * per_px;
        assert!(
            (read - l.tps).abs() <= 1.5 * per_px,
            "svg: output tok/s at {c} reads {read:.0} off the chart, the level's is {:.0} \
             ({per_px:.1} a pixel)",
            l.tps
        );
    }
}

/// The dashboard: the run opened from its runs list, drawn on a 300 x 60 test terminal (wide
/// enough that the results panel's lines do not wrap);
/// the levels table and the results panel.
fn check_dashboard(root: &Path, run: &Path, st: &Story) {
    let choices = SetupChoices {
        endpoints: vec!["sim".into()],
        sagemaker_endpoints: vec![],
        profiles: vec!["rag".into()],
        default_endpoint: "sim".into(),
        default_profile: "rag".into(),
        default_levels: vec![16],
        default_requests: 64,
    };
    let mut app = App::new(&choices, false);
    app.runs = rightsize::tui::history::load_runs(root).unwrap();
    app.runs_selected = app
        .runs
        .iter()
        .position(|r| r.path == run)
        .expect("the run is listed");
    app.screen = Screen::Runs;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(app.screen, Screen::Run, "{:?}", app.status);
    let mut term =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(300, 60)).expect("terminal");
    term.draw(|f| rightsize::tui::render::render(f, &app))
        .expect("draw");
    let screen: String = term
        .backend()
        .to_string()
        .lines()
        .map(|l| l.trim_matches('"').to_string() + "\n")
        .collect();
    // the levels table, its columns found by their headers (`#`, load, output tok/s, req/s,
    // ttft50, ttft95, itl50, e2e50, e2e99, err, then the verdict)
    let header = screen
        .lines()
        .find(|l| l.contains("output tok/s") && l.contains("e2e99"))
        .expect("the levels table");
    assert!(!header.contains("steady"), "{screen}");
    let table_x = header.find("│#").expect("the table's left border") + "│".len();
    let names: Vec<String> = header[table_x..]
        .split('│')
        .next()
        .unwrap()
        .replace("output tok/s", "output_tok/s")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let col = |name: &str| {
        names
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no {name} column in {names:?}"))
    };
    let rows: BTreeMap<usize, Vec<String>> = screen
        .lines()
        .filter_map(|l| {
            let cell = l.get(table_x..)?;
            let cols: Vec<String> = cell
                .split('│')
                .next()?
                .split_whitespace()
                .map(str::to_string)
                .collect();
            let n: usize = cols.first()?.parse().ok()?;
            (cols.len() >= 8).then_some((n, cols))
        })
        .collect();
    assert_eq!(rows.len(), st.levels.len(), "{screen}");
    for (n, l) in st.levels.iter().enumerate() {
        let cols = &rows[&(n + 1)];
        // the knee's level carries a `◆` after its load
        let shift = usize::from(cols[2] == "◆");
        let at = |name: &str| &cols[col(name) + shift];
        assert_eq!(cols[1], l.concurrency.to_string(), "{cols:?}");
        check(
            "dashboard",
            "output tok/s",
            l.concurrency,
            at("output_tok/s"),
            l.tps,
        );
        check(
            "dashboard",
            "TTFT p95",
            l.concurrency,
            at("ttft95"),
            l.ttft_p95,
        );
        check(
            "dashboard",
            "e2e p99",
            l.concurrency,
            at("e2e99"),
            l.e2e_p99,
        );
        let verdict = cols[col("err") + shift + 1..].join(" ");
        assert_eq!(verdict_word(&verdict), l.verdict, "dashboard: {cols:?}");
    }
    check_run_words(
        "dashboard",
        st,
        &phrase(&screen, "answer: "),
        &phrase(&screen, "bracket: "),
        &phrase(&screen, "breaking point: "),
    );
}

/// Every surface of `run` (in results root `root`) against its JSON export.
fn one_story((root, run): &(PathBuf, PathBuf)) {
    let json: Value = serde_json::from_str(&export_to(root, run, "--json", "json")).unwrap();
    let st = story(&json);
    assert!(!st.levels.is_empty());
    // the breaking point is the lowest held level that failed, decided
    let lowest_fail = st
        .levels
        .iter()
        .filter(|l| l.verdict == "fail")
        .map(|l| l.concurrency)
        .min();
    assert_eq!(st.breaking, lowest_fail, "{st:?}");
    check_show(root, run, &st);
    check_csv(root, run, &st);
    check_html(root, run, &st);
    check_svg(root, run, &st);
    check_dashboard(root, run, &st);
}

#[test]
fn a_search_tells_one_story_on_every_surface() {
    one_story(&runs()[0]);
}

#[test]
fn a_sweep_tells_one_story_on_every_surface() {
    one_story(&runs()[1]);
}

#[test]
fn figures_agree_at_the_precision_shown() {
    assert!(agrees("3.07k", 3074.9));
    assert!(!agrees("3.07k", 3090.0));
    assert!(agrees("1.61 s", 1614.0));
    assert!(agrees("1614", 1613.6));
    assert!(agrees("23.4 ms", 23.44));
    assert!(!agrees("150", 151.0));
    assert_eq!(
        bracket_words("bracket: 8 (passed) to 16 (not held)"),
        vec![(8, "passed".into()), (16, "not held".into())]
    );
    assert_eq!(
        answer_words("answer: 8 concurrent requests at 3.07k output tok/s"),
        Some((8, "3.07k".into()))
    );
    assert_eq!(
        breaking_words("breaking point: not decided (no level failed)"),
        None
    );
}
