//! What the charts say about the answer: the answer marker with its bracket shaded, SLA
//! lines labelled with metric and statistic, error bars of each level's SLA statistic (its
//! 95 % interval), and point labels placed so that none overlaps another.

use plotters::prelude::*;

use super::legend::Legend;
use super::parts::*;
use super::{ChartSpec, SlaLine, SlaMetric, FONT};

/// Each run's answer as a solid vertical line labelled `answer c=N` at the top, over its
/// bracket (max passing to first failing) shaded. Drawn under the series.
pub(super) fn answers<DB: DrawingBackend>(
    chart: &mut ConcChart<DB>,
    spec: &ChartSpec,
    y_max: f64,
    legend: &mut Legend,
    sz: &Sizes,
) -> Fallible<DB> {
    for run in &spec.runs {
        if let [Some(lo), Some(hi)] = run.bracket {
            let (x0, x1) = (x_of(spec.axis, lo), x_of(spec.axis, hi));
            let fill = ANSWER_COLOR.mix(0.12);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x0, 0.0), (x1, y_max)],
                    fill.filled(),
                )))?
                .label(legend.entry(name(
                    run,
                    &format!(
                        "bracket {} to {}",
                        load_label(spec.axis, lo),
                        load_label(spec.axis, hi)
                    ),
                )))
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], fill.filled()));
        }
        let Some(a) = run.answer else { continue };
        let x = x_of(spec.axis, a);
        let style = ANSWER_COLOR.stroke_width(sz.stroke);
        let text = name(
            run,
            &format!("{} {}", run.answer_name, load_label(spec.axis, a)),
        );
        legend.mark(chart, [(x, 0.0), (x, y_max)]);
        chart
            .draw_series(LineSeries::new(vec![(x, 0.0), (x, y_max)], style))?
            .label(legend.entry(text.clone()))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        let label_style = TextStyle::from((FONT, sz.small).into_font()).color(&ANSWER_COLOR);
        // right of the line, or left of it where the plot ends too soon for the text
        let area = chart.plotting_area();
        let (w, h) = area.estimate_text_size(&text, &label_style)?;
        let right_end = area.get_pixel_range().0.end;
        let (px, py) = area.map_coordinate(&(x, y_max));
        let dx = if px + 4 + w as i32 > right_end {
            -(w as i32) - 4
        } else {
            4
        };
        legend.mark_box((px + dx, py + 2, px + dx + w as i32, py + 2 + h as i32));
        chart.draw_series(std::iter::once(
            EmptyElement::at((x, y_max)) + Text::new(text, (dx, 2), label_style),
        ))?;
    }
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
    use super::*;

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
