//! Pieces the panels share: sizes that scale with the image, colours, SI-style tick labels,
//! the load axis (concurrency or request rate: log scale, ticks at the measured levels).
//! Lines with dots and their legend entries are in [`super::series`].

use plotters::chart::MeshStyle;
use plotters::coord::combinators::{BindKeyPoints, LogCoord, WithKeyPoints};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{ChartPoint, ChartRun, ChartSpec, FONT, HACK_ADVANCE_EM};
use crate::plan::analysis::Axis;

pub(super) type Fallible<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;
pub(super) type ConcChart<'a, DB> =
    ChartContext<'a, DB, Cartesian2d<WithKeyPoints<LogCoord<f64>>, RangedCoordf64>>;

/// Colour of the SLA line.
pub const SLA_COLOR: RGBColor = super::theme::SLA;
/// Colour of the subtitle.
pub(super) const SUBTITLE_COLOR: RGBColor = super::theme::SUBTITLE;
/// Colour of the knee marker.
pub const KNEE_COLOR: RGBColor = super::theme::KNEE;
/// Colour of the answer marker and (lightened) its bracket.
pub const ANSWER_COLOR: RGBColor = super::theme::ANSWER;
/// Per run: (main series colour, second series colour).
pub const RUN_COLORS: [(RGBColor, RGBColor); 3] = [
    (super::theme::RUN_1_MAIN, super::theme::RUN_1_SECOND),
    (super::theme::RUN_2_MAIN, super::theme::RUN_2_SECOND),
    (super::theme::RUN_3_MAIN, super::theme::RUN_3_SECOND),
];

/// Text and stroke sizes for one image size.
pub(super) struct Sizes {
    pub title: f64,
    pub text: f64,
    pub small: f64,
    pub stroke: u32,
    pub dot: i32,
}

impl Sizes {
    pub fn for_image(w: u32, h: u32) -> Sizes {
        let s = (f64::from(w) / 1600.0).min(f64::from(h) / 900.0);
        Sizes {
            title: (28.0 * s).max(15.0),
            text: (19.0 * s).max(11.0),
            small: (16.0 * s).max(10.0),
            stroke: if s >= 0.75 { 3 } else { 2 },
            dot: if s >= 0.75 { 5 } else { 3 },
        }
    }
}

pub(super) fn colors(i: usize) -> (RGBColor, RGBColor) {
    RUN_COLORS[i % RUN_COLORS.len()]
}

pub(super) fn name(run: &ChartRun, what: &str) -> String {
    if run.label.is_empty() {
        what.to_string()
    } else {
        format!("{} {what}", run.label)
    }
}

