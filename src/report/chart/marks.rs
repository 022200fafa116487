//! What the charts say about the answer: the answer marker with its bracket shaded, the knee,
//! SLA lines labelled with metric and statistic, error bars of each level's SLA statistic (its
//! 95 % interval), and point labels placed so that none overlaps another.

use plotters::prelude::*;

use super::legend::{marker, Legend, Shape, Swatch};
use super::parts::*;
use super::{ChartSpec, SlaLine, SlaMetric};

/// The vertical markers, drawn under the series: each run's answer as a solid line over its
/// bracket (max passing to first failing) shaded, each run's knee as a dashed line, each named
/// at its top in the panel's head (`answer c=N`, `knee c=N`; `A answer c=N` with several runs,
/// stacked where they would overlap). The bracket is shaded at least `2 * dot + 2` pixels
/// wide from the answer, so it shows at every size. `listed`: the legend lists them too.
pub(super) fn markers<DB: DrawingBackend>(
    chart: &mut ConcChart<DB>,
    spec: &ChartSpec,
    y_max: f64,
    listed: bool,
    legend: &mut Legend,
    sz: &Sizes,
) -> Fallible<DB> {
    if listed {
        marker_entries(spec, legend, sz);
    }
    for run in &spec.runs {
        if let [Some(lo), Some(hi)] = run.bracket {
            let (x0, x1) = (x_of(spec.axis, lo), x_of(spec.axis, hi));
            let (p0, _) = chart.backend_coord(&(x0, y_max));
            let (p1, _) = chart.backend_coord(&(x1, y_max));
            let min = 2 * sz.dot + 2;
            let fill = ANSWER_COLOR.mix(BRACKET_ALPHA);
            // at least `min` pixels wide, from the answer's side
            let widen = (min - (p1 - p0)).max(0);
            chart.draw_series(std::iter::once(
                EmptyElement::at((x0, y_max))
                    + Rectangle::new(
                        [(0, 0), (p1 - p0 + widen, chart_height(chart))],
                        fill.filled(),
                    ),
            ))?;
        }
        let Some(a) = run.answer else { continue };
        let x = x_of(spec.axis, a);
        let style = ANSWER_COLOR.stroke_width(sz.stroke);
        chart.draw_series(LineSeries::new(vec![(x, 0.0), (x, y_max)], style))?;
        let text = name(
            run,
            &format!("{} {}", run.answer_name, load_label(spec.axis, a)),
        );
        legend.top(chart.backend_coord(&(x, y_max)).0, text, ANSWER_COLOR);
    }
    for run in &spec.runs {
        let Some(k) = run.knee else { continue };
        let style = KNEE_COLOR.stroke_width(sz.stroke);
        let x = x_of(spec.axis, k);
        let label = name(run, &format!("knee {}", load_label(spec.axis, k)));
        chart.draw_series(DashedLineSeries::new(
            vec![(x, 0.0), (x, y_max)],
            8,
            6,
            style,
        ))?;
        legend.top(chart.backend_coord(&(x, y_max)).0, label, KNEE_COLOR);
    }
    Ok(())
}

/// How opaque the bracket's shade is.
pub(super) const BRACKET_ALPHA: f64 = 0.16;

/// The plot's height in pixels.
fn chart_height<DB: DrawingBackend>(chart: &ConcChart<DB>) -> i32 {
    let (_, y) = chart.plotting_area().get_pixel_range();
    y.end - y.start
}

