//! The three charts against the run's load, concurrency or request rate (log-scaled x,
//! labelled with real levels): output throughput; e2e p50 and p99 with the band between them,
//! the SLA line (named with its metric, statistic and limit), the knee and the answer; TTFT.

use super::Theme;
use crate::plan::analysis::Axis as LoadAxis;
use crate::tui::series::RunView;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Color;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Borders, Chart, Dataset, GraphType};
use ratatui::Frame;

fn x_axis<'a>(view: &RunView, theme: &Theme) -> Axis<'a> {
    // ratatui spaces labels evenly, so show the ends and, when it fits, the middle level
    let labels: Vec<Span> = match view.x_ticks.len() {
        0 => vec![],
        1 => vec![Span::raw(view.x_ticks[0].1.clone())],
        n => {
            let mut v = vec![Span::raw(view.x_ticks[0].1.clone())];
            if n >= 3 {
                v.push(Span::raw(view.x_ticks[n / 2].1.clone()));
            }
            v.push(Span::raw(view.x_ticks[n - 1].1.clone()));
            v
        }
    };
    let axis = Axis::default()
        .bounds(view.x_bounds)
        .labels(labels)
        .style(theme.dim());
    match view.axis {
        LoadAxis::Concurrency => axis,
        LoadAxis::Rate => axis.title(Span::styled("req/s", theme.dim())),
    }
}

/// What the x axis measures, for the throughput chart's title.
fn load_name(view: &RunView) -> &'static str {
    match view.axis {
        LoadAxis::Concurrency => "concurrency",
        LoadAxis::Rate => "request rate",
    }
}

fn y_axis<'a>(max: f64, unit: &str, theme: &Theme) -> Axis<'a> {
    Axis::default()
        .bounds([0.0, max])
        .labels(vec![
            Span::raw("0"),
            Span::raw(format!("{}{unit}", compact(max / 2.0))),
            Span::raw(format!("{}{unit}", compact(max))),
        ])
        .style(theme.dim())
}

/// 1234 -> "1.2k", 0.5 -> "0.5".
pub fn compact(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if v >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn knee_line(view: &RunView, top: f64) -> Vec<(f64, f64)> {
    vertical(view.knee_x(), top)
}

fn vertical(x: Option<f64>, top: f64) -> Vec<(f64, f64)> {
    match x {
        Some(x) => (0..=20).map(|i| (x, top * i as f64 / 20.0)).collect(),
        None => vec![],
    }
}

/// The answer marker: a vertical line, in the legend as `answer 96` (or `answer 2.5 req/s`)
/// when `named`.
fn answer_set<'a>(
    view: &RunView,
    data: &'a [(f64, f64)],
    named: bool,
    theme: &Theme,
) -> Option<Dataset<'a>> {
    let a = view.answer.filter(|_| !data.is_empty())?;
    let set = Dataset::default()
        .marker(Marker::Braille)
        .style(theme.fg(Color::LightGreen))
        .data(data);
    Some(if named {
        set.name(format!("answer {}", view.axis.load(a)))
    } else {
        set
    })
}

/// Another run's curve, in its own colour and named by its run id.
fn overlay_set<'a>(label: &str, data: &'a [(f64, f64)], theme: &Theme) -> Dataset<'a> {
    Dataset::default()
        .name(format!("vs {label}"))
        .marker(Marker::Braille)
        .graph_type(GraphType::Line)
        .style(theme.fg(Color::LightBlue))
        .data(data)
}

fn block<'a>(title: String, focused: bool, theme: &Theme) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(theme.focused(focused))
        .title(title)
}

/// Output tokens/s against the load, with the knee.
pub fn render_throughput(
    frame: &mut Frame,
    area: Rect,
    view: &RunView,
    focused: bool,
    theme: &Theme,
) {
    let knee = knee_line(view, view.tps_max);
    let answer = vertical(view.answer_x(), view.tps_max);
    let mut data = vec![Dataset::default()
        .name("out tok/s")
        .marker(Marker::Braille)
        .graph_type(GraphType::Line)
        .style(theme.fg(Color::Green))
        .data(&view.throughput)];
    if let Some(o) = &view.overlay {
        data.push(overlay_set(&o.label, &o.throughput, theme));
    }
    data.extend(answer_set(view, &answer, true, theme));
    if !knee.is_empty() {
        data.push(
            Dataset::default()
                .name(format!("knee {}", view.axis.load(view.knee.unwrap_or(0))))
                .marker(Marker::Dot)
                .style(theme.fg(Color::Magenta))
                .data(&knee),
        );
    }
    let chart = Chart::new(data)
        .block(block(
            format!(" output tokens/s vs {} ", load_name(view)),
            focused,
            theme,
        ))
        .x_axis(x_axis(view, theme))
        .y_axis(y_axis(view.tps_max, "", theme))
        .legend_position(Some(ratatui::widgets::LegendPosition::TopLeft))
        .hidden_legend_constraints((Constraint::Ratio(2, 3), Constraint::Ratio(2, 3)));
    frame.render_widget(chart, area);
}

