//! The charts' colours, from `assets/chart_theme.toml` (made constants by `build.rs` when
//! the crate builds): `SLA`, `KNEE`, `ANSWER`, each run's `RUN_1_MAIN` ..., the server
//! series', the Pareto chart's.

use plotters::style::RGBColor;

include!(concat!(env!("OUT_DIR"), "/chart_theme.rs"));
