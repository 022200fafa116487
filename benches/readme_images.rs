//! The README's two images, remade: `assets/readme-chart.png` (the exported chart of a search
//! with a peak and a price) and `assets/readme-dashboard.png` (the dashboard's run screen
//! after that search, at 120x40).
//!
//! `cargo bench --bench readme_images` writes the two files and prints their paths; it needs
//! no network and no GPU, and runs in a few seconds.
//!
//! The inputs are scripted, so the images change only when the code that draws them does: a
//! search's run folder is written from scripted levels (every request of a level takes the
//! same time; `tests/dashboard/dashboard_daily.rs` builds the same search), judged and described by the
//! search planner as a run records them. The chart is the one `rightsize export RUN --png`
//! writes (the same [`export_run`] call, at its default size). The dashboard is the run opened
//! from its runs list (`Enter`), drawn on ratatui's `TestBackend` as the snapshot tests draw
//! it, and its cells painted into a PNG like a terminal screenshot: each cell a fixed box in
//! its background colour, its character in Hack (the font the charts embed), box-drawing and
//! block characters as lines and bars that meet their neighbours, braille as its dots.
//!
//! Why a bench target and not an example: `cargo test` (CI's test command) builds every
//! example, and never a bench, so this adds nothing to the test build; benches/ is where the
//! other scripts that drive the library live (harness = false, run by name); the bench
//! profile is optimised; and Cargo gives a bench a scratch folder inside `target/`
//! (`CARGO_TARGET_TMPDIR`), where the run folder is written and then removed, so the two
//! images are the only files written outside `target/`.

use std::path::Path;

use ab_glyph::{Font, FontRef, ScaleFont};
#[path = "../tests/support/scripted_support/mod.rs"]
mod scripted_support;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Color, Modifier};
use ratatui::Terminal;
use rightsize::report::export_run::{export_run, ExportRequest, DEFAULT_SIZE};
use rightsize::tui::app::{App, Screen};
use rightsize::tui::setup::SetupChoices;
use scripted_support::scripted_search;

/// The dashboard's terminal, in cells.
const COLS: u16 = 120;
const ROWS: u16 = 40;
/// One cell, in pixels, and the font's size in it (ab_glyph's scale: the height from the
/// font's descent to its ascent; Hack advances 0.517 of it).
const CELL_W: u32 = 11;
const CELL_H: u32 = 23;
const FONT_PX: f32 = 21.3;
/// The margin around the cells, in pixels, as a terminal window leaves one.
const PAD: u32 = 12;

fn main() {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme_images");
    let _ = std::fs::remove_dir_all(&scratch);
    let run = scripted_search(&scratch.join("runs"));

    let chart = assets.join("readme-chart.png");
    let req = ExportRequest {
        png: Some(chart.clone()),
        size: DEFAULT_SIZE,
        ..ExportRequest::default()
    };
    export_run(&run, &req).expect("the chart is exported");

    let dashboard = assets.join("readme-dashboard.png");
    let buffer = dashboard_buffer(&scratch.join("runs"), &run);
    std::fs::write(&dashboard, screenshot(&buffer)).expect("the dashboard image is written");

    std::fs::remove_dir_all(&scratch).expect("the scratch folder is removed");
    for p in [&chart, &dashboard] {
        println!("{}", p.display());
    }
}

/// The dashboard (in colour) with `run` opened from the runs list of `runs`, drawn on a
/// `COLS` x `ROWS` test terminal.
fn dashboard_buffer(runs: &Path, run: &Path) -> Buffer {
    let choices = SetupChoices {
        endpoints: vec!["sim".into()],
        sagemaker_endpoints: vec![],
        profiles: vec!["rag".into()],
        default_endpoint: "sim".into(),
        default_profile: "rag".into(),
        default_levels: vec![16],
        default_requests: 64,
    };
    let mut app = App::new(&choices, true);
    app.runs = rightsize::tui::history::load_runs(runs).expect("the runs are listed");
    app.runs_selected = app
        .runs
        .iter()
        .position(|r| r.path == run)
        .expect("the run is listed");
    app.screen = Screen::Runs;
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    assert_eq!(app.screen, Screen::Run, "{:?}", app.status);
    let mut term = Terminal::new(TestBackend::new(COLS, ROWS)).expect("a test terminal");
    term.draw(|f| rightsize::tui::render::render(f, &app))
        .expect("the dashboard draws");
    term.backend().buffer().clone()
}

