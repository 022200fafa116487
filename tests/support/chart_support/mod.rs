//! The layout check of an exported chart, read from its SVG (the PNG is drawn by the same
//! code): every text element's box (Hack advances 0.602 em a character, a line is one em; the
//! anchor and the baseline shift place it, a rotation turns it), every legend frame (a
//! stroked rect with no fill) and every data marker (circles, and the small polygons of the
//! square, triangle and diamond markers). It finds two texts that overlap, a text or legend
//! frame over a marker, and a measured level on a load axis with neither its tick label nor
//! a tick mark at its place.
#![allow(dead_code)]

/// Left, top, right, bottom (pixels).
pub type Rect = (f64, f64, f64, f64);

#[derive(Debug, Clone)]
pub struct TextBox {
    pub text: String,
    pub rect: Rect,
    pub size: f64,
    pub anchor: String,
    pub rotated: bool,
    /// The `x`, `y` attributes.
    pub at: (f64, f64),
}

/// What the SVG holds, as the check needs it.
#[derive(Debug, Default)]
pub struct Layout {
    pub texts: Vec<TextBox>,
    /// Data markers' boxes.
    pub markers: Vec<Rect>,
    /// Legend frames.
    pub frames: Vec<Rect>,
    /// Two-point polylines: ((x0, y0), (x1, y1)).
    pub segments: Vec<((f64, f64), (f64, f64))>,
}

fn num(n: &roxmltree::Node, a: &str) -> f64 {
    n.attribute(a).and_then(|v| v.parse().ok()).unwrap_or(0.0)
}

fn points(n: &roxmltree::Node) -> Vec<(f64, f64)> {
    n.attribute("points")
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|p| {
            let (x, y) = p.split_once(',')?;
            Some((x.parse().ok()?, y.parse().ok()?))
        })
        .collect()
}

/// Reads the SVG.
pub fn parse(svg: &str) -> Layout {
    let doc = roxmltree::Document::parse(svg).expect("an SVG document");
    let mut out = Layout::default();
    for n in doc.descendants() {
        match n.tag_name().name() {
            "text" => {
                let text: String = n
                    .descendants()
                    .filter(|c| c.is_text())
                    .filter_map(|c| c.text())
                    .collect();
                let text = text.trim().to_string();
                if text.is_empty() {
                    continue;
                }
                let size = num(&n, "font-size");
                let w = text.chars().count() as f64 * 0.602 * size;
                let (x, y) = (num(&n, "x"), num(&n, "y"));
                let anchor = n.attribute("text-anchor").unwrap_or("start").to_string();
                let dx0 = match anchor.as_str() {
                    "middle" => -w / 2.0,
                    "end" => -w,
                    _ => 0.0,
                };
                let dy0 = match n.attribute("dy") {
                    Some("0.5ex") => -size / 2.0,
                    Some("-0.5ex") => -size,
                    _ => 0.0,
                };
                let local = [(dx0, dy0), (dx0 + w, dy0 + size)];
                let transform = n.attribute("transform").unwrap_or("");
                // rotate(A, x, y): a 270 turns a local (dx, dy) to (dy, -dx), a 90 to (-dy, dx)
                let turn = |(dx, dy): (f64, f64)| -> (f64, f64) {
                    if transform.starts_with("rotate(270") {
                        (dy, -dx)
                    } else if transform.starts_with("rotate(90") {
                        (-dy, dx)
                    } else {
                        (dx, dy)
                    }
                };
                let (a, b) = (turn(local[0]), turn(local[1]));
                out.texts.push(TextBox {
                    text,
                    rect: (
                        x + a.0.min(b.0),
                        y + a.1.min(b.1),
                        x + a.0.max(b.0),
                        y + a.1.max(b.1),
                    ),
                    size,
                    anchor,
                    rotated: !transform.is_empty(),
                    at: (x, y),
                });
            }
            "circle" => {
                let (cx, cy, r) = (num(&n, "cx"), num(&n, "cy"), num(&n, "r"));
                // a data dot (the Pareto chart's frontier rings are larger and hollow)
                if r <= 8.0 {
                    out.markers.push((cx - r, cy - r, cx + r, cy + r));
                }
            }
            "polygon" => {
                let p = points(&n);
                let (l, t, r, b) = bbox(&p);
                if !p.is_empty() && p.len() <= 4 && r - l <= 20.0 && b - t <= 20.0 {
                    out.markers.push((l, t, r, b));
                }
            }
            "rect"
                if n.attribute("fill") == Some("none")
                    && n.attribute("stroke") == Some("#000000") =>
            {
                let (x, y) = (num(&n, "x"), num(&n, "y"));
                out.frames
                    .push((x, y, x + num(&n, "width"), y + num(&n, "height")));
            }
            "polyline" | "line" => {
                let p = if n.has_tag_name("line") {
                    vec![
                        (num(&n, "x1"), num(&n, "y1")),
                        (num(&n, "x2"), num(&n, "y2")),
                    ]
                } else {
                    points(&n)
                };
                if p.len() == 2 {
                    out.segments.push((p[0], p[1]));
                }
            }
            _ => {}
        }
    }
    out
}

