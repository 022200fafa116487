//! What the charts say about the answer: the answer marker with its bracket shaded, the knee,
//! SLA lines labelled with metric and statistic, error bars of each level's SLA statistic (its
//! 95 % interval), and point labels placed so that none overlaps another.

use plotters::prelude::*;

use super::legend::Legend;
use super::parts::*;
use super::{ChartSpec, SlaLine, SlaMetric, FONT};

/// The vertical markers, drawn under the series: each run's answer as a solid line labelled
/// `answer c=N` at the top, over its bracket (max passing to first failing) shaded; each run's
/// knee as a dashed line, `knee c=N` in the legend. With several runs the labels at the top
/// name them (`A answer c=N`, `A knee c=N`, stacked where they would overlap) and the legend
/// leaves them and the brackets out ([`ChartSpec::lists_markers`]).
pub(super) fn markers<DB: DrawingBackend>(
    chart: &mut ConcChart<DB>,
    spec: &ChartSpec,
    y_max: f64,
    legend: &mut Legend,
    sz: &Sizes,
) -> Fallible<DB> {
    markers_listed(chart, spec, y_max, spec.lists_markers(), legend, sz)
}

/// The vertical markers as [`markers`] draws them, listed in the legend only when `listed`
/// (else named at the top of their lines): a panel whose legend is full of its own series
/// names them there.
pub(super) fn markers_listed<DB: DrawingBackend>(
    chart: &mut ConcChart<DB>,
    spec: &ChartSpec,
    y_max: f64,
    listed: bool,
    legend: &mut Legend,
    sz: &Sizes,
) -> Fallible<DB> {
    for run in &spec.runs {
        if let [Some(lo), Some(hi)] = run.bracket {
            let (x0, x1) = (x_of(spec.axis, lo), x_of(spec.axis, hi));
            let fill = ANSWER_COLOR.mix(0.12);
            let anno = chart.draw_series(std::iter::once(Rectangle::new(
                [(x0, 0.0), (x1, y_max)],
                fill.filled(),
            )))?;
            if listed {
                let (lo, hi) = (load_label(spec.axis, lo), load_label(spec.axis, hi));
                anno.label(legend.entry(name(run, &format!("bracket {lo} to {hi}"))))
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 20, y + 5)], fill.filled())
                    });
            }
        }
        let Some(a) = run.answer else { continue };
        let x = x_of(spec.axis, a);
        let style = ANSWER_COLOR.stroke_width(sz.stroke);
        let text = name(
            run,
            &format!("{} {}", run.answer_name, load_label(spec.axis, a)),
        );
        legend.mark(chart, [(x, 0.0), (x, y_max)]);
        let anno = chart.draw_series(LineSeries::new(vec![(x, 0.0), (x, y_max)], style))?;
        if listed {
            anno.label(legend.entry(text.clone()))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        }
        top_label(chart, (x, y_max), text, ANSWER_COLOR, legend, sz)?;
    }
    for run in &spec.runs {
        let Some(k) = run.knee else { continue };
        let style = KNEE_COLOR.stroke_width(sz.stroke);
        let x = x_of(spec.axis, k);
        legend.mark(chart, [(x, 0.0), (x, y_max)]);
        let label = name(run, &format!("knee {}", load_label(spec.axis, k)));
        let line = DashedLineSeries::new(vec![(x, 0.0), (x, y_max)], 8, 6, style);
        let anno = chart.draw_series(line)?;
        if listed {
            anno.label(legend.entry(label))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        } else {
            top_label(chart, (x, y_max), label, KNEE_COLOR, legend, sz)?;
        }
    }
    Ok(())
}