/// The terminal's default background and foreground (`Color::Reset`), a dark theme.
const BG: [u8; 3] = [0x1e, 0x21, 0x27];
const FG: [u8; 3] = [0xd4, 0xd7, 0xdc];

/// A ratatui colour as RGB: the 16 named colours from a dark terminal palette, indexed ones
/// from xterm's 256, `Reset` as `default`.
fn rgb(c: Color, default: [u8; 3]) -> [u8; 3] {
    match c {
        Color::Reset => default,
        Color::Black => [0x28, 0x2c, 0x34],
        Color::Red => [0xe0, 0x6c, 0x75],
        Color::Green => [0x98, 0xc3, 0x79],
        Color::Yellow => [0xe5, 0xc0, 0x7b],
        Color::Blue => [0x61, 0xaf, 0xef],
        Color::Magenta => [0xc6, 0x78, 0xdd],
        Color::Cyan => [0x56, 0xb6, 0xc2],
        Color::Gray => [0xab, 0xb2, 0xbf],
        Color::DarkGray => [0x7f, 0x84, 0x8e],
        Color::LightRed => [0xff, 0x8a, 0x92],
        Color::LightGreen => [0xb5, 0xe0, 0x95],
        Color::LightYellow => [0xf5, 0xd6, 0x9a],
        Color::LightBlue => [0x8c, 0xc8, 0xff],
        Color::LightMagenta => [0xdb, 0x9e, 0xf0],
        Color::LightCyan => [0x8a, 0xd8, 0xe2],
        Color::White => [0xf0, 0xf2, 0xf5],
        Color::Rgb(r, g, b) => [r, g, b],
        Color::Indexed(i) => indexed(i),
    }
}

/// xterm's 256-colour palette: the 16 named colours, a 6x6x6 cube, 24 greys.
fn indexed(i: u8) -> [u8; 3] {
    const NAMED: [Color; 16] = [
        Color::Black,
        Color::Red,
        Color::Green,
        Color::Yellow,
        Color::Blue,
        Color::Magenta,
        Color::Cyan,
        Color::Gray,
        Color::DarkGray,
        Color::LightRed,
        Color::LightGreen,
        Color::LightYellow,
        Color::LightBlue,
        Color::LightMagenta,
        Color::LightCyan,
        Color::White,
    ];
    match i {
        0..=15 => rgb(NAMED[i as usize], FG),
        16..=231 => {
            let n = i - 16;
            let step = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            [step(n / 36), step(n / 6 % 6), step(n % 6)]
        }
        _ => {
            let v = 8 + 10 * (i - 232);
            [v, v, v]
        }
    }
}

/// An RGB image being painted.
struct Canvas {
    w: u32,
    h: u32,
    rgb: Vec<u8>,
}

impl Canvas {
    /// Mixes `c` into the pixel at (`x`, `y`) with coverage `a` (0 to 1).
    fn blend(&mut self, x: i64, y: i64, c: [u8; 3], a: f32) {
        if x < 0 || y < 0 || x >= i64::from(self.w) || y >= i64::from(self.h) || a <= 0.0 {
            return;
        }
        let a = a.min(1.0);
        let at = (y as usize * self.w as usize + x as usize) * 3;
        for (k, v) in c.iter().enumerate() {
            let old = f32::from(self.rgb[at + k]);
            self.rgb[at + k] = (old + (f32::from(*v) - old) * a).round() as u8;
        }
    }