fn bbox(p: &[(f64, f64)]) -> Rect {
    p.iter().fold(
        (
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ),
        |(l, t, r, b), &(x, y)| (l.min(x), t.min(y), r.max(x), b.max(y)),
    )
}

/// Whether two boxes share more than `slack` pixels each way.
fn overlap(a: &Rect, b: &Rect, slack: f64) -> bool {
    a.0 + slack < b.2 && b.0 + slack < a.2 && a.1 + slack < b.3 && b.1 + slack < a.3
}

/// Every layout problem of the chart `svg` whose load axes carry `levels`.
pub fn problems(svg: &str, levels: &[u32]) -> Vec<String> {
    let l = parse(svg);
    let mut out = Vec::new();
    let show = |t: &TextBox| format!("'{}' at ({:.0}, {:.0})", t.text, t.rect.0, t.rect.1);
    for (i, a) in l.texts.iter().enumerate() {
        for b in &l.texts[i + 1..] {
            if overlap(&a.rect, &b.rect, 0.5) {
                out.push(format!("text {} overlaps text {}", show(a), show(b)));
            }
        }
        if let Some(m) = l.markers.iter().find(|m| overlap(&a.rect, m, 0.5)) {
            out.push(format!(
                "text {} covers a data marker at ({:.0}, {:.0})",
                show(a),
                (m.0 + m.2) / 2.0,
                (m.1 + m.3) / 2.0
            ));
        }
    }
    for f in &l.frames {
        for m in l.markers.iter().filter(|m| overlap(f, m, 0.5)) {
            // a legend's own swatch markers sit inside it
            let inside = m.0 >= f.0 && m.2 <= f.0 + 40.0;
            if !inside {
                out.push(format!(
                    "legend frame ({:.0}, {:.0})..({:.0}, {:.0}) covers a data marker at ({:.0}, {:.0})",
                    f.0,
                    f.1,
                    f.2,
                    f.3,
                    (m.0 + m.2) / 2.0,
                    (m.1 + m.3) / 2.0
                ));
            }
        }
    }
    out.extend(unnamed_levels(&l, levels));
    out
}

/// The measured levels with neither a tick label nor a tick mark, on each load axis
/// (found by its description, `concurrency`).
fn unnamed_levels(l: &Layout, levels: &[u32]) -> Vec<String> {
    let mut out = Vec::new();
    let descs: Vec<&TextBox> = l
        .texts
        .iter()
        .filter(|t| t.text == "concurrency" && !t.rotated)
        .collect();
    for d in &descs {
        // the tick labels: numbers centred in the row above the description, nearer this
        // description than any other
        let ticks: Vec<(f64, &TextBox)> = l
            .texts
            .iter()
            .filter(|t| t.anchor == "middle" && !t.rotated)
            .filter(|t| t.rect.1 < d.rect.1 && d.rect.1 - t.rect.1 < 4.0 * t.size)
            .filter(|t| {
                descs
                    .iter()
                    .filter(|o| (o.rect.1 - d.rect.1).abs() < 1.0)
                    .all(|o| (o.at.0 - t.at.0).abs() >= (d.at.0 - t.at.0).abs())
            })
            .filter_map(|t| Some((t.text.parse::<f64>().ok()?, t)))
            .collect();
        if ticks.len() < 2 {
            out.push(format!(
                "the axis at ({:.0}, {:.0}) has {} tick labels",
                d.at.0,
                d.at.1,
                ticks.len()
            ));
            continue;
        }
        let (a, b) = (ticks[0], ticks[ticks.len() - 1]);
        let x_at = |v: f64| a.1.at.0 + (v / a.0).ln() / (b.0 / a.0).ln() * (b.1.at.0 - a.1.at.0);
        let row_y = a.1.rect.1;
        for &c in levels {
            if ticks.iter().any(|(v, _)| (*v - f64::from(c)).abs() < 0.5) {
                continue;
            }
            let x = x_at(f64::from(c));
            let marked = l.segments.iter().any(|&((x0, y0), (x1, y1))| {
                (x0 - x1).abs() < 0.5
                    && (x0 - x).abs() <= 2.0
                    && (y1 - y0).abs() <= 10.0
                    && y0.max(y1) <= row_y + 1.0
                    && row_y - y0.min(y1) <= 16.0
            });
            if !marked {
                out.push(format!(
                    "level {c} on the axis at ({:.0}, {:.0}) has no tick label and no mark",
                    d.at.0, d.at.1
                ));
            }
        }
    }
    out
}
