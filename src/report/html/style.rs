//! The report's stylesheet, inlined in the page (no file or font is fetched).

/// Plain, printable, readable on a phone: system fonts, tables that scroll sideways.
pub const CSS: &str = r#"
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1280px;
 padding:16px 24px;color:#1d1d1f;background:#fff;line-height:1.4}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin:1.4em 0 .5em;border-bottom:1px solid #ddd}
.sub{color:#555;margin:0 0 1em}
.answers{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:12px}
.answer{border:2px solid #00897b;border-radius:8px;padding:12px 16px;background:#f3faf9}
.answer .headline{font-size:1.6em;font-weight:600;color:#00695c;margin:0}
.answer .bracket{color:#333;margin:.2em 0 .6em}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0}
dt{font-weight:600;color:#444}dd{margin:0}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:12px}
.charts.single{grid-template-columns:repeat(auto-fill,minmax(520px,1fr))}
figure{margin:0;border:1px solid #e3e3e3;border-radius:6px;padding:4px}
figure svg{width:100%;height:auto;display:block}
figcaption{font-size:.85em;color:#555;padding:2px 6px}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:.85em;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:right;white-space:nowrap}
th{background:#f5f5f5}td.l,th.l{text-align:left}
tr.hollow td{color:#777;font-style:italic}
.pass{color:#1b5e20}.fail{color:#b71c1c;font-weight:600}.uncertain{color:#8d6e00}
.warn li{color:#8d4b00}
pre{background:#f6f8fa;border:1px solid #ddd;border-radius:6px;padding:10px;white-space:pre-wrap;
 word-break:break-all}
footer{color:#777;font-size:.8em;margin-top:2em}
@media print{.charts{grid-template-columns:1fr 1fr}}
"#;
