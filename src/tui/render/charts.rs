//! The three charts against the run's load, concurrency or request rate (log-scaled x,
//! labelled with real levels): output throughput; e2e p50 and p99 with the band between them,
//! the SLA line (named with its metric, statistic and limit), the knee and the answer; TTFT.

use super::legend::Plot;
use super::Theme;
use crate::plan::analysis::Axis as LoadAxis;
use crate::tui::series::RunView;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Borders, Chart, Dataset, GraphType};
use ratatui::Frame;

fn x_axis<'a>(view: &RunView, theme: &Theme) -> Axis<'a> {
    // the view's ticks are the loads at the ends and the middle of the log scale, where
    // ratatui puts three labels
    let labels: Vec<Span> = view
        .x_ticks
        .iter()
        .map(|(_, t)| Span::raw(t.clone()))
        .collect();
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

fn y_labels(max: f64) -> [String; 3] {
    ["0".into(), compact(max / 2.0), compact(max)]
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

pub(super) fn knee_line(view: &RunView, top: f64) -> Vec<(f64, f64)> {
    vertical(view.knee_x(), top)
}

fn vertical(x: Option<f64>, top: f64) -> Vec<(f64, f64)> {
    match x {
        Some(x) => (0..=20).map(|i| (x, top * i as f64 / 20.0)).collect(),
        None => vec![],
    }
}

/// One curve or marker of a chart: the legend's name (none keeps it out of the legend), the
/// points, how they are drawn.
pub(super) struct Set<'a> {
    name: Option<String>,
    data: &'a [(f64, f64)],
    marker: Marker,
    line: bool,
    style: Style,
}

impl<'a> Set<'a> {
    /// A curve joining the points.
    pub(super) fn line(name: impl Into<String>, data: &'a [(f64, f64)], style: Style) -> Set<'a> {
        Set {
            name: Some(name.into()),
            data,
            marker: Marker::Braille,
            line: true,
            style,
        }
    }

    /// Points alone (a band, a vertical or horizontal marker drawn as dense points).
    pub(super) fn points(
        name: Option<String>,
        data: &'a [(f64, f64)],
        marker: Marker,
        style: Style,
    ) -> Set<'a> {
        Set {
            name,
            data,
            marker,
            line: false,
            style,
        }
    }
}

/// The answer marker: a vertical line, in the legend as `answer 96` (or `answer 2.5 req/s`)
/// when `named`.
fn answer_set<'a>(
    view: &RunView,
    data: &'a [(f64, f64)],
    named: bool,
    theme: &Theme,
) -> Option<Set<'a>> {
    let a = view.answer.filter(|_| !data.is_empty())?;
    let name = named.then(|| format!("answer {}", view.axis.load(a)));
    Some(Set::points(
        name,
        data,
        Marker::Braille,
        theme.fg(Color::LightGreen),
    ))
}

/// Another run's curve, in its own colour and named by its run id.
fn overlay_set<'a>(label: &str, data: &'a [(f64, f64)], theme: &Theme) -> Set<'a> {
    Set::line(format!("vs {label}"), data, theme.fg(Color::LightBlue))
}

/// The chart of `sets` against the run's load and `[0, y_max]`, its legend in the corner where
/// it hides the least of them.
pub(super) fn render_chart(
    frame: &mut Frame,
    area: Rect,
    view: &RunView,
    block: Block,
    y_max: f64,
    sets: &[Set],
    theme: &Theme,
) {
    let labels = y_labels(y_max);
    let corner = Plot {
        area,
        x_bounds: view.x_bounds,
        y_bounds: [0.0, y_max],
        y_label_width: labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as u16,
        sets: sets.iter().map(|s| (s.name.as_deref(), s.data)).collect(),
    }
    .legend_corner();
    let data = sets
        .iter()
        .map(|s| {
            let d = Dataset::default()
                .marker(s.marker)
                .style(s.style)
                .data(s.data);
            let d = if s.line {
                d.graph_type(GraphType::Line)
            } else {
                d
            };
            match &s.name {
                Some(n) => d.name(n.clone()),
                None => d,
            }
        })
        .collect();
    let y_axis = Axis::default()
        .bounds([0.0, y_max])
        .labels(labels.map(Span::raw))
        .style(theme.dim());
    let chart = Chart::new(data)
        .block(block)
        .x_axis(x_axis(view, theme))
        .y_axis(y_axis)
        .legend_position(Some(corner))
        .hidden_legend_constraints((Constraint::Ratio(2, 3), Constraint::Ratio(2, 3)));
    frame.render_widget(chart, area);
}

pub(super) fn block<'a>(title: String, focused: bool, theme: &Theme) -> Block<'a> {
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
    let mut sets = vec![Set::line(
        "output tok/s",
        &view.throughput,
        theme.fg(Color::Green),
    )];
    if let Some(o) = &view.overlay {
        sets.push(overlay_set(&o.label, &o.throughput, theme));
    }
    sets.extend(answer_set(view, &answer, true, theme));
    if !knee.is_empty() {
        sets.push(Set::points(
            Some(format!("knee {}", view.axis.load(view.knee.unwrap_or(0)))),
            &knee,
            Marker::Dot,
            theme.fg(Color::Magenta),
        ));
    }
    let title = format!(" output tok/s vs {} ", load_name(view));
    let block = block(title, focused, theme);
    render_chart(frame, area, view, block, view.tps_max, &sets, theme);
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
    let mut sets = vec![
        Set::points(Some("p50-p99".into()), &band, Marker::Dot, theme.dim()),
        Set::line("p50", &view.e2e_p50, theme.fg(Color::Cyan)),
        Set::line("p99", &view.e2e_p99, theme.fg(Color::Yellow)),
    ];
    if let Some(o) = &view.overlay {
        sets.push(overlay_set(&o.label, &o.e2e_p99, theme));
    }
    // unnamed: the latency legend is full, the throughput chart's names the answer
    sets.extend(answer_set(view, &answer, false, theme));
    if !sla.is_empty() {
        let name = view.sla_label.clone().unwrap_or_else(|| "SLA".into());
        sets.push(Set::points(
            Some(name),
            &sla,
            Marker::Braille,
            theme.fg(Color::Red),
        ));
    }
    if !knee.is_empty() {
        sets.push(Set::points(
            Some("knee".into()),
            &knee,
            Marker::Dot,
            theme.fg(Color::Magenta),
        ));
    }
    let block = block(" e2e latency (ms) p50 / p99 ".into(), focused, theme);
    render_chart(frame, area, view, block, view.latency_max_ms, &sets, theme);
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
    let mut sets = vec![
        Set::line("p50", &view.ttft_p50, theme.fg(Color::Cyan)),
        Set::line("p95", &view.ttft_p95, theme.fg(Color::Yellow)),
    ];
    if let Some(o) = &view.overlay {
        sets.push(overlay_set(&o.label, &o.ttft_p50, theme));
    }
    let block = block(" TTFT (ms) p50 / p95 ".into(), focused, theme);
    render_chart(frame, area, view, block, view.ttft_max_ms, &sets, theme);
}
