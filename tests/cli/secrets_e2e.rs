//! Secrets are never written: a run whose URL carries a password and whose headers carry
//! credentials leaves none of them in its results folder, in `runs` or `show`, in any export,
//! or on stderr. (The dashboard's screens are checked in `tui_tmux.rs`.)

use crate::support::common;
use common::{bin, only_run_dir, tmpdir, SimProcess};
use std::path::Path;

/// Every secret the run is given; none may appear anywhere it writes.
pub const SECRETS: [&str; 6] = [
    "PW-hunter2",
    "TOPSECRET-bearer",
    "PROXYSECRET",
    "COOKIESECRET",
    "APIKEYSECRET",
    "TOKENSECRET",
];

fn with_secrets(url: &str) -> (String, Vec<String>) {
    let authed = url.replacen("http://", "http://alice:PW-hunter2@", 1);
    let headers = [
        "Authorization: Bearer TOPSECRET-bearer",
        "Proxy-Authorization: Basic PROXYSECRET",
        "Cookie: session=COOKIESECRET",
        "X-Api-Key: APIKEYSECRET",
        "X-Auth-Token: TOKENSECRET",
        "X-Team: ml-platform",
    ];
    (
        authed,
        headers
            .iter()
            .flat_map(|h| ["--header".to_string(), h.to_string()])
            .collect(),
    )
}

fn assert_clean(what: &str, bytes: &[u8]) {
    assert_without(what, bytes, &SECRETS);
}

fn assert_without(what: &str, bytes: &[u8], secrets: &[&str]) {
    let text = String::from_utf8_lossy(bytes);
    for s in secrets {
        assert!(!text.contains(s), "{what} holds {s}:\n{text}");
    }
}

/// Every file under `dirs` is free of `secrets`; how many files were read.
fn files_without(dirs: &[&Path], secrets: &[&str]) -> usize {
    let mut files = Vec::new();
    for d in dirs {
        walk(d, &mut files);
    }
    for f in &files {
        assert_without(
            &f.display().to_string(),
            &std::fs::read(f).unwrap(),
            secrets,
        );
    }
    files.len()
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn no_secret_reaches_a_file_an_export_or_the_output() {
    let sim = SimProcess::start(&["--time-scale", "20"]);
    let root = tmpdir("secrets");
    let (url, headers) = with_secrets(&sim.url);
    let o = bin()
        .args([
            "sweep",
            "-e",
            &url,
            "--input-tokens",
            "32",
            "--output-tokens",
            "8",
        ])
        .args(["-c", "2", "-n", "8", "--no-tui", "--out"])
        .arg(&root)
        .args(&headers)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_clean("stdout", &o.stdout);
    assert_clean("stderr", &o.stderr);
    let run = only_run_dir(&root);
    let echo = std::fs::read_to_string(run.join("run.json")).unwrap();
    // the URL and the harmless header stay readable, masked where they held a secret
    assert!(echo.contains("alice:***@127.0.0.1"), "{echo}");
    assert!(echo.contains("ml-platform"), "{echo}");
    let id = run.file_name().unwrap().to_string_lossy().into_owned();
    let exports = tmpdir("secrets-export");
    for args in [
        vec!["runs".to_string()],
        vec!["runs".into(), "--json".into()],
        vec!["show".into(), id.clone()],
        vec!["show".into(), id.clone(), "--json".into()],
        vec![
            "export".into(),
            id.clone(),
            "--png".into(),
            format!("{}/", exports.display()),
            "--svg".into(),
            format!("{}/", exports.display()),
            "--csv".into(),
            exports.join("levels.csv").display().to_string(),
            "--json".into(),
            exports.join("run.json").display().to_string(),
            "--aiperf".into(),
            exports.join("aiperf").display().to_string(),
            "--benchmark-report".into(),
            exports.join("benchmark-report").display().to_string(),
        ],
    ] {
        let o = bin()
            .args(&args)
            .arg("--runs-dir")
            .arg(&root)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_clean(&format!("{args:?} stdout"), &o.stdout);
        assert_clean(&format!("{args:?} stderr"), &o.stderr);
    }
    let read = files_without(&[&root, &exports], &SECRETS);
    assert!(read >= 8, "{read} files");
}

#[test]
fn a_key_from_the_environment_or_a_config_line_is_never_shown() {
    let sim = SimProcess::start(&["--time-scale", "20"]);
    let root = tmpdir("secrets-env");
    // the key is read from the variable the config names, and sent; never written
    let cfg = root.with_extension("toml");
    std::fs::write(
        &cfg,
        format!(
            "[endpoints.keyed]\nurl = \"{}\"\napi_key_env = \"RS_TEST_SECRET_KEY\"\n",
            sim.url
        ),
    )
    .unwrap();
    let o = bin()
        .args(["sweep", "--config"])
        .arg(&cfg)
        .args([
            "-e",
            "keyed",
            "--input-tokens",
            "32",
            "--output-tokens",
            "8",
        ])
        .args(["-c", "2", "-n", "8", "--no-tui", "--out"])
        .arg(&root)
        .env("RS_TEST_SECRET_KEY", "ENVKEYSECRET")
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_without("stdout", &o.stdout, &["ENVKEYSECRET"]);
    assert_without("stderr", &o.stderr, &["ENVKEYSECRET"]);
    assert!(files_without(&[&root], &["ENVKEYSECRET"]) >= 3);
    // a key written into the config is refused, naming the field, without echoing its line
    std::fs::write(
        &cfg,
        format!(
            "[endpoints.keyed]\nurl = \"{}\"\napi_key = \"sk-CONFIGSECRET\"\n",
            sim.url
        ),
    )
    .unwrap();
    let o = bin()
        .args(["sweep", "--config"])
        .arg(&cfg)
        .args(["-e", "keyed", "--no-tui", "--out"])
        .arg(&root)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("api_key"), "{err}");
    assert!(!err.contains("CONFIGSECRET"), "{err}");
}
