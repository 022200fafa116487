//! Runs and readers shared by the HTML report and chart tests: a search with a bracketed
//! answer and a sweep, made once per test binary against the simulator, and a ten-level sweep
//! sized by a peak and a price when a test asks for it; the report parsed as XML (it is
//! written as well-formed XHTML); headless Chromium screenshots, layouts and PDFs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::common::{next_clock, on_sim, on_sim_at, stderr, tmpdir};
use super::export_support::{id, runs_in, sim_run};

/// (results root, a search run, a sweep run), made once.
pub fn runs() -> &'static (PathBuf, PathBuf, PathBuf) {
    static RUNS: OnceLock<(PathBuf, PathBuf, PathBuf)> = OnceLock::new();
    RUNS.get_or_init(|| {
        let root = tmpdir("report-runs");
        let search = search_run(&root);
        let sweep = sim_run(&root, "2,4,8,16");
        (root, search, sweep)
    })
}

/// A ten-level sweep (1 to 512) sized by `--peak-concurrency 100 --price-per-hour 4`, so its
/// summary has a right-size; made once, in [`runs`]' results root.
pub fn sized_sweep() -> &'static PathBuf {
    static RUN: OnceLock<PathBuf> = OnceLock::new();
    RUN.get_or_init(|| {
        let (root, _, _) = runs();
        let before = runs_in(root);
        let o = next_clock(&mut on_sim("sweep", 64, 16))
            .args(["--stream", "-c", "1,2,4,8,16,32,64,128,256,512", "-n", "24"])
            .args([
                "--peak-concurrency",
                "100",
                "--price-per-hour",
                "4",
                "--out",
            ])
            .arg(root)
            .output()
            .expect("run rightsize sweep");
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        runs_in(root)
            .into_iter()
            .find(|p| !before.contains(p))
            .expect("the sweep made a run folder")
    })
}

/// A search against the in-process simulator at 20x with a p95 end-to-end SLA of 400 ms:
/// 16 passes (about 100 ms), the simulator's 128 slots are crossed somewhere below 256, so
/// the search ends with an answer between two measured levels.
pub fn search_run(root: &Path) -> PathBuf {
    let before = runs_in(root);
    let turn = super::export_support::MACHINE.alone();
    let o = next_clock(&mut on_sim_at("search", 64, 32, 20.0))
        .args(["--stream", "-n", "48", "--max-error-rate", "0.05"])
        .args(["--e2e-sla", "p95:400ms", "--max", "256", "--out"])
        .arg(root)
        .output()
        .expect("run rightsize search");
    drop(turn);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    runs_in(root)
        .into_iter()
        .find(|p| !before.contains(p))
        .expect("the search made a run folder")
}

/// The run's `summary.json`.
pub fn summary(run: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap()
}

/// Every element named `tag` whose `attr` is `value`.
pub fn with_attr<'a>(
    doc: &'a roxmltree::Document,
    tag: &str,
    attr: &str,
    value: &str,
) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| n.tag_name().name() == tag && n.attribute(attr) == Some(value))
        .collect()
}

/// The trimmed text of an element.
pub fn text_of(n: &roxmltree::Node) -> String {
    n.text().unwrap_or("").trim().to_string()
}

/// Headless Chromium, if installed: `chromium` or `chromium-browser`.
pub fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Loads `page` in headless Chromium and saves a screenshot; returns (PNG bytes, what
/// Chromium logged). Console messages are logged on stderr as `CONSOLE`.
pub fn screenshot(browser: &str, page: &Path, out: &Path) -> (Vec<u8>, String) {
    let profile = tmpdir("chromium-profile");
    let _turn = super::export_support::MACHINE.take(1);
    let o = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,2000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", out.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    let log = stderr(&o);
    assert!(o.status.success(), "chromium failed: {log}");
    (
        std::fs::read(out).expect("chromium wrote the screenshot"),
        log,
    )
}

/// (width, height, RGB(A) pixels as 3- or 4-byte chunks, bytes per pixel) of a PNG.
pub fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>, usize) {
    let mut dec = png::Decoder::new(std::io::Cursor::new(bytes));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = dec.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    buf.truncate(info.buffer_size());
    let bpp = info.color_type.samples();
    (info.width, info.height, buf, bpp)
}

