//! Helpers shared by the end-to-end tests: run the real binary, make temporary folders.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The `rightsize` binary cargo built for these tests.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rightsize"));
    // never read the developer's own config file
    c.env("XDG_CONFIG_HOME", tmpdir("xdg-config"));
    c.env("XDG_DATA_HOME", tmpdir("xdg-data"));
    c
}

/// A fresh, empty temporary folder unique to this test process and name.
pub fn tmpdir(name: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let p = std::env::temp_dir().join(format!(
        "rightsize-test-{}-{}-{}",
        std::process::id(),
        name,
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).expect("create temp dir");
    p
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The one run folder inside a results root.
pub fn only_run_dir(root: &std::path::Path) -> PathBuf {
    let runs: Vec<_> = std::fs::read_dir(root)
        .expect("results root exists")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        runs.len(),
        1,
        "expected one run in {}: {runs:?}",
        root.display()
    );
    runs[0].clone()
}