/// e2e latency p50 and p99 with the band between them, the SLA line and the knee.
pub fn render_latency(frame: &mut Frame, area: Rect, view: &RunView, focused: bool, theme: &Theme) {
    let band: Vec<(f64, f64)> = view
        .band
        .iter()
        .flat_map(|seg| {
            let [(x, lo), (_, hi)] = *seg;
            (0..=8).map(move |i| (x, lo + (hi - lo) * i as f64 / 8.0))
        })
        .collect();
    let sla: Vec<(f64, f64)> = view
        .sla_ms
        .map(|s| {
            (0..=40)
                .map(|i| {
                    let [a, b] = view.x_bounds;
                    (a + (b - a) * i as f64 / 40.0, s)
                })
                .collect()
        })
        .unwrap_or_default();
    let knee = knee_line(view, view.latency_max_ms);
    let answer = vertical(view.answer_x(), view.latency_max_ms);
    let mut data = vec![
        Dataset::default()
            .name("p50-p99")
            .marker(Marker::Dot)
            .style(theme.dim())
            .data(&band),
        Dataset::default()
            .name("p50")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.fg(Color::Cyan))
            .data(&view.e2e_p50),
        Dataset::default()
            .name("p99")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.fg(Color::Yellow))
            .data(&view.e2e_p99),
    ];
    if let Some(o) = &view.overlay {
        data.push(overlay_set(&o.label, &o.e2e_p99, theme));
    }
    // unnamed: the latency legend is full, the throughput chart's names the answer
    data.extend(answer_set(view, &answer, false, theme));
    if !sla.is_empty() {
        data.push(
            Dataset::default()
                .name(view.sla_label.clone().unwrap_or_else(|| "SLA".into()))
                .marker(Marker::Braille)
                .style(theme.fg(Color::Red))
                .data(&sla),
        );
    }
    if !knee.is_empty() {
        data.push(
            Dataset::default()
                .name("knee")
                .marker(Marker::Dot)
                .style(theme.fg(Color::Magenta))
                .data(&knee),
        );
    }
    let chart = Chart::new(data)
        .block(block(" e2e latency (ms) p50 / p99 ".into(), focused, theme))
        .x_axis(x_axis(view, theme))
        .y_axis(y_axis(view.latency_max_ms, "", theme))
        .legend_position(Some(ratatui::widgets::LegendPosition::TopLeft))
        .hidden_legend_constraints((Constraint::Ratio(2, 3), Constraint::Ratio(2, 3)));
    frame.render_widget(chart, area);
}

/// TTFT p50 and p95 against the load.
pub fn render_ttft(frame: &mut Frame, area: Rect, view: &RunView, focused: bool, theme: &Theme) {
    if view.ttft_p50.is_empty() && !view.points.is_empty() {
        frame.render_widget(
            ratatui::widgets::Paragraph::new(Line::from(Span::styled(
                "no TTFT: the workload does not stream",
                theme.dim(),
            )))
            .block(block(" TTFT (ms) ".into(), focused, theme)),
            area,
        );
        return;
    }
    let mut data = vec![
        Dataset::default()
            .name("p50")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.fg(Color::Cyan))
            .data(&view.ttft_p50),
        Dataset::default()
            .name("p95")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(theme.fg(Color::Yellow))
            .data(&view.ttft_p95),
    ];
    if let Some(o) = &view.overlay {
        data.push(overlay_set(&o.label, &o.ttft_p50, theme));
    }
    let chart = Chart::new(data)
        .block(block(" TTFT (ms) p50 / p95 ".into(), focused, theme))
        .x_axis(x_axis(view, theme))
        .y_axis(y_axis(view.ttft_max_ms, "", theme))
        .legend_position(Some(ratatui::widgets::LegendPosition::TopLeft))
        .hidden_legend_constraints((Constraint::Ratio(2, 3), Constraint::Ratio(2, 3)));
    frame.render_widget(chart, area);
}