/// `v` with at most `digits` decimals, trailing zeros dropped (`1.20` -> `1.2`, `3.0` -> `3`).
fn trimmed(v: f64, digits: usize) -> String {
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A count for a tick label, SI style: `850`, `1.5k`, `180k`, `1.2M`.
pub fn si(v: f64) -> String {
    let (scaled, unit) = crate::values::si_prefix(v);
    if unit.is_empty() {
        return if v.abs() >= 10.0 || v == 0.0 {
            format!("{v:.0}")
        } else {
            trimmed(v, 1)
        };
    }
    let digits = if scaled.abs() >= 10.0 { 0 } else { 1 };
    format!("{}{unit}", trimmed(scaled, digits))
}

/// A duration in ms for a tick label: `850 ms`, `1.4 s`, `12 s`, `0.5 ms`.
pub fn si_ms(v: f64) -> String {
    let a = v.abs();
    if a >= 1e3 {
        let s = v / 1e3;
        format!("{} s", trimmed(s, if s.abs() >= 10.0 { 0 } else { 1 }))
    } else if a >= 10.0 || v == 0.0 {
        format!("{v:.0} ms")
    } else {
        format!("{} ms", trimmed(v, 1))
    }
}

/// Where a load sits on the chart's x axis: the concurrency, or the rate in requests/s.
pub(super) fn x_of(axis: Axis, load: u32) -> f64 {
    match axis {
        Axis::Concurrency => f64::from(load),
        Axis::Rate => crate::metrics::summary::load_to_rps(load),
    }
}

/// A load for a label: `c=64`, or `2.5/s`.
pub(super) fn load_label(axis: Axis, load: u32) -> String {
    match axis {
        Axis::Concurrency => format!("c={load}"),
        Axis::Rate => format!(
            "{}/s",
            crate::values::fmt_rps(crate::metrics::summary::load_to_rps(load))
        ),
    }
}

/// The x-axis tick label of a position on the load axis: a concurrency in full (`1024`, as
/// every other surface writes it), a rate SI style.
fn x_tick(axis: Axis, v: f64) -> String {
    match axis {
        Axis::Concurrency => format!("{:.0}", v.round()),
        Axis::Rate => si(v),
    }
}

/// The concurrency range over every run, padded, for a log axis.
pub(super) fn conc_range(spec: &ChartSpec) -> (f64, f64) {
    let cs = spec
        .runs
        .iter()
        .flat_map(|r| r.points.iter().map(|p| x_of(spec.axis, p.concurrency)))
        .filter(|x| *x > 0.0);
    let lo = cs.clone().fold(f64::INFINITY, f64::min);
    let hi = cs.fold(0.0, f64::max);
    if !lo.is_finite() {
        return (1.0 / 1.4, 1.4);
    }
    (lo / 1.4, hi * 1.4)
}

/// Every measured load, sorted: each gets a tick mark (and a grid line).
pub(super) fn conc_ticks(spec: &ChartSpec) -> Vec<f64> {
    let mut cs: Vec<u32> = spec
        .runs
        .iter()
        .flat_map(|r| r.points.iter().map(|p| p.concurrency))
        .collect();
    cs.sort_unstable();
    cs.dedup();
    cs.into_iter().map(|c| x_of(spec.axis, c)).collect()
}

/// The loads whose tick labels matter most, in order: each run's answer, its bracket's ends,
/// its knee.
fn tick_priority(spec: &ChartSpec) -> Vec<f64> {
    let mut out = Vec::new();
    for r in &spec.runs {
        out.extend(r.answer);
        out.extend(r.bracket.iter().flatten().copied());
        out.extend(r.knee);
    }
    out.into_iter().map(|c| x_of(spec.axis, c)).collect()
}

/// Which ticks print their label: `ticks` are (load, pixel column, label width), sorted by
/// load. Labels are taken in the order of `first` (the answer, the bracket's ends, the
/// knee), then the lowest and highest load, then the rest from the lowest, each where it
/// keeps `gap` pixels from every label taken before; the others keep their tick mark only.
pub(super) fn labelled_ticks(ticks: &[(f64, i32, i32)], first: &[f64], gap: i32) -> Vec<f64> {
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(1.0);
    let mut order: Vec<usize> = Vec::new();
    let push = |i: usize, order: &mut Vec<usize>| {
        if !order.contains(&i) {
            order.push(i);
        }
    };
    for f in first {
        if let Some(i) = ticks.iter().position(|t| same(t.0, *f)) {
            push(i, &mut order);
        }
    }
    if !ticks.is_empty() {
        push(0, &mut order);
        push(ticks.len() - 1, &mut order);
    }
    for i in 0..ticks.len() {
        push(i, &mut order);
    }
    let mut taken: Vec<(i32, i32)> = Vec::new();
    let mut out = Vec::new();
    for i in order {
        let (v, px, w) = ticks[i];
        let span = (px - w / 2, px + w - w / 2);
        if taken
            .iter()
            .all(|&(l, r)| span.1 + gap <= l || r + gap <= span.0)
        {
            taken.push(span);
            out.push(v);
        }
    }
    out.sort_by(f64::total_cmp);
    out
}

pub(super) fn nothing<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    why: &str,
    sz: &Sizes,
) -> Fallible<DB> {
    let (w, h) = area.dim_in_pixel();
    let style = |size: f64| {
        TextStyle::from((FONT, size).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Center))
    };
    area.draw(&Text::new(
        caption.to_string(),
        ((w / 2) as i32, (sz.text * 1.2) as i32),
        style(sz.text),
    ))?;
    area.draw(&Text::new(
        why.to_string(),
        ((w / 2) as i32, (h / 2) as i32),
        style(sz.small),
    ))
}