/// The legend entries of a single run's answer, bracket and knee (none with several runs:
/// their names at the tops of the lines tell the runs apart).
pub(super) fn marker_entries(spec: &ChartSpec, legend: &mut Legend, sz: &Sizes) {
    if !spec.lists_markers() {
        return;
    }
    for run in &spec.runs {
        if let [Some(lo), Some(hi)] = run.bracket {
            let (lo, hi) = (load_label(spec.axis, lo), load_label(spec.axis, hi));
            legend.entry(
                name(run, &format!("bracket {lo} to {hi}")),
                Swatch::Fill(ANSWER_COLOR.mix(BRACKET_ALPHA * 1.5)),
            );
        }
        if let Some(a) = run.answer {
            let text = format!("{} {}", run.answer_name, load_label(spec.axis, a));
            legend.entry(
                name(run, &text),
                Swatch::Line {
                    color: ANSWER_COLOR,
                    width: sz.stroke,
                    dash: None,
                    shape: None,
                },
            );
        }
        if let Some(k) = run.knee {
            legend.entry(
                name(run, &format!("knee {}", load_label(spec.axis, k))),
                Swatch::Line {
                    color: KNEE_COLOR,
                    width: sz.stroke,
                    dash: Some((8, 6)),
                    shape: None,
                },
            );
        }
    }
}

/// The legend entries of the markers' fill: filled for a level held and decided, hollow for
/// one not held, cut short or undecided (only when some level is drawn hollow).
pub(super) fn dot_entries(spec: &ChartSpec, legend: &mut Legend) {
    let hollow = spec.runs.iter().any(|r| r.points.iter().any(|p| p.hollow));
    if hollow {
        let color = KNEE_COLOR;
        legend.entry(
            "filled: level held and decided",
            Swatch::Dot {
                color,
                hollow: false,
            },
        );
        legend.entry(
            "hollow: not held, cut short or undecided",
            Swatch::Dot {
                color,
                hollow: true,
            },
        );
    }
}

/// The legend entries of what the latency panels share, for the image's legend: the p50-p99
/// spread (one run) and the SLA statistic's 95 % interval, when drawn.
pub(super) fn spread_entries(spec: &ChartSpec, legend: &mut Legend) {
    if spec.lists_markers()
        && spec.runs.iter().any(|r| {
            r.points
                .iter()
                .filter(|p| p.e2e_p50_ms.is_some() && p.e2e_p99_ms.is_some())
                .count()
                >= 2
        })
    {
        legend.entry("p50-p99 spread", Swatch::Fill(colors(0).1.mix(0.18)));
    }
    let intervals = spec.runs.iter().any(|r| {
        r.points
            .iter()
            .any(|p| p.sla_marks.iter().any(|m| m.ci.is_some()))
    });
    if intervals && !spec.slas.is_empty() {
        legend.entry(
            "95 % interval of the SLA statistic",
            Swatch::Whisker(colors(0).1),
        );
    }
}

/// The SLA lines of `metric`: dashed, horizontal from `x0` to `x1`, labelled in the legend.
pub(super) fn sla_lines<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<DB, CT>,
    spec: &ChartSpec,
    metric: SlaMetric,
    (x0, x1): (f64, f64),
    legend: &mut Legend,
    sz: &Sizes,
) -> Fallible<DB> {
    for line in spec.slas.iter().filter(|l| l.metric == metric) {
        let ends = [(x0, line.limit_ms), (x1, line.limit_ms)];
        sla_line(chart, line, ends, legend, sz)?;
    }
    Ok(())
}

/// One dashed SLA line between two points, with its legend entry.
pub(super) fn sla_line<DB: DrawingBackend, CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<DB, CT>,
    line: &SlaLine,
    ends: [(f64, f64); 2],
    legend: &mut Legend,
    sz: &Sizes,
) -> Fallible<DB> {
    let style = SLA_COLOR.stroke_width(sz.stroke);
    chart.draw_series(DashedLineSeries::new(ends.to_vec(), 12, 6, style))?;
    legend.entry(
        line.label.clone(),
        Swatch::Line {
            color: SLA_COLOR,
            width: sz.stroke,
            dash: Some((8, 4)),
            shape: None,
        },
    );
    Ok(())
}