    /// Fills the rectangle from (`x0`, `y0`) to (`x1`, `y1`), ends excluded, with coverage `a`.
    fn fill(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), c: [u8; 3], a: f32) {
        for y in y0..y1 {
            for x in x0..x1 {
                self.blend(x, y, c, a);
            }
        }
    }

    /// A filled disc centred at (`cx`, `cy`), its edge smoothed over one pixel.
    fn disc(&mut self, (cx, cy): (f32, f32), r: f32, c: [u8; 3]) {
        let (x0, x1) = ((cx - r - 1.0).floor() as i64, (cx + r + 1.0).ceil() as i64);
        let (y0, y1) = ((cy - r - 1.0).floor() as i64, (cy + r + 1.0).ceil() as i64);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let d = ((x as f32 + 0.5 - cx).powi(2) + (y as f32 + 0.5 - cy).powi(2)).sqrt();
                self.blend(x, y, c, (r + 0.5 - d).clamp(0.0, 1.0));
            }
        }
    }
}

/// The weights of a box-drawing character's four arms (up, down, left, right): 0 none,
/// 1 light, 2 heavy, 3 double. `None` for the ones drawn from the font.
fn arms(c: char) -> Option<[u8; 4]> {
    Some(match c {
        '─' | '╌' | '┄' | '┈' => [0, 0, 1, 1],
        '━' | '╍' | '┅' | '┉' => [0, 0, 2, 2],
        '│' | '╎' | '┆' | '┊' => [1, 1, 0, 0],
        '┃' | '╏' | '┇' | '┋' => [2, 2, 0, 0],
        '┌' | '╭' => [0, 1, 0, 1],
        '┐' | '╮' => [0, 1, 1, 0],
        '└' | '╰' => [1, 0, 0, 1],
        '┘' | '╯' => [1, 0, 1, 0],
        '├' => [1, 1, 0, 1],
        '┤' => [1, 1, 1, 0],
        '┬' => [0, 1, 1, 1],
        '┴' => [1, 0, 1, 1],
        '┼' => [1, 1, 1, 1],
        '┏' => [0, 2, 0, 2],
        '┓' => [0, 2, 2, 0],
        '┗' => [2, 0, 0, 2],
        '┛' => [2, 0, 2, 0],
        '┣' => [2, 2, 0, 2],
        '┫' => [2, 2, 2, 0],
        '┳' => [0, 2, 2, 2],
        '┻' => [2, 0, 2, 2],
        '╋' => [2, 2, 2, 2],
        '═' => [0, 0, 3, 3],
        '║' => [3, 3, 0, 0],
        '╔' => [0, 3, 0, 3],
        '╗' => [0, 3, 3, 0],
        '╚' => [3, 0, 0, 3],
        '╝' => [3, 0, 3, 0],
        '╠' => [3, 3, 0, 3],
        '╣' => [3, 3, 3, 0],
        '╦' => [0, 3, 3, 3],
        '╩' => [3, 0, 3, 3],
        '╬' => [3, 3, 3, 3],
        '╴' => [0, 0, 1, 0],
        '╵' => [1, 0, 0, 0],
        '╶' => [0, 0, 0, 1],
        '╷' => [0, 1, 0, 0],
        _ => return None,
    })
}

/// Draws a box-drawing character's arms in the cell at (`x`, `y`) (pixels), each from the
/// cell's centre to its edge, so lines meet the next cell's.
fn draw_arms(cv: &mut Canvas, (x, y): (i64, i64), a: [u8; 4], fg: [u8; 3]) {
    let (w, h) = (i64::from(CELL_W), i64::from(CELL_H));
    let (cx, cy) = (x + w / 2, y + h / 2);
    // the strokes of one arm, as offsets across it: light 1 px, heavy 3, double two of 1
    let strokes = |k: u8| -> &'static [(i64, i64)] {
        match k {
            1 => &[(0, 1)],
            2 => &[(-1, 2)],
            3 => &[(-2, -1), (2, 3)],
            _ => &[],
        }
    };
    // a vertical arm reaches past the centre by the horizontal one's half width, and the
    // other way round, so corners close
    let (over_v, over_h) = (
        if a[2].max(a[3]) >= 2 { 2 } else { 0 },
        if a[0].max(a[1]) >= 2 { 2 } else { 0 },
    );
    for &(o0, o1) in strokes(a[0]) {
        cv.fill((cx + o0, y), (cx + o1, cy + 1 + over_v), fg, 1.0);
    }
    for &(o0, o1) in strokes(a[1]) {
        cv.fill((cx + o0, cy - over_v), (cx + o1, y + h), fg, 1.0);
    }
    for &(o0, o1) in strokes(a[2]) {
        cv.fill((x, cy + o0), (cx + 1 + over_h, cy + o1), fg, 1.0);
    }
    for &(o0, o1) in strokes(a[3]) {
        cv.fill((cx - over_h, cy + o0), (x + w, cy + o1), fg, 1.0);
    }
}