pub(super) fn conc_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    spec: &ChartSpec,
    y_desc: &str,
    y_max: f64,
    y_fmt: &dyn Fn(&f64) -> String,
    sz: &Sizes,
) -> Result<ConcChart<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    let mut chart = conc_frame(area, spec, y_max, 0, sz)?;
    conc_mesh(&mut chart, spec, y_desc, y_fmt, sz)?;
    Ok(chart)
}

/// A chart against the load from 0 to `y_max`, its grid and axes not drawn yet, with `right`
/// pixels kept on the right for a secondary axis's labels (none when 0).
pub(super) fn conc_frame<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    spec: &ChartSpec,
    y_max: f64,
    right: u32,
    sz: &Sizes,
) -> Result<ConcChart<'a, DB>, DrawingAreaErrorKind<DB::ErrorType>> {
    let (lo, hi) = conc_range(spec);
    let mut b = builder(area, sz);
    if right > 0 {
        b.right_y_label_area_size(right);
    }
    b.build_cartesian_2d(
        (lo..hi).log_scale().with_key_points(conc_ticks(spec)),
        0f64..y_max,
    )
}

/// The grid and axes of a chart against the load: the load below, `y_desc` on the left.
pub(super) fn conc_mesh<DB: DrawingBackend>(
    chart: &mut ConcChart<DB>,
    spec: &ChartSpec,
    y_desc: &str,
    y_fmt: &dyn Fn(&f64) -> String,
    sz: &Sizes,
) -> Fallible<DB> {
    let axis = spec.axis;
    let ticks: Vec<(f64, i32, i32)> = conc_ticks(spec)
        .into_iter()
        .map(|x| {
            let px = chart.backend_coord(&(x, 0.0)).0;
            (x, px, line_box(&x_tick(axis, x), sz.small).0)
        })
        .collect();
    let labelled = labelled_ticks(&ticks, &tick_priority(spec), (sz.small * 0.8) as i32);
    let label = move |v: &f64| {
        if labelled
            .iter()
            .any(|l| (l - v).abs() <= 1e-9 * l.abs().max(1.0))
        {
            x_tick(axis, *v)
        } else {
            String::new()
        }
    };
    let y_labels = y_labels(chart, sz);
    house_mesh(&mut chart.configure_mesh(), sz)
        .y_labels(y_labels)
        .x_desc(match axis {
            Axis::Concurrency => "concurrency",
            Axis::Rate => "request rate req/s",
        })
        .y_desc(y_desc)
        .x_label_formatter(&label)
        .y_label_formatter(y_fmt)
        .draw()
}

/// How many y tick labels the plot's height holds, a line and a half of text apart.
pub(super) fn y_labels<DB: DrawingBackend, CT: CoordTranslate>(
    chart: &ChartContext<DB, CT>,
    sz: &Sizes,
) -> usize {
    let (_, y) = chart.plotting_area().get_pixel_range();
    let h = f64::from((y.end - y.start).max(0));
    ((h / (sz.small * 1.6)) as usize).clamp(2, 10)
}

/// Every chart's frame: margin and label areas (the caption is in the panel's head, above).
pub(super) fn builder<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    sz: &Sizes,
) -> ChartBuilder<'a, 'b, DB> {
    let mut b = ChartBuilder::on(area);
    b.margin((sz.small * 0.8) as u32)
        .margin_top(0)
        .x_label_area_size((sz.small * 2.8) as u32)
        .y_label_area_size((sz.small * 5.0) as u32);
    b
}

