//! Charts of finished runs, drawn with plotters: the same drawing code ([`draw`]) renders to
//! SVG (text as `<text>` elements) and to PNG (an RGB buffer encoded with the `png` crate).
//!
//! One image holds four panels: output throughput against concurrency; p50 and p99
//! end-to-end latency with the p50-p99 band, the SLA line and the knee marker; TTFT p50 and
//! p95; and throughput against p99 latency with each point labelled by its concurrency. When
//! a run recorded what the server's own metrics said (the levels' `server`), the server
//! chart ([`server_panel`]) shows its batch and queue against the load with its KV-cache and
//! GPU use in percent on a right-hand axis, and its GPUs' power, when recorded, on a panel of
//! its own; the image then lays out three panels over the other three. Legends and marker
//! names sit above the plots ([`legend`]), never over data. Several runs overlay on the same
//! panels (`export --compare`).
//!
//! Text needs a font even for SVG (plotters measures labels to lay out the axes). The font is
//! Hack Regular, embedded by the `epaint_default_fonts` crate (MIT and Bitstream Vera
//! licences) and registered with plotters' `ab_glyph` backend, so charts render on a server
//! with no fonts installed.

pub mod corner;
mod draw;
mod glyphs;
mod legend;
mod marks;
mod panel_ctx;
pub mod pareto;
mod parts;
mod series;
mod server_panel;
pub mod server_point;
pub mod theme;

pub use parts::{si, si_ms};
pub use server_point::ServerPoint;

use std::sync::OnceLock;

use plotters::backend::RGBPixel;
use plotters::prelude::*;

use crate::metrics::LevelSummary;
use crate::plan::analysis::Axis;
use crate::plan::judge::SlaSet;
use crate::plan::RunAnalysis;
use crate::record::sla::{fmt_value, SlaMetric, Statistic, Verdict};

/// The font family name every chart text uses (registered by [`ensure_font`]). The embedded
/// font is monospaced, so SVG viewers are asked for a monospace font too: its text then
/// takes the width the layout measured.
pub const FONT: &str = "monospace";
/// Hack's advance per character, in ems (it is monospaced): the width of a line of text.
pub const HACK_ADVANCE_EM: f64 = 0.602;

/// One measured level, as the charts need it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChartPoint {
    /// The level's load: its concurrency, or on a rate axis its rate in hundredths of a
    /// request/s (see [`Axis`]).
    pub concurrency: u32,
    /// Output tokens/sec.
    pub output_tps: f64,
    /// End-to-end latency percentiles (ms).
    pub e2e_p50_ms: Option<f64>,
    pub e2e_p99_ms: Option<f64>,
    /// Time to first token percentiles (ms); `None` when the run did not stream.
    pub ttft_p50_ms: Option<f64>,
    pub ttft_p95_ms: Option<f64>,
    /// Not held, cut short, or its verdict uncertain: drawn hollow.
    pub hollow: bool,
    /// Each latency SLA's statistic as observed at this level, with its 95 % interval.
    pub sla_marks: Vec<SlaMark>,
    /// What the server's own metrics said during the level, when they were recorded.
    pub server: Option<ServerPoint>,
}

/// A latency SLA's statistic observed at one level (ms), with its 95 % interval when the
/// data has one (drawn as an error bar).
#[derive(Debug, Clone, PartialEq)]
pub struct SlaMark {
    pub metric: SlaMetric,
    pub value: f64,
    pub ci: Option<(f64, f64)>,
}

/// One run's series.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChartRun {
    /// Prefix of this run's legend entries (empty for a single run; `A`, `B` to compare).
    pub label: String,
    /// Points sorted by load, one per load.
    pub points: Vec<ChartPoint>,
    /// The knee load, drawn as a vertical marker.
    pub knee: Option<u32>,
    /// The run's answer (a search's, or a sweep's highest passing level), a vertical marker.
    pub answer: Option<u32>,
    /// What the marker is called: `answer`, or `ideal balance` for a run without SLAs (its
    /// answer is the ideal balance, as the results call it).
    pub answer_name: &'static str,
    /// The bracket around the answer (max passing, first failing), shaded.
    pub bracket: [Option<u32>; 2],
    /// Instances, headroom and cost for the peak, when a peak or price was set: the image
    /// carries them in a box (with one run).
    pub right_size: Option<crate::plan::capacity::RightSize>,
}

