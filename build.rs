//! Turns `assets/chart_theme.toml` (one `name = "#RRGGBB"` a line) into constants of the
//! chart code (`src/report/chart/theme.rs` includes them), so the charts' colours live in
//! `assets/` and are checked when the crate builds. A hand reader of its one line shape:
//! no build dependency for it.

use std::fmt::Write;

fn main() {
    let path = "assets/chart_theme.toml";
    println!("cargo:rerun-if-changed={path}");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = String::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| -> ! { panic!("{path}:{}: {why}: `{line}`", n + 1) };
        let (name, value) = line.split_once('=').unwrap_or_else(|| bad("no `=`"));
        let name = name.trim();
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            bad("a name is lower case letters, digits and `_`");
        }
        let hex = value.trim().trim_matches('"');
        let rgb = hex
            .strip_prefix('#')
            .filter(|h| h.len() == 6)
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .unwrap_or_else(|| bad("a colour is \"#RRGGBB\""));
        writeln!(
            out,
            "pub const {}: RGBColor = RGBColor({}, {}, {});",
            name.to_ascii_uppercase(),
            rgb >> 16,
            (rgb >> 8) & 0xff,
            rgb & 0xff
        )
        .unwrap();
    }
    let dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    std::fs::write(format!("{dir}/chart_theme.rs"), out).expect("write the theme");
}