/// Draws a block element (U+2580 to U+259F) filling its part of the cell; false for the
/// ones the function does not know.
fn draw_block(cv: &mut Canvas, (x, y): (i64, i64), c: char, fg: [u8; 3]) -> bool {
    let (w, h) = (i64::from(CELL_W), i64::from(CELL_H));
    let eighth_h = |n: i64| (h * n + 4) / 8;
    let eighth_w = |n: i64| (w * n + 4) / 8;
    match c {
        // lower eighths to the full block
        '▁'..='█' => {
            let n = c as i64 - 0x2580;
            cv.fill((x, y + h - eighth_h(n)), (x + w, y + h), fg, 1.0);
        }
        '▀' => cv.fill((x, y), (x + w, y + h / 2), fg, 1.0),
        '▔' => cv.fill((x, y), (x + w, y + eighth_h(1)), fg, 1.0),
        // left seven eighths to the left eighth
        '▉'..='▏' => {
            let n = 0x2590 - c as i64;
            cv.fill((x, y), (x + eighth_w(n), y + h), fg, 1.0);
        }
        '▐' => cv.fill((x + w / 2, y), (x + w, y + h), fg, 1.0),
        '▕' => cv.fill((x + w - eighth_w(1), y), (x + w, y + h), fg, 1.0),
        '░' | '▒' | '▓' => {
            let a = (c as u32 - 0x2590) as f32 * 0.25;
            cv.fill((x, y), (x + w, y + h), fg, a);
        }
        // quadrants: bits upper left, upper right, lower left, lower right
        '▖'..='▟' => {
            const Q: [u8; 10] = [
                0b0010, 0b0001, 0b1000, 0b1011, 0b1001, 0b1110, 0b1101, 0b0100, 0b0110, 0b0111,
            ];
            let q = Q[(c as u32 - 0x2596) as usize];
            let (mx, my) = (x + w / 2, y + h / 2);
            for (bit, (x0, y0, x1, y1)) in [
                (0b1000, (x, y, mx, my)),
                (0b0100, (mx, y, x + w, my)),
                (0b0010, (x, my, mx, y + h)),
                (0b0001, (mx, my, x + w, y + h)),
            ] {
                if q & bit != 0 {
                    cv.fill((x0, y0), (x1, y1), fg, 1.0);
                }
            }
        }
        _ => return false,
    }
    true
}

/// Draws a braille pattern (U+2800 plus its bits) as its dots in a 2x4 grid.
fn draw_braille(cv: &mut Canvas, (x, y): (i64, i64), bits: u32, fg: [u8; 3]) {
    // dots 1-3 down the left column, 4-6 down the right, then 7 and 8 under them
    const DOTS: [(u32, u32); 8] = [
        (0, 0),
        (0, 1),
        (0, 2),
        (1, 0),
        (1, 1),
        (1, 2),
        (0, 3),
        (1, 3),
    ];
    let (w, h) = (CELL_W as f32, CELL_H as f32);
    let r = (w / 4.0).min(h / 8.0) * 0.75;
    for (bit, (col, row)) in DOTS.iter().enumerate() {
        if bits & (1 << bit) != 0 {
            let cx = x as f32 + w * (1 + 2 * col) as f32 / 4.0;
            let cy = y as f32 + h * (1 + 2 * row) as f32 / 8.0;
            cv.disc((cx, cy), r, fg);
        }
    }
}