impl ChartRun {
    /// The points of `levels` on `analysis`' axis, sorted by load; when a load was measured
    /// twice the later level wins (a re-measured point replaces the first). Answer, bracket
    /// and knee come from the analysis; each level is judged on `limits` (the run's SLAs and
    /// error limit) for the hollow dots and the SLA statistic's error bars.
    pub fn from_analysis(
        label: &str,
        levels: &[LevelSummary],
        analysis: &RunAnalysis,
        limits: &SlaSet,
    ) -> ChartRun {
        let (_, on_axis) = crate::plan::analysis::on_axis(levels);
        // with no SLA and no search nothing waits on a verdict: the default error limit's
        // uncertainty on a short sweep does not make its levels doubtful (as in the analysis)
        let judged = !analysis.slas.is_empty() || analysis.search.is_some();
        let mut points: Vec<ChartPoint> = Vec::new();
        for l in &on_axis {
            let checks = limits.check(l);
            let uncertain = judged && checks.iter().any(|c| c.verdict == Verdict::Uncertain);
            let p = ChartPoint {
                concurrency: l.load(),
                output_tps: l.sustained_tps(),
                e2e_p50_ms: l.e2e_p50_ms(),
                e2e_p99_ms: l.e2e_p99_ms(),
                ttft_p50_ms: l.ttft_p(50.0),
                ttft_p95_ms: l.ttft_p95_ms(),
                hollow: !l.held || l.partial || uncertain,
                sla_marks: checks
                    .iter()
                    .filter(|c| matches!(c.threshold.metric, SlaMetric::E2e | SlaMetric::Ttft))
                    .filter_map(|c| {
                        Some(SlaMark {
                            metric: c.threshold.metric,
                            value: c.observed?,
                            ci: c.ci.and_then(|i| Some((i.0?, i.1?))),
                        })
                    })
                    .collect(),
                server: l.server.as_ref().and_then(ServerPoint::of),
            };
            match points.iter_mut().find(|q| q.concurrency == p.concurrency) {
                Some(q) => *q = p,
                None => points.push(p),
            }
        }
        points.sort_by_key(|p| p.concurrency);
        // the answer and the lowest level above it that did not pass (docs/search.md, "Words")
        let bracket = analysis.bracket;
        ChartRun {
            label: label.to_string(),
            points,
            knee: analysis.knee.as_ref().map(|k| k.concurrency),
            answer: analysis.answer.map(|a| a.concurrency),
            answer_name: if analysis.search.is_none() && analysis.slas.is_empty() {
                "ideal balance"
            } else {
                "answer"
            },
            bracket,
            right_size: analysis.planning.right_size.clone(),
        }
    }
}

/// An SLA line: a latency limit (ms) on its metric's panel, labelled with metric,
/// statistic and limit (`SLA e2e p95 <= 40 ms`).
#[derive(Debug, Clone, PartialEq)]
pub struct SlaLine {
    pub metric: SlaMetric,
    pub stat: Statistic,
    pub limit_ms: f64,
    pub label: String,
}

impl SlaLine {
    /// The lines of the latency SLAs (end-to-end and TTFT) in `slas`.
    pub fn of(slas: &SlaSet) -> Vec<SlaLine> {
        slas.0
            .iter()
            .filter(|t| matches!(t.metric, SlaMetric::E2e | SlaMetric::Ttft))
            .map(|t| SlaLine {
                metric: t.metric,
                stat: t.stat,
                limit_ms: t.limit,
                label: format!(
                    "SLA {} {} <= {}",
                    t.metric.label(),
                    t.stat,
                    fmt_value(t.metric, t.limit)
                ),
            })
            .collect()
    }
}

/// What one chart image shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChartSpec {
    /// First title line, e.g. `sim · sim-model · rag: 1024 in / 256 out`.
    pub title: String,
    /// Second title line, e.g. the run id and date.
    pub subtitle: String,
    /// What the x axis of the first three panels is: concurrency, or request rate.
    pub axis: Axis,
    pub runs: Vec<ChartRun>,
    /// The latency SLAs, each drawn as a dashed horizontal line on its metric's panel.
    pub slas: Vec<SlaLine>,
}

impl ChartSpec {
    /// The end-to-end SLA line, if any.
    pub fn e2e_sla(&self) -> Option<&SlaLine> {
        self.slas.iter().find(|s| s.metric == SlaMetric::E2e)
    }

    /// Whether the legend lists each run's answer, bracket, knee and p50-p99 band: with one
    /// run only. With several they share one colour per kind, so an entry could not tell the
    /// runs apart; the answers and knees are named at the top of their lines instead.
    pub fn lists_markers(&self) -> bool {
        self.runs.len() == 1
    }