/// Error bars: at each level, the 95 % interval of each `metric` SLA's statistic, with caps
/// and a diamond at the observed value. One legend entry per run.
pub(super) fn error_bars<DB: DrawingBackend>(
    chart: &mut ConcChart<DB>,
    spec: &ChartSpec,
    metric: SlaMetric,
    listed: bool,
    legend: &mut Legend,
    sz: &Sizes,
) -> Fallible<DB> {
    let Some(line) = spec.slas.iter().find(|l| l.metric == metric) else {
        return Ok(());
    };
    let stat = line.stat;
    for (i, run) in spec.runs.iter().enumerate() {
        let color = colors(i).1;
        let style = color.stroke_width(2);
        let bars: Vec<(f64, f64, f64, f64)> = run
            .points
            .iter()
            .flat_map(|p| {
                let x = x_of(spec.axis, p.concurrency);
                p.sla_marks
                    .iter()
                    .filter(|m| m.metric == metric)
                    .filter_map(move |m| m.ci.map(|(lo, hi)| (x, lo, m.value, hi)))
            })
            .collect();
        if bars.is_empty() {
            continue;
        }
        let cap = sz.dot + 3;
        chart.draw_series(
            bars.iter()
                .map(|&(x, lo, _, hi)| PathElement::new(vec![(x, lo), (x, hi)], style)),
        )?;
        if listed {
            legend.entry(
                name(run, &format!("{} {stat} 95 % interval", metric.label())),
                Swatch::Whisker(color),
            );
        }
        for &(x, lo, v, hi) in &bars {
            let caps = [lo, hi].map(|y| {
                EmptyElement::at((x, y)) + PathElement::new(vec![(-cap, 0), (cap, 0)], style)
            });
            chart.draw_series(caps)?;
            marker(
                chart.plotting_area(),
                Shape::Diamond,
                (x, v),
                sz.dot,
                color,
                false,
            )?;
        }
    }
    Ok(())
}

/// A label's box in pixels: left, top, right, bottom.
pub(super) type LabelBox = (i32, i32, i32, i32);

/// A label to place: its point's pixel position and the text's (width, height) in pixels.
pub(super) type LabelAt = ((i32, i32), (i32, i32));