/// `text` at the top of a vertical marker at `(x, top)`, in `color`, where
/// [`Legend::top_label`] finds room.
fn top_label<DB: DrawingBackend>(
    chart: &mut ConcChart<DB>,
    (x, top): (f64, f64),
    text: String,
    color: RGBColor,
    legend: &mut Legend,
    sz: &Sizes,
) -> Fallible<DB> {
    let label_style = TextStyle::from((FONT, sz.small).into_font()).color(&color);
    let area = chart.plotting_area();
    let right_end = area.get_pixel_range().0.end;
    let at = area.map_coordinate(&(x, top));
    let offset = legend.top_label(at, line_box(&text, sz.small), right_end);
    chart.draw_series(std::iter::once(
        EmptyElement::at((x, top)) + Text::new(text, offset, label_style),
    ))?;
    Ok(())
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
    legend.mark(chart, ends);
    chart
        .draw_series(DashedLineSeries::new(ends.to_vec(), 12, 6, style))?
        .label(legend.entry(line.label.clone()))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    Ok(())
}

/// Error bars: at each level, the 95 % interval of each `metric` SLA's statistic, with a
/// small diamond at the observed value. One legend entry per run.
pub(super) fn error_bars<DB: DrawingBackend>(
    chart: &mut ConcChart<DB>,
    spec: &ChartSpec,
    metric: SlaMetric,
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
        let cap = sz.dot + 2;
        for &(x, lo, _, hi) in &bars {
            legend.mark(chart, [(x, lo), (x, hi)]);
        }
        chart
            .draw_series(
                bars.iter()
                    .map(|&(x, lo, _, hi)| PathElement::new(vec![(x, lo), (x, hi)], style)),
            )?
            .label(legend.entry(name(
                run,
                &format!("{} {stat} 95 % interval", metric.label()),
            )))
            .legend(move |(x, y)| PathElement::new(vec![(x + 10, y - 6), (x + 10, y + 6)], style));
        for &(x, lo, v, hi) in &bars {
            let caps = [lo, hi].map(|y| {
                EmptyElement::at((x, y)) + PathElement::new(vec![(-cap, 0), (cap, 0)], style)
            });
            chart.draw_series(caps)?;
            let d = sz.dot;
            chart.draw_series(std::iter::once(
                EmptyElement::at((x, v))
                    + Polygon::new(vec![(0, -d), (d, 0), (0, d), (-d, 0)], color.filled()),
            ))?;
        }
    }
    Ok(())
}

/// A label's box in pixels: left, top, right, bottom.
type LabelBox = (i32, i32, i32, i32);

/// A label to place: its point's pixel position and the text's (width, height) in pixels.
pub(super) type LabelAt = ((i32, i32), (i32, i32));

fn overlaps(a: &LabelBox, b: &LabelBox) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Where each label goes, as a pixel offset from its point, or `None` to drop it: tried
/// above right, below right, above left, below left of the point, the first place that
/// overlaps no label placed before wins. `points` are pixel positions with the text's size.
pub(super) fn place_labels(points: &[LabelAt], gap: i32) -> Vec<Option<(i32, i32)>> {
    let mut placed: Vec<LabelBox> = Vec::new();
    points
        .iter()
        .map(|&((px, py), (w, h))| {
            let tries = [
                (gap, -h - gap / 2),
                (gap, gap / 2),
                (-w - gap, -h - gap / 2),
                (-w - gap, gap / 2),
            ];
            let chosen = tries.into_iter().find(|&(dx, dy)| {
                let b = (px + dx, py + dy, px + dx + w, py + dy + h);
                !placed.iter().any(|p| overlaps(p, &b))
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

    #[test]
    fn crowded_labels_move_or_drop_and_never_overlap() {
        // three points a few pixels apart: the second goes below, the third to the left,
        // a fifth on the same spot finds no place and is dropped
        let p = |x, y| ((x, y), (40, 12));
        let out = place_labels(
            &[
                p(100, 100),
                p(104, 101),
                p(106, 99),
                p(105, 100),
                p(105, 100),
            ],
            6,
        );
        assert_eq!(out[0], Some((6, -15)));
        assert_eq!(out[1], Some((6, 3)));
        assert!(out[2].is_some() && out[3].is_some());
        assert_eq!(out[4], None);
        let far = place_labels(&[p(0, 0), p(500, 500)], 6);
        assert_eq!(far, vec![Some((6, -15)), Some((6, -15))]);
    }
}
