//! A config problem, naming the file it is in; a TOML error quotes its line, or only the
//! part around the place when the line is long.

/// A config problem, naming where it is.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct ConfigError {
    pub file: String,
    pub message: String,
}

impl ConfigError {
    /// The TOML parser's error for `file`: its message and the line it quotes, with any
    /// secret-looking value in that line masked (`secrets::redact_toml`).
    ///
    /// The parser quotes the whole line it stopped on: a line of megabytes (a one-line
    /// file) would make an error of twice that. A line longer than [`QUOTE_MAX`] characters
    /// is quoted around the place instead, saying which characters are shown.
    pub fn toml(file: &str, text: &str, e: &toml::de::Error) -> ConfigError {
        let message = match e.span().and_then(|span| long_line_at(text, span.start)) {
            Some(place) => format!("{place}\n{}", e.message().trim_end()),
            None => e.to_string().trim_end().to_string(),
        };
        ConfigError {
            file: file.to_string(),
            message: crate::secrets::redact_toml(&message),
        }
    }
}

/// The most characters of a line an error quotes.
pub const QUOTE_MAX: usize = 160;

/// Where byte `at` of `text` is, quoted as the TOML parser quotes it but with at most
/// [`QUOTE_MAX`] characters of its line around it; `None` when the line is short enough to
/// quote whole.
fn long_line_at(text: &str, at: usize) -> Option<String> {
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = &text[start..end];
    let chars = line.chars().count();
    if chars <= QUOTE_MAX {
        return None;
    }
    let line_no = text[..start].matches('\n').count() + 1;
    let column = text[start..at].chars().count();
    let from = column.saturating_sub(QUOTE_MAX / 2).min(chars - QUOTE_MAX);
    let shown: String = line.chars().skip(from).take(QUOTE_MAX).collect();
    let pad = " ".repeat(line_no.to_string().len());
    Some(format!(
        "TOML parse error at line {line_no}, column {}\n{pad} | (a line of {chars} characters: \
         characters {} to {} shown)\n{line_no} | {shown}\n{pad} | {}^",
        column + 1,
        from + 1,
        from + QUOTE_MAX,
        " ".repeat(column - from)
    ))
}