fn overlaps(a: &LabelBox, b: &LabelBox) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Where each label goes, as a pixel offset from its point, or `None` to drop it: tried
/// above right, below right, above left, below left, right, left, above and below the point;
/// the first place that overlaps no label placed before, no box of `obstacles` (the data
/// markers) and stays inside `bounds` wins. `points` are pixel positions with the text's size.
pub(super) fn place_labels(
    points: &[LabelAt],
    gap: i32,
    obstacles: &[LabelBox],
    bounds: LabelBox,
) -> Vec<Option<(i32, i32)>> {
    let mut placed: Vec<LabelBox> = Vec::new();
    points
        .iter()
        .map(|&((px, py), (w, h))| {
            let tries = [
                (gap, -h - gap / 2),
                (gap, gap / 2),
                (-w - gap, -h - gap / 2),
                (-w - gap, gap / 2),
                (gap + 2, -h / 2),
                (-w - gap - 2, -h / 2),
                (-w / 2, -h - gap - 2),
                (-w / 2, gap + 2),
            ];
            let chosen = tries.into_iter().find(|&(dx, dy)| {
                let b = (px + dx, py + dy, px + dx + w, py + dy + h);
                b.0 >= bounds.0
                    && b.1 >= bounds.1
                    && b.2 <= bounds.2
                    && b.3 <= bounds.3
                    && !placed.iter().chain(obstacles).any(|p| overlaps(p, &b))
            })?;
            placed.push((
                px + chosen.0,
                py + chosen.1,
                px + chosen.0 + w,
                py + chosen.1 + h,
            ));
            Some(chosen)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::one_run;
    use super::super::{render_panel_svg, ChartPanel};
    use super::*;

    #[test]
    fn several_runs_name_their_answers_and_knees_at_the_top_apart_not_in_the_legend() {
        // two runs with answers and knees at neighbouring levels: four labels in one spot
        let levels = [
            (2, 100.0, 50.0, 80.0),
            (4, 200.0, 60.0, 90.0),
            (8, 300.0, 90.0, 200.0),
        ];
        let mut spec = one_run(&levels, 10.0, 4);
        let mut b = spec.runs[0].clone();
        for (run, label, answer) in [(&mut spec.runs[0], "A", 4), (&mut b, "B", 8)] {
            run.label = label.into();
            run.answer = Some(answer);
            run.answer_name = "answer";
            run.bracket = [Some(answer), Some(answer * 2)];
        }
        b.knee = Some(8);
        spec.runs.push(b);
        let svg = render_panel_svg(&spec, ChartPanel::Throughput, (800, 450)).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        // (left, top, font size, text)
        let texts: Vec<(f64, f64, f64, String)> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| {
                let num = |a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
                let text: String = n
                    .descendants()
                    .filter(|c| c.is_text())
                    .filter_map(|c| c.text())
                    .collect();
                let text = text.trim().to_string();
                (num("x"), num("y"), num("font-size"), text)
            })
            .collect();
        let wanted = ["A answer c=4", "B answer c=8", "A knee c=4", "B knee c=8"];
        let mut boxes = Vec::new();
        for want in wanted {
            let at: Vec<_> = texts.iter().filter(|t| t.3 == want).collect();
            // once: on the plot, not again in the legend
            assert_eq!(at.len(), 1, "{want}: {at:?} in {texts:?}");
            let (x, y, size, _) = at[0];
            // the line box: Hack advances 0.602 em
            let w = want.len() as f64 * 0.602 * size;
            boxes.push((want, (*x, *y, x + w, y + size)));
        }
        for (i, (a, p)) in boxes.iter().enumerate() {
            for (b, q) in &boxes[i + 1..] {
                let overlap = p.0 < q.2 && q.0 < p.2 && p.1 < q.3 && q.1 < p.3;
                assert!(!overlap, "{a} {p:?} overlaps {b} {q:?}");
            }
        }
        assert!(!texts.iter().any(|t| t.3.contains("bracket")), "{texts:?}");
        // the series stay in the legend
        assert!(texts.iter().any(|t| t.3 == "A output tok/s"), "{texts:?}");
    }

    const ALL: LabelBox = (-10_000, -10_000, 10_000, 10_000);

    #[test]
    fn crowded_labels_move_or_drop_and_never_overlap() {
        // points a few pixels apart: the second goes below, the others around; of twelve on
        // one spot some find no place and are dropped; none of those placed overlap
        let p = |x, y| ((x, y), (40, 12));
        let mut pts = vec![p(100, 100), p(104, 101), p(106, 99)];
        pts.extend(std::iter::repeat_n(p(105, 100), 9));
        let out = place_labels(&pts, 6, &[], ALL);
        assert_eq!(out[0], Some((6, -15)));
        assert_eq!(out[1], Some((6, 3)));
        assert!(out[2].is_some() && out[3].is_some());
        assert_eq!(out[11], None);
        let boxes: Vec<LabelBox> = pts
            .iter()
            .zip(&out)
            .filter_map(|(((x, y), (w, h)), at)| {
                let (dx, dy) = (*at)?;
                Some((x + dx, y + dy, x + dx + w, y + dy + h))
            })
            .collect();
        for (i, a) in boxes.iter().enumerate() {
            assert!(!boxes[i + 1..].iter().any(|b| overlaps(a, b)), "{boxes:?}");
        }
        let far = place_labels(&[p(0, 0), p(500, 500)], 6, &[], ALL);
        assert_eq!(far, vec![Some((6, -15)), Some((6, -15))]);
        // a data marker above right of the point, and the plot's edge at the left: below right
        let dot = (105, 80, 115, 90);
        let out = place_labels(&[p(100, 100)], 6, &[dot], (60, 0, 1000, 1000));
        assert_eq!(out, vec![Some((6, 3))]);
        // nothing fits inside the bounds: dropped
        let out = place_labels(&[p(100, 100)], 6, &[], (90, 90, 110, 110));
        assert_eq!(out, vec![None]);
    }
}
