//! A small reader of the Prometheus text exposition format: enough to find a server's gauges
//! and counters by name (labels are parsed and kept, `# HELP`/`# TYPE` lines skipped).

/// One sample line: `name{labels} value [timestamp]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub value: f64,
}

/// Parses every sample line; malformed lines are skipped (a scrape is best effort).
pub fn parse(text: &str) -> Vec<Sample> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Sample> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let (name, rest) = match line.find(['{', ' ', '\t']) {
        Some(i) => line.split_at(i),
        None => return None,
    };
    let (labels, rest) = if let Some(body) = rest.strip_prefix('{') {
        let end = label_end(body)?;
        (parse_labels(&body[..end])?, &body[end + 1..])
    } else {
        (Vec::new(), rest)
    };
    let value = rest.split_whitespace().next()?;
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        v => v.parse().ok()?,
    };
    Some(Sample {
        name: name.to_string(),
        labels,
        value,
    })
}

/// Index of the `}` closing the label set, skipping quoted values.
fn label_end(body: &str) -> Option<usize> {
    let mut in_quotes = false;
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_quotes => escaped = true,
            '"' => in_quotes = !in_quotes,
            '}' if !in_quotes => return Some(i),
            _ => {}
        }
    }
    None
}

fn parse_labels(body: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut rest = body.trim();
    while !rest.is_empty() {
        let eq = rest.find('=')?;
        let key = rest[..eq].trim().to_string();
        let after = rest[eq + 1..].trim_start().strip_prefix('"')?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = None;
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, c)) => value.push(c),
                    None => return None,
                },
                '"' => {
                    end = Some(i);
                    break;
                }
                c => value.push(c),
            }
        }
        let end = end?;
        out.push((key, value));
        rest = after[end + 1..]
            .trim_start()
            .trim_start_matches(',')
            .trim_start();
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_table() {
        let text = "# HELP x help\n# TYPE x gauge\n\
            vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 12\n\
            plain 3.5 1700000000\n\
            quoted{a=\"x,}y\",b=\"q\\\"z\"} 1e3\n\
            inf{le=\"+Inf\"} +Inf\n\
            broken{a=\"x\" 1\n\
            nospace\n";
        let s = parse(text);
        assert_eq!(s.len(), 4);
        assert_eq!(s[0].name, "vllm:num_requests_running");
        assert_eq!(
            s[0].labels,
            vec![
                ("engine".into(), "0".into()),
                ("model_name".into(), "m".into())
            ]
        );
        assert_eq!(s[0].value, 12.0);
        assert_eq!((s[1].name.as_str(), s[1].value), ("plain", 3.5));
        assert_eq!(s[2].labels[0].1, "x,}y");
        assert_eq!(s[2].labels[1].1, "q\"z");
        assert_eq!(s[2].value, 1000.0);
        assert!(s[3].value.is_infinite());
    }
}
