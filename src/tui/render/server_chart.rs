//! The run screen's server panel: what the server's own metrics said at each finished level,
//! against the load: the requests it ran (its batch) and kept waiting (its queue) on the
//! requests axis, its KV-cache use and, when recorded, its GPUs' power drawn on the same axis
//! with their scales in the legend (`KV 0-100%`: the axis' top is 100 %), and the knee.

use super::charts::{block, knee_line, render_chart, Set};
use super::Theme;
use crate::report::chart::server_point::fmt_watts;
use crate::tui::series::RunView;
use crate::tui::server_series::ServerView;
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::symbols::Marker;
use ratatui::Frame;

/// Draws the server panel of `server` (the levels' recorded figures) on `view`'s load axis.
pub fn render_server(
    frame: &mut Frame,
    area: Rect,
    view: &RunView,
    server: &ServerView,
    focused: bool,
    theme: &Theme,
) {
    let knee = knee_line(view, server.y_max);
    let power_name = server
        .power_top_w
        .map(|top| format!("GPU 0-{}", fmt_watts(top).replace(' ', "")));
    let mut sets = vec![
        Set::line("running", &server.running, theme.fg(Color::Cyan)),
        Set::line("waiting", &server.waiting, theme.fg(Color::Yellow)),
    ];
    if !server.kv_use.is_empty() {
        sets.push(Set::line(
            "KV 0-100%",
            &server.kv_use,
            theme.fg(Color::Green),
        ));
    }
    if let Some(name) = power_name.filter(|_| !server.gpu_power.is_empty()) {
        sets.push(Set::line(
            name,
            &server.gpu_power,
            theme.fg(Color::LightRed),
        ));
    }
    if !knee.is_empty() {
        // unnamed: the other charts' legends name it
        sets.push(Set::points(
            None,
            &knee,
            Marker::Dot,
            theme.fg(Color::Magenta),
        ));
    }
    let mut title = String::from(" server: running / waiting");
    if !server.kv_use.is_empty() {
        title += ", KV %";
    }
    if !server.gpu_power.is_empty() {
        title += ", GPU W";
    }
    title.push(' ');
    let block = block(title, focused, theme);
    render_chart(frame, area, view, block, server.y_max, &sets, theme);
}
