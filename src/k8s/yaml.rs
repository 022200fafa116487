//! A small YAML writer for JSON values, block style, as `kubectl apply -f -` reads it.
//!
//! No YAML crate is in the dependency tree and the need is one direction only (write, never
//! read) for values that are already JSON: block mappings and sequences, and scalars. So the
//! writer is this file rather than a dependency (serde_yaml is archived; the maintained forks
//! each bring a parser the program never uses).
//!
//! Every string scalar is written double-quoted, JSON-style, which YAML 1.1 and 1.2 both read
//! as a string: nothing is re-typed by a YAML reader (`"0"`, `"on"`, `"no"`, `"1Gi"`,
//! `"1e3"`, `"null"`, `"~"` stay strings). JSON's escapes are all valid YAML escapes; the
//! characters YAML does not allow raw (DEL, the C1 controls) or takes for line breaks inside
//! a quoted scalar (NEL, LS, PS), and the byte-order mark, are escaped too. Floats are
//! written with a dot and a signed exponent (`1.0e+300`), which YAML 1.1 needs. Mapping keys are written plain when they are made of
//! letters, digits and `_ . / -`, start with a letter and are not a YAML 1.1 boolean or null
//! (`on`, `y`, `null`, ...); any other key is quoted like a value. Empty mappings and
//! sequences are written `{}` and `[]`.

use serde_json::Value;

/// The block YAML of `value`, ending with a newline: a mapping or a sequence as indented
/// lines, a scalar (or an empty collection) as one line.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    if is_inline(value) {
        out.push_str(&inline(value));
        out.push('\n');
    } else {
        block(&mut out, value, 0);
    }
    out
}

/// A string as a double-quoted YAML scalar.
pub fn quote(s: &str) -> String {
    let json = serde_json::to_string(s).expect("a string serializes");
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        // serde_json escapes the C0 controls; these it leaves raw, and YAML does not allow
        // them raw (DEL, the C1 controls, the non-characters) or reads them as line breaks
        // (NEL, LS, PS)
        let escape = matches!(
            c,
            '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        );
        if escape {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// A number as YAML 1.1 and 1.2 both read it: a float's exponent with a dot before it and a
/// sign (`1.0e+300`, where JSON writes `1e300`).
fn number(n: &serde_json::Number) -> String {
    let text = n.to_string();
    if !n.is_f64() {
        return text;
    }
    match text.split_once(['e', 'E']) {
        Some((mantissa, exp)) => {
            let dot = if mantissa.contains('.') { "" } else { ".0" };
            let sign = if exp.starts_with(['+', '-']) { "" } else { "+" };
            format!("{mantissa}{dot}e{sign}{exp}")
        }
        None => text,
    }
}

/// A mapping key, plain when no YAML reader can take it for anything but that string.
pub fn key(k: &str) -> String {
    const SPECIAL: [&str; 12] = [
        "y", "n", "yes", "no", "on", "off", "true", "false", "null", "=", "<<", "~",
    ];
    let plain = k.starts_with(|c: char| c.is_ascii_alphabetic())
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
        && !SPECIAL.contains(&k.to_ascii_lowercase().as_str());
    if plain {
        k.to_string()
    } else {
        quote(k)
    }
}

/// Whether a value is written on the line of its key or dash.
fn is_inline(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => true,
    }
}

/// A scalar or an empty collection.
fn inline(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => quote(s),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
    }
}

/// A non-empty mapping or sequence, every line starting at `indent` spaces.
fn block(out: &mut String, v: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, val) in m {
                out.push_str(&pad);
                out.push_str(&key(k));
                out.push(':');
                if is_inline(val) {
                    out.push(' ');
                    out.push_str(&inline(val));
                    out.push('\n');
                } else {
                    out.push('\n');
                    block(out, val, indent + 2);
                }
            }
        }
        Value::Array(a) => {
            for item in a {
                if is_inline(item) {
                    out.push_str(&pad);
                    out.push_str("- ");
                    out.push_str(&inline(item));
                    out.push('\n');
                } else {
                    // the item's block, two deeper, with its first line's indentation
                    // turned into the dash: `- key: value` then `  key: value`
                    let mut inner = String::new();
                    block(&mut inner, item, indent + 2);
                    out.push_str(&pad);
                    out.push_str("- ");
                    out.push_str(&inner[indent + 2..]);
                }
            }
        }
        _ => unreachable!("block() takes a non-empty mapping or sequence"),
    }
}