    /// Whether any run recorded server figures the server chart draws: the image then has
    /// its fifth panel.
    pub fn has_server(&self) -> bool {
        self.runs
            .iter()
            .any(|r| r.points.iter().any(|p| p.server.is_some()))
    }
}

/// A chart could not be drawn or encoded.
#[derive(Debug, thiserror::Error)]
#[error("chart: {0}")]
pub struct ChartError(pub String);

/// Registers the embedded font with plotters once per process.
pub fn ensure_font() -> Result<(), ChartError> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, epaint_default_fonts::HACK_REGULAR)
            .is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(ChartError("the embedded font did not load".into()))
    }
}

/// Smallest chart size accepted (pixels), below which the panels' heads (caption, legend,
/// marker names) leave too little of the plot.
pub const MIN_SIZE: (u32, u32) = (800, 450);
/// Largest chart size accepted (pixels).
pub const MAX_SIZE: (u32, u32) = (8000, 8000);

fn check_size((w, h): (u32, u32)) -> Result<(), ChartError> {
    if w < MIN_SIZE.0 || h < MIN_SIZE.1 || w > MAX_SIZE.0 || h > MAX_SIZE.1 {
        return Err(ChartError(format!(
            "size {w}x{h} is outside {}x{} to {}x{}",
            MIN_SIZE.0, MIN_SIZE.1, MAX_SIZE.0, MAX_SIZE.1
        )));
    }
    Ok(())
}

/// A backend that draws nothing: a panel is drawn on it first to measure its head (see
/// [`draw`]). Text is measured with the embedded font, as on the real backends.
pub(crate) struct Dry(pub u32, pub u32);

impl DrawingBackend for Dry {
    type ErrorType = std::io::Error;