/// `export` arguments for the search run alone and for it compared with the sweep, named.
pub fn single_and_compare(search: &Path, sweep: &Path) -> [(&'static str, Vec<String>); 2] {
    let export = |more: &[String]| {
        let mut v = vec!["export".to_string(), id(search)];
        v.extend_from_slice(more);
        v
    };
    [
        ("single", export(&[])),
        ("compare", export(&["--compare".into(), id(sweep)])),
    ]
}

/// Where a page overflows a window `width` px wide, as Chromium lays it out: the document's
/// `scrollWidth`, and every element (outside the charts' SVG) whose box reaches past the
/// window's right edge, even inside a box that scrolls (so cut from view), as
/// `section: tag.class right=PX width=PX "text"`.
pub struct Overflow {
    pub scroll_width: u32,
    pub past_the_edge: Vec<String>,
}

/// The script the layout check adds to a copy of the page (the report has none): it writes
/// its findings into a `<pre id="probe">` that `--dump-dom` prints.
const PROBE: &str = r#"<script>
(function(){
 var d = document.documentElement, edge = d.clientWidth, out = [String(d.scrollWidth)];
 var all = document.body.getElementsByTagName('*');
 for (var i = 0; i < all.length; i++) {
  var e = all[i];
  if (e.closest('svg') && e.tagName.toLowerCase() != 'svg') continue;
  var r = e.getBoundingClientRect();
  if (r.right > edge + 0.5) {
   var s = e.closest('section'), c = e.getAttribute('class');
   out.push((s ? s.id : '-') + ': ' + e.tagName.toLowerCase() + (c ? '.' + c : '') +
    ' right=' + Math.round(r.right) + ' width=' + Math.round(r.width) + ' ' +
    JSON.stringify(e.textContent.slice(0, 24)));
  }
 }
 var pre = document.createElement('pre');
 pre.id = 'probe';
 pre.textContent = out.join('\n');
 document.body.appendChild(pre);
})();
</script>"#;

/// Lays `page` out in headless Chromium at a window `width` px wide and reports what
/// overflows. With `print`, the page's print stylesheet applies (its `@media print` rules
/// made to apply on screen), so `width` is a printed page's width less its margins.
pub fn overflow(browser: &str, page: &Path, width: u32, print: bool) -> Overflow {
    let mut html = std::fs::read_to_string(page).unwrap();
    if print {
        html = html.replace("@media print", "@media all");
    }
    let probe = page.with_file_name(format!(
        "probe-{}-{width}{}.html",
        page.file_stem().unwrap().to_string_lossy(),
        if print { "-print" } else { "" }
    ));
    std::fs::write(&probe, html.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    let profile = tmpdir("chromium-profile");
    let _turn = super::export_support::MACHINE.take(1);
    let o = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            &format!("--window-size={width},2000"),
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("file://{}", probe.display()))
        .output()
        .expect("run chromium");
    assert!(o.status.success(), "chromium failed: {}", stderr(&o));
    let dom = String::from_utf8_lossy(&o.stdout);
    let start = dom
        .find("<pre id=\"probe\">")
        .map(|i| i + "<pre id=\"probe\">".len())
        .unwrap_or_else(|| panic!("the probe wrote nothing: {}", stderr(&o)));
    let end = start + dom[start..].find("</pre>").expect("the probe's end");
    let unescape = |s: &str| {
        s.replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    };
    let mut lines = dom[start..end].lines().map(unescape);
    let scroll_width = lines
        .next()
        .and_then(|w| w.trim().parse().ok())
        .expect("the document's scrollWidth");
    Overflow {
        scroll_width,
        past_the_edge: lines.collect(),
    }
}

/// Prints `page` to PDF with headless Chromium; returns the PDF's bytes.
pub fn print_pdf(browser: &str, page: &Path, out: &Path) -> Vec<u8> {
    let profile = tmpdir("chromium-profile");
    let _turn = super::export_support::MACHINE.take(1);
    let o = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-pdf-header-footer",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--print-to-pdf={}", out.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(o.status.success(), "chromium failed: {}", stderr(&o));
    std::fs::read(out).expect("chromium wrote the PDF")
}
