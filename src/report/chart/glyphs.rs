//! PNG text without stray spaces. plotters 0.3.7's `ab_glyph` text drawing puts each glyph's
//! outline at the pen position and drops the glyph's left side bearing (`px_bounds().min.x`).
//! In a monospaced font the narrow punctuation (`:`, `.`, `/`) sits in the middle of its
//! cell, so drawn flush left it hugs the character before it and leaves a gap after it:
//! `http://127.0.0.1:40035` read as `http: //127. 0. 0. 1: 40035`. The advances (and so the
//! layout plotters measures) were right; only the rasterising was off, and only in PNG (SVG
//! carries the text and the viewer draws it).
//!
//! [`Bitmap`] wraps plotters' bitmap backend and draws text with the same font, size, colour
//! and anchor, placing each glyph at its own bounds, on a baseline low enough that the tops
//! of capitals are not cut off at the top of the image. Everything else passes through.

use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, ScaleFont};
use plotters::backend::{BitMapBackend, RGBPixel};
use plotters::prelude::*;
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontFamily,
    FontStyle, FontTransform,
};

/// The embedded font, parsed once (the same bytes plotters was given).
fn hack() -> Option<&'static FontRef<'static>> {
    static FONT: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    FONT.get_or_init(|| FontRef::try_from_slice(epaint_default_fonts::HACK_REGULAR).ok())
        .as_ref()
}

/// A text style whose glyphs are drawn at their own bounds.
struct Placed<'s, S>(&'s S);

impl<S: BackendTextStyle> BackendTextStyle for Placed<'_, S> {
    type FontError = S::FontError;

    fn color(&self) -> BackendColor {
        self.0.color()
    }
    fn size(&self) -> f64 {
        self.0.size()
    }
    fn transform(&self) -> FontTransform {
        self.0.transform()
    }
    fn style(&self) -> FontStyle {
        self.0.style()
    }
    fn anchor(&self) -> plotters_backend::text_anchor::Pos {
        self.0.anchor()
    }
    fn family(&self) -> FontFamily<'_> {
        self.0.family()
    }
    fn layout_box(&self, text: &str) -> Result<((i32, i32), (i32, i32)), Self::FontError> {
        self.0.layout_box(text)
    }

    fn draw<E, DrawFunc: FnMut(i32, i32, BackendColor) -> Result<(), E>>(
        &self,
        text: &str,
        (px, py): BackendCoord,
        mut draw: DrawFunc,
    ) -> Result<Result<(), E>, Self::FontError> {
        let Some(font) = hack() else {
            return self.0.draw(text, (px, py), draw);
        };
        let size = self.0.size() as f32;
        let scaled = font.as_scaled(size);
        let color = self.0.color();
        let baseline = scaled.ascent() / 1.24;
        let mut pen = 0f32;
        let mut prev = None;
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = prev {
                pen += scaled.kern(p, id);
            }
            prev = Some(id);
            let glyph = id.with_scale_and_position(size, ab_glyph::point(pen, 0.0));
            if let Some(outline) = font.outline_glyph(glyph) {
                let b = outline.px_bounds();
                // the bearing is in b.min.x; the baseline sits where the font's ascent puts it
                // in the box plotters lays text out in (size / 1.24 high), so the text fills
                // that box as an SVG viewer fills it (plotters put it at size / 2: too high)
                let (x0, y0) = (b.min.x as i32, (baseline + b.min.y) as i32);
                let mut result = Ok(());
                outline.draw(|x, y, a| {
                    if result.is_ok() && a > 0.0 {
                        let c = BackendColor {
                            alpha: color.alpha * f64::from(a.min(1.0)),
                            rgb: color.rgb,
                        };
                        result = draw(px + x0 + x as i32, py + y0 + y as i32, c);
                    }
                });
                if let Err(e) = result {
                    return Ok(Err(e));
                }
            }
            pen += scaled.h_advance(id);
        }
        Ok(Ok(()))
    }
}

/// plotters' RGB bitmap backend with text drawn by [`Placed`].
pub struct Bitmap<'a>(pub BitMapBackend<'a, RGBPixel>);

type Err<'a> = DrawingErrorKind<<BitMapBackend<'a, RGBPixel> as DrawingBackend>::ErrorType>;

impl<'a> DrawingBackend for Bitmap<'a> {
    type ErrorType = <BitMapBackend<'a, RGBPixel> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), Err<'a>> {
        self.0.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), Err<'a>> {
        self.0.present()
    }
    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Result<(), Err<'a>> {
        self.0.draw_pixel(point, color)
    }
    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), Err<'a>> {
        self.0.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Err<'a>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Err<'a>> {
        self.0.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Err<'a>> {
        self.0.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Err<'a>> {
        self.0.fill_polygon(vert, style)
    }
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), Err<'a>> {
        self.0.draw_text(text, &Placed(style), pos)
    }
    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), Err<'a>> {
        self.0.blit_bitmap(pos, size, src)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::style::text_anchor::{HPos, Pos, VPos};

    /// The ink clusters (first, last column) of `text` drawn at 40 px.
    fn clusters(text: &str) -> Vec<(usize, usize)> {
        super::super::ensure_font().unwrap();
        let (w, h) = (400u32, 80u32);
        let mut rgb = vec![255u8; (w * h * 3) as usize];
        {
            let b = BitMapBackend::<RGBPixel>::with_buffer_and_format(&mut rgb, (w, h)).unwrap();
            let root = Bitmap(b).into_drawing_area();
            let style = TextStyle::from((super::super::FONT, 40.0).into_font())
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Top));
            root.draw(&Text::new(text.to_string(), (10, 10), style))
                .unwrap();
            root.present().unwrap();
        }
        let inked = |x: u32| (0..h).any(|y| rgb[((y * w + x) * 3) as usize] < 128);
        let mut out: Vec<(usize, usize)> = Vec::new();
        for x in 0..w {
            if !inked(x) {
                continue;
            }
            match out.last_mut() {
                Some(c) if c.1 + 1 == x as usize => c.1 = x as usize,
                _ => out.push((x as usize, x as usize)),
            }
        }
        out
    }

    #[test]
    fn punctuation_sits_in_the_middle_of_its_cell() {
        // drawn flush left, the colon touched the 1 and left a gap before the next 1
        for text in ["1:1", "1.1", "1/1"] {
            let c = clusters(text);
            assert_eq!(c.len(), 3, "{text}: {c:?}");
            let (before, after) = (c[1].0 - c[0].1, c[2].0 - c[1].1);
            assert!(
                before.abs_diff(after) <= 3,
                "{text}: gaps {before} and {after}"
            );
        }
    }
}
