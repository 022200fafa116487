//! Walks docs/limits.md: every row's **try** command (one past the bound) is run with the
//! real binary, and must end with the row's exit code and a message holding its **says**
//! text, before anything is started. The table is what the test runs, so it cannot drift
//! from what the binary does. `RUN` in a command is a run folder the test makes.

use crate::support::common;
use common::{bin, stderr, tmpdir};

/// The table's rows: (what, try, exit, says), the backticks taken off.
fn rows() -> Vec<(String, String, i32, String)> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/limits.md"))
        .expect("docs/limits.md");
    let mut header_seen = false;
    let mut out = Vec::new();
    for line in doc.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.first() == Some(&"what") {
            assert_eq!(
                cells,
                ["what", "spelled as", "at most", "try", "exit", "says"],
                "the table's columns"
            );
            header_seen = true;
            continue;
        }
        if cells.iter().all(|c| c.chars().all(|ch| ch == '-')) {
            continue;
        }
        let code = |c: &str| c.trim_matches('`').to_string();
        out.push((
            cells[0].to_string(),
            code(cells[3]),
            cells[4].parse().expect("an exit code"),
            code(cells[5]),
        ));
    }
    assert!(header_seen, "no table in docs/limits.md");
    out
}

#[test]
fn every_limit_in_the_table_is_refused_as_it_says() {
    let rows = rows();
    assert!(rows.len() >= 15, "{} rows", rows.len());
    // a run folder for the commands that take one (a folder `export` would read)
    let dir = tmpdir("limits");
    let config = dir.join("rightsize.toml");
    std::fs::write(
        &config,
        format!(
            "[defaults]\nresults_dir = \"{}\"\n",
            dir.join("runs").display()
        ),
    )
    .unwrap();
    for (what, try_, exit, says) in &rows {
        let mut args: Vec<String> = try_
            .split_whitespace()
            .map(|a| {
                if a == "RUN" {
                    dir.display().to_string()
                } else {
                    a.to_string()
                }
            })
            .collect();
        if matches!(args[0].as_str(), "sweep" | "search") {
            args.push("--no-tui".into());
            args.extend(["--config".into(), config.display().to_string()]);
        }
        let o = bin().args(&args).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(*exit), "{what}: `{try_}`:\n{err}");
        assert!(err.contains(says.as_str()), "{what}: `{try_}` said:\n{err}");
        // refused before any load: nothing ran
        assert!(!err.contains("level 1:"), "{what}: `{try_}` ran:\n{err}");
    }
}