/// The cells of `buffer` painted as a terminal shows them, as PNG bytes.
fn screenshot(buffer: &Buffer) -> Vec<u8> {
    let font = FontRef::try_from_slice(epaint_default_fonts::HACK_REGULAR).expect("Hack loads");
    let scaled = font.as_scaled(FONT_PX);
    // the text's line centred in the cell
    let baseline = (CELL_H as f32 - (scaled.ascent() - scaled.descent())) / 2.0 + scaled.ascent();
    let area = buffer.area;
    let (w, h) = (
        u32::from(area.width) * CELL_W + 2 * PAD,
        u32::from(area.height) * CELL_H + 2 * PAD,
    );
    let mut cv = Canvas {
        w,
        h,
        rgb: BG.repeat(w as usize * h as usize),
    };
    for row in 0..area.height {
        for col in 0..area.width {
            let cell = &buffer[(area.x + col, area.y + row)];
            let (mut fg, mut bg) = (rgb(cell.fg, FG), rgb(cell.bg, BG));
            if cell.modifier.contains(Modifier::REVERSED) {
                std::mem::swap(&mut fg, &mut bg);
            }
            if cell.modifier.contains(Modifier::DIM) {
                fg = [0, 1, 2].map(|k| ((u16::from(fg[k]) + u16::from(bg[k])) / 2) as u8);
            }
            let (x, y) = (
                i64::from(PAD + u32::from(col) * CELL_W),
                i64::from(PAD + u32::from(row) * CELL_H),
            );
            cv.fill(
                (x, y),
                (x + i64::from(CELL_W), y + i64::from(CELL_H)),
                bg,
                1.0,
            );
            let Some(c) = cell.symbol().chars().next() else {
                continue;
            };
            if c == ' ' {
                continue;
            }
            if let Some(a) = arms(c) {
                draw_arms(&mut cv, (x, y), a, fg);
            } else if ('\u{2800}'..='\u{28ff}').contains(&c) {
                draw_braille(&mut cv, (x, y), c as u32 - 0x2800, fg);
            } else if !draw_block(&mut cv, (x, y), c, fg) {
                let bold = cell.modifier.contains(Modifier::BOLD);
                draw_glyph(&mut cv, &font, (x, y), baseline, c, fg, bold);
            }
        }
    }
    encode(&cv)
}

/// Draws `c` in Hack in the cell at (`x`, `y`), centred on the cell's width; bold as the
/// glyph drawn twice, a pixel apart (the embedded font has no bold face).
fn draw_glyph(
    cv: &mut Canvas,
    font: &FontRef<'_>,
    (x, y): (i64, i64),
    baseline: f32,
    c: char,
    fg: [u8; 3],
    bold: bool,
) {
    let scaled = font.as_scaled(FONT_PX);
    let id = font.glyph_id(c);
    let pen = (CELL_W as f32 - scaled.h_advance(id)) / 2.0;
    let glyph = id.with_scale_and_position(FONT_PX, ab_glyph::point(pen, baseline));
    let Some(outline) = font.outline_glyph(glyph) else {
        return;
    };
    let b = outline.px_bounds();
    let (x0, y0) = (x + b.min.x as i64, y + b.min.y as i64);
    let mut cover = |dx: i64| {
        outline.draw(|gx, gy, a| cv.blend(x0 + dx + i64::from(gx), y0 + i64::from(gy), fg, a));
    };
    cover(0);
    if bold {
        cover(1);
    }
}

/// The canvas as an 8-bit RGB PNG.
fn encode(cv: &Canvas) -> Vec<u8> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, cv.w, cv.h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::High);
    let mut writer = enc.write_header().expect("a PNG header");
    writer.write_image_data(&cv.rgb).expect("the PNG's pixels");
    writer.finish().expect("the PNG ends");
    out
}
