//! The campaign view: candidates and their states, the ranking so far, and the running
//! candidate's throughput and p99 latency against concurrency. Only reads the view.

use super::Theme;
use crate::campaign::campaign_file::CandidateState;
use crate::tui::campaign::CampaignView;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Color;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Borders, Chart, Dataset, GraphType, Paragraph};
use ratatui::Frame;

/// Draws the whole view.
pub fn render(frame: &mut Frame, v: &CampaignView) {
    let t = Theme::new(v.color);
    let n = v.candidates.len() as u16;
    // the full table is ~150 columns: a narrow terminal gets the values without their ranges
    let ranking_lines = if frame.area().width >= 152 {
        crate::campaign::ranking_text::render_ranking(&v.ranking)
    } else {
        crate::campaign::ranking_text::render_ranking_compact(&v.ranking)
    };
    let ranking_h = ranking_lines.lines().count() as u16 + 2;
    let [title, list, ranking, live, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(n + 2),
        Constraint::Length(ranking_h),
        Constraint::Min(6),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(format!("campaign {}", v.name), t.bold()),
            Span::styled(format!("   {}", v.keys), t.dim()),
        ])),
        title,
    );
    candidates(frame, list, v, &t);
    frame.render_widget(
        Paragraph::new(ranking_lines).block(
            Block::default()
                .borders(Borders::ALL)
                .title("ranking (cost per million output tokens at the SLA)"),
        ),
        ranking,
    );
    curves(frame, live, v, &t);
    if let Some(s) = &v.status {
        frame.render_widget(Paragraph::new(Span::styled(s.clone(), t.bold())), status);
    }
}

fn candidates(frame: &mut Frame, area: Rect, v: &CampaignView, t: &Theme) {
    let lines: Vec<Line> = v
        .candidates
        .iter()
        .map(|c| {
            let (state, style) = match c.state {
                CandidateState::Waiting => ("waiting".to_string(), t.dim()),
                CandidateState::Running => (
                    match c.run.running {
                        Some((i, conc, _)) => format!("running level {} (c={conc})", i + 1),
                        None => "running (pre-flight)".to_string(),
                    },
                    t.fg(Color::Cyan),
                ),
                CandidateState::Done => (
                    match v.answer_of(&c.label) {
                        Some(r) => match (r.numbers.answer, r.numbers.cost_per_million) {
                            (Some(a), Some(cost)) => {
                                format!("done: answer {:.0}, {:.3}/M tok", a.value, cost.value)
                            }
                            _ => "done: no answer".to_string(),
                        },
                        None => "done".to_string(),
                    },
                    t.fg(Color::Green),
                ),
                CandidateState::Interrupted => ("interrupted".to_string(), t.fg(Color::Yellow)),
                CandidateState::Failed => ("failed".to_string(), t.error()),
            };
            Line::from(vec![
                Span::styled(format!("{state:<34}"), style),
                Span::raw(format!(
                    "{}  ({}, {:.2}/h)",
                    c.label, c.endpoint, c.price_per_hour
                )),
            ])
        })
        .collect();
    frame.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title("candidates")),
        area,
    );
}

fn curves(frame: &mut Frame, area: Rect, v: &CampaignView, t: &Theme) {
    let Some(i) = v
        .running
        .or_else(|| v.candidates.iter().rposition(|c| !c.run.levels.is_empty()))
    else {
        frame.render_widget(
            Block::default()
                .borders(Borders::ALL)
                .title("live curves: no candidate has finished a level yet"),
            area,
        );
        return;
    };
    let c = &v.candidates[i];
    let mut tps: Vec<(f64, f64)> = c
        .run
        .levels
        .iter()
        .filter(|l| !l.partial)
        .map(|l| (l.concurrency as f64, l.sustained_tps()))
        .collect();
    tps.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut p99: Vec<(f64, f64)> = c
        .run
        .levels
        .iter()
        .filter(|l| !l.partial)
        .filter_map(|l| Some((l.concurrency as f64, l.e2e_p99_ms()?)))
        .collect();
    p99.sort_by(|a, b| a.0.total_cmp(&b.0));
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
    let x_max = tps.iter().map(|p| p.0).fold(1.0, f64::max);
    fn chart<'a>(
        data: &'a [(f64, f64)],
        title: String,
        color: Color,
        x_max: f64,
        t: &Theme,
    ) -> Chart<'a> {
        let y_max = data.iter().map(|p| p.1).fold(1.0, f64::max) * 1.1;
        Chart::new(vec![Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(t.fg(color))
            .data(data)])
        .block(Block::default().borders(Borders::ALL).title(title))
        .x_axis(
            Axis::default()
                .bounds([0.0, x_max])
                .labels(["0".to_string(), format!("{x_max:.0}")])
                .title("concurrency"),
        )
        .y_axis(
            Axis::default()
                .bounds([0.0, y_max])
                .labels(["0".to_string(), format!("{y_max:.0}")]),
        )
    }
    frame.render_widget(
        chart(
            &tps,
            format!("{}: output tok/s", c.label),
            Color::Cyan,
            x_max,
            t,
        ),
        left,
    );
    frame.render_widget(
        chart(
            &p99,
            format!("{}: e2e p99 ms", c.label),
            Color::Magenta,
            x_max,
            t,
        ),
        right,
    );
}