    fn get_size(&self) -> (u32, u32) {
        (self.0, self.1)
    }
    fn ensure_prepared(
        &mut self,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::io::Error>> {
        Ok(())
    }
    fn present(&mut self) -> Result<(), plotters_backend::DrawingErrorKind<std::io::Error>> {
        Ok(())
    }
    fn draw_pixel(
        &mut self,
        _: plotters_backend::BackendCoord,
        _: plotters_backend::BackendColor,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::io::Error>> {
        Ok(())
    }
    fn draw_line<S: plotters_backend::BackendStyle>(
        &mut self,
        _: plotters_backend::BackendCoord,
        _: plotters_backend::BackendCoord,
        _: &S,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::io::Error>> {
        Ok(())
    }
    fn draw_rect<S: plotters_backend::BackendStyle>(
        &mut self,
        _: plotters_backend::BackendCoord,
        _: plotters_backend::BackendCoord,
        _: &S,
        _: bool,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::io::Error>> {
        Ok(())
    }
    fn draw_path<S: plotters_backend::BackendStyle, I: IntoIterator<Item = (i32, i32)>>(
        &mut self,
        _: I,
        _: &S,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::io::Error>> {
        Ok(())
    }
    fn draw_circle<S: plotters_backend::BackendStyle>(
        &mut self,
        _: plotters_backend::BackendCoord,
        _: u32,
        _: &S,
        _: bool,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::io::Error>> {
        Ok(())
    }
    fn fill_polygon<S: plotters_backend::BackendStyle, I: IntoIterator<Item = (i32, i32)>>(
        &mut self,
        _: I,
        _: &S,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::io::Error>> {
        Ok(())
    }
    fn draw_text<S: plotters_backend::BackendTextStyle>(
        &mut self,
        _: &str,
        _: &S,
        _: plotters_backend::BackendCoord,
    ) -> Result<(), plotters_backend::DrawingErrorKind<std::io::Error>> {
        Ok(())
    }
}

/// The drawing area an SVG is drawn on.
type SvgArea<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
/// The drawing area a PNG is drawn on (text through [`glyphs::Bitmap`]).
type PngArea<'a> = DrawingArea<glyphs::Bitmap<'a>, plotters::coord::Shift>;

/// An SVG document of `size` pixels, drawn by `draw`: the one place every SVG is made.
fn svg_of<E: std::fmt::Display>(
    size: (u32, u32),
    draw: impl FnOnce(&SvgArea) -> Result<(), E>,
) -> Result<String, ChartError> {
    check_size(size)?;
    ensure_font()?;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        draw(&root).map_err(|e| ChartError(e.to_string()))?;
        root.present().map_err(|e| ChartError(e.to_string()))?;
    }
    Ok(svg)
}

/// PNG bytes of `size` pixels, 8-bit RGB, drawn by `draw`: the one place every PNG is made.
fn png_of<E: std::fmt::Display>(
    size: (u32, u32),
    draw: impl FnOnce(&PngArea) -> Result<(), E>,
) -> Result<Vec<u8>, ChartError> {
    check_size(size)?;
    ensure_font()?;
    let (w, h) = size;
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let backend = BitMapBackend::<RGBPixel>::with_buffer_and_format(&mut rgb, size)
            .map_err(|e| ChartError(e.to_string()))?;
        let root = glyphs::Bitmap(backend).into_drawing_area();
        draw(&root).map_err(|e| ChartError(e.to_string()))?;
        root.present().map_err(|e| ChartError(e.to_string()))?;
    }
    encode_png(&rgb, size)
}

/// The chart as an SVG document of `size` (width, height) pixels.
pub fn render_svg(spec: &ChartSpec, size: (u32, u32)) -> Result<String, ChartError> {
    svg_of(size, |root| draw::draw(root, spec))
}

/// One of the panels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartPanel {
    /// Output throughput against the load.
    Throughput,
    /// End-to-end latency against the load.
    Latency,
    /// Time to first token against the load.
    Ttft,
    /// Output throughput against p99 end-to-end latency.
    ThroughputVsLatency,
    /// What the server's metrics said against the load: running and waiting requests,
    /// KV-cache use and GPU power.
    Server,
}

impl ChartPanel {
    /// The four panels drawn from the client's measurements (every run has them).
    pub const CLIENT: [ChartPanel; 4] = [
        ChartPanel::Throughput,
        ChartPanel::Latency,
        ChartPanel::Ttft,
        ChartPanel::ThroughputVsLatency,
    ];
}

/// One panel alone as an SVG document of `size` pixels (the HTML report's charts).
pub fn render_panel_svg(
    spec: &ChartSpec,
    panel: ChartPanel,
    size: (u32, u32),
) -> Result<String, ChartError> {
    svg_of(size, |root| draw::draw_panel(root, spec, panel))
}

/// The chart as PNG bytes of `size` (width, height) pixels, 8-bit RGB.
pub fn render_png(spec: &ChartSpec, size: (u32, u32)) -> Result<Vec<u8>, ChartError> {
    png_of(size, |root| draw::draw(root, spec))
}

/// A campaign's Pareto chart as an SVG document of `size` pixels.
pub fn render_pareto_svg(
    spec: &pareto::ParetoSpec,
    size: (u32, u32),
) -> Result<String, ChartError> {
    svg_of(size, |root| pareto::draw(root, spec))
}

/// A campaign's Pareto chart as PNG bytes of `size` pixels.
pub fn render_pareto_png(
    spec: &pareto::ParetoSpec,
    size: (u32, u32),
) -> Result<Vec<u8>, ChartError> {
    png_of(size, |root| pareto::draw(root, spec))
}

/// An RGB buffer of `size` pixels as PNG bytes.
fn encode_png(rgb: &[u8], (w, h): (u32, u32)) -> Result<Vec<u8>, ChartError> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc
            .write_header()
            .map_err(|e| ChartError(format!("png: {e}")))?;
        writer
            .write_image_data(rgb)
            .map_err(|e| ChartError(format!("png: {e}")))?;
        writer
            .finish()
            .map_err(|e| ChartError(format!("png: {e}")))?;
    }
    Ok(out)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// One run of (concurrency, output tok/s, e2e p50, e2e p99) levels, TTFT p50 and p95 the
    /// e2e ones over `ttft_div`, its knee at `knee`.
    pub(in crate::report::chart) fn one_run(
        levels: &[(u32, f64, f64, f64)],
        ttft_div: f64,
        knee: u32,
    ) -> ChartSpec {
        let points = levels
            .iter()
            .map(|&(c, tps, p50, p99)| ChartPoint {
                concurrency: c,
                output_tps: tps,
                e2e_p50_ms: Some(p50),
                e2e_p99_ms: Some(p99),
                ttft_p50_ms: Some(p50 / ttft_div),
                ttft_p95_ms: Some(p99 / ttft_div),
                ..ChartPoint::default()
            })
            .collect();
        ChartSpec {
            title: "t".into(),
            subtitle: "s".into(),
            runs: vec![ChartRun {
                points,
                knee: Some(knee),
                ..ChartRun::default()
            }],
            ..ChartSpec::default()
        }
    }

    fn spec() -> ChartSpec {
        let mut s = one_run(&[(2, 100.0, 50.0, 80.0), (8, 300.0, 90.0, 200.0)], 10.0, 8);
        s.slas = SlaLine::of(&SlaSet(vec![crate::record::sla::SlaThreshold::parse(
            SlaMetric::E2e,
            "p95:150ms",
        )
        .unwrap()]));
        s
    }

    #[test]
    fn text_uses_only_the_embedded_font_never_the_system_ones() {
        ensure_font().unwrap();
        // the registered family measures text...
        let ours = FontDesc::new(FontFamily::Name(FONT), 20.0, FontStyle::Normal);
        let (w, h) = ours.box_size("knee c=8").unwrap();
        assert!(w > 50 && h > 10, "{w}x{h}");
        // ...and a family that is only on some systems is not looked up at all: the font
        // backend is ab_glyph with our registered bytes, so a bare server renders the same
        let system = FontDesc::new(FontFamily::Name("DejaVu Sans"), 20.0, FontStyle::Normal);
        assert!(system.box_size("x").is_err());
    }

    #[test]
    fn sizes_out_of_range_are_refused() {
        assert!(render_svg(&spec(), (10, 10)).is_err());
        assert!(render_png(&spec(), (9000, 900)).is_err());
    }

    #[test]
    fn svg_has_text_and_png_has_a_header() {
        let svg = render_svg(&spec(), (800, 450)).unwrap();
        assert!(svg.contains("<svg") && svg.contains("knee c=8"));
        let png = render_png(&spec(), (800, 450)).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }

    #[test]
    fn an_answer_at_the_axis_end_is_labelled_inside_the_panel() {
        // the levels of a search that answered 245 with 256 failing (one seen in a report)
        let mut s = spec();
        s.runs[0].points = [16, 32, 64, 128, 181, 215, 235, 245, 256]
            .map(|c| ChartPoint {
                concurrency: c,
                output_tps: 100.0 * c as f64,
                ..ChartPoint::default()
            })
            .to_vec();
        s.runs[0].answer = Some(245);
        s.runs[0].answer_name = "answer";
        let text = "answer c=245";
        let (w, h) = (800, 450);
        let svg = render_panel_svg(&s, ChartPanel::Throughput, (w, h)).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let label = doc
            .descendants()
            .find(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(text))
            .unwrap_or_else(|| panic!("no answer label in {svg}"));
        let x: f64 = label.attribute("x").unwrap().parse().unwrap();
        let size: f64 = label.attribute("font-size").unwrap().parse().unwrap();
        // the font's advance is 0.602 em
        let right = x + text.len() as f64 * 0.602 * size;
        assert!(
            x >= 0.0 && right <= w as f64,
            "label spans x {x}..{right} of {w}"
        );
    }

    #[test]
    fn from_analysis_carries_each_levels_server_means() {
        use crate::metrics::fixtures::level;
        use crate::record::{GpuSummary, MeanMax, ServerSummary};
        let mm = |mean, max| Some(MeanMax { mean, max });
        let mut busy = level(1, 64, 128, 50, 400, 64, None);
        busy.server = Some(ServerSummary {
            scheme: "vllm".into(),
            samples: 4,
            running: mm(32.0, 32.0),
            waiting: mm(30.5, 33.0),
            kv_cache_usage: mm(0.61, 0.64),
            preemptions: Some(0.0),
            gpu: Some(GpuSummary {
                gpus: 1,
                power_w: mm(410.0, 455.0),
                ..GpuSummary::default()
            }),
            ..ServerSummary::default()
        });
        // a level without telemetry (a server without /metrics) has none
        let levels = vec![level(0, 16, 64, 20, 200, 64, None), busy];
        let a = crate::plan::Analysis::default();
        let run =
            ChartRun::from_analysis("", &levels, &crate::plan::analyse(&a, &levels), &a.limits());
        let servers: Vec<_> = run
            .points
            .iter()
            .map(|p| (p.concurrency, p.server))
            .collect();
        assert_eq!(
            servers,
            vec![
                (16, None),
                (
                    64,
                    Some(ServerPoint {
                        running: Some(32.0),
                        waiting: Some(30.5),
                        kv_cache_usage: Some(0.61),
                        gpu_power_w: Some(410.0),
                        ..ServerPoint::default()
                    })
                ),
            ]
        );
    }

    #[test]
    fn sla_lines_name_metric_statistic_and_limit() {
        let s = spec();
        assert_eq!(s.slas[0].label, "SLA e2e p95 <= 150 ms");
        let svg = render_svg(&s, (800, 450)).unwrap();
        assert!(svg.contains("SLA e2e p95 &lt;= 150 ms"), "{svg}");
    }
}