/// Every chart's grid and label look.
pub(super) fn house_mesh<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
    sz: &Sizes,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged<ValueType: std::fmt::Debug>,
    Y: Ranged<ValueType: std::fmt::Debug>,
    DB: DrawingBackend,
{
    mesh.label_style((FONT, sz.small))
        .axis_desc_style((FONT, sz.small))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
}

/// The box `text` in the chart font at `size` takes, in pixels, as a viewer lays it out: Hack
/// advances 0.602 em per character and a line is one em. (The glyphs' ink box, which the
/// font's `box_size` measures, is smaller: two labels placed by it could touch, as a compare
/// chart's c=8 and c=16 once did.) Every label placed apart from others is measured by it.
pub(super) fn line_box(text: &str, size: f64) -> (i32, i32) {
    let w = text.chars().count() as f64 * HACK_ADVANCE_EM * size;
    (w.ceil() as i32, size.ceil() as i32)
}

/// The plot's left edge in backend pixels.
pub(super) fn plot_left<DB: DrawingBackend, CT: CoordTranslate>(
    chart: &ChartContext<DB, CT>,
) -> i32 {
    chart.plotting_area().get_pixel_range().0.start
}

pub(super) fn max_of(spec: &ChartSpec, f: impl Fn(&ChartPoint) -> Option<f64>) -> Option<f64> {
    spec.runs
        .iter()
        .flat_map(|r| r.points.iter().filter_map(&f))
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
}

pub(super) fn headroom(v: f64) -> f64 {
    if v > 0.0 && v.is_finite() {
        v * 1.15
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::chart::ChartRun;

    fn spec_at(levels: &[u32]) -> ChartSpec {
        let points = levels
            .iter()
            .map(|&c| ChartPoint {
                concurrency: c,
                output_tps: 1.0,
                e2e_p50_ms: None,
                e2e_p99_ms: None,
                ttft_p50_ms: None,
                ttft_p95_ms: None,
                ..ChartPoint::default()
            })
            .collect();
        ChartSpec {
            runs: vec![ChartRun {
                points,
                ..ChartRun::default()
            }],
            ..ChartSpec::default()
        }
    }

    #[test]
    fn every_level_has_a_tick_and_the_ones_that_matter_keep_their_labels() {
        assert_eq!(
            conc_ticks(&spec_at(&[64, 256, 1024, 64])),
            vec![64.0, 256.0, 1024.0]
        );
        // (load, pixel, label width 30): 180 to 212 a few pixels apart, as a search's are
        let px = [
            (16, 0),
            (128, 300),
            (180, 350),
            (189, 356),
            (198, 362),
            (212, 370),
        ];
        let ticks: Vec<(f64, i32, i32)> = px.iter().map(|&(c, x)| (c as f64, x, 30)).collect();
        // nothing first: the lowest and highest, then from the lowest where there is room
        assert_eq!(labelled_ticks(&ticks, &[], 8), vec![16.0, 128.0, 212.0]);
        // the answer and the bracket's ends first: 189 and 128 (212 has no room left)
        assert_eq!(
            labelled_ticks(&ticks, &[189.0, 189.0, 128.0], 8),
            vec![16.0, 128.0, 189.0]
        );
    }

    #[test]
    fn the_axis_is_padded_around_the_levels() {
        let (lo, hi) = conc_range(&spec_at(&[4, 64]));
        assert!(lo < 4.0 && hi > 64.0);
    }

    #[test]
    fn ticks_read_si_style() {
        for (v, want) in [
            (0.0, "0"),
            (2.5, "2.5"),
            (850.0, "850"),
            (1500.0, "1.5k"),
            (180_000.0, "180k"),
            (1_200_000.0, "1.2M"),
            (2_000_000.0, "2M"),
        ] {
            assert_eq!(si(v), want);
        }
        for (v, want) in [
            (0.0, "0 ms"),
            (2.5, "2.5 ms"),
            (850.0, "850 ms"),
            (1400.0, "1.4 s"),
            (1000.0, "1 s"),
            (42_000.0, "42 s"),
        ] {
            assert_eq!(si_ms(v), want);
        }
    }
}
