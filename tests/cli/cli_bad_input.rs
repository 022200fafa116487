//! Bad input gets a clear message naming the flag, file or key, and exit code 2; a bad
//! endpoint gets a pre-flight error (exit 1) before any load is sent.

use crate::support::common;
use common::{bin, stderr, tmpdir, SimProcess};

#[test]
fn zero_or_negative_concurrency_is_rejected() {
    for bad in ["0", "16,0", "-4", "x"] {
        let o = bin()
            .args(["sweep", "--concurrency", bad])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("--concurrency"), "{bad}: {e}");
    }
    let o = bin().args(["sweep", "--concurrency=-4"]).output().unwrap();
    assert!(
        stderr(&o).contains("concurrency must be at least 1, got -4"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_flag_values_name_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["sweep", "--timeout", "soon"], "`soon` is not a duration"),
        (&["sweep", "--requests", "0"], "must be at least 1, got 0"),
        (
            &["sweep", "--prefix-share", "1.5"],
            "must be a fraction between 0 and 1",
        ),
        (&["sweep", "--header", "nocolon"], "is not `Name: value`"),
        (&["sweep", "--api", "grpc"], "invalid value 'grpc'"),
        (
            &["sweep", "--profile", "nope"],
            "unknown profile `nope`; the config defines: chat, rag",
        ),
        (
            &["sweep", "--endpoint", "nope"],
            "unknown endpoint `nope`; the config defines: sim",
        ),
        (
            &["sweep", "--plan", "nope"],
            "unknown sweep `nope`; the config defines: demo, reference",
        ),
    ];
    for (args, want) in cases {
        let o = bin().args(*args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn malformed_config_file_gives_file_line_and_key() {
    let dir = tmpdir("badcfg");
    let path = dir.join("bad.toml");
    std::fs::write(
        &path,
        "[profiles.rag]\ninput_tokens = 1024\noutput_tokenz = 256\n",
    )
    .unwrap();
    let o = bin()
        .args(["sweep", "--config", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    let want = format!(
        "error: {}: TOML parse error at line 3, column 1\n  |\n3 | output_tokenz = 256\n  | ^^^^^^^^^^^^^\nunknown field `output_tokenz`, expected one of",
        path.display()
    );
    assert!(e.starts_with(&want), "got:\n{e}\nwant prefix:\n{want}");

    std::fs::write(&path, "[sweeps.x]\nconcurrency = [8, 0]\n").unwrap();
    let o = bin()
        .args(["sweep", "--config", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("line 2") && e.contains("must be at least 1, got 0"),
        "{e}"
    );

    let o = bin()
        .args([
            "sweep",
            "--config",
            dir.join("missing.toml").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("missing.toml: cannot read"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn unreachable_endpoint_fails_preflight_without_load() {
    // a port that was free a moment ago: nothing listens there
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let out = tmpdir("unreachable");
    let o = bin()
        .args([
            "sweep",
            "--endpoint",
            &format!("http://127.0.0.1:{port}/v1"),
            "--model",
            "m",
            "-c",
            "4",
            "-n",
            "8",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("pre-flight failed"), "{e}");
    assert!(e.contains("refused"), "{e}");
    // no run folder: nothing was measured
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}

#[test]
fn no_model_uses_the_only_one_the_server_lists() {
    let sim = SimProcess::start(&["--time-scale", "50"]);
    let out = tmpdir("onlymodel");
    let o = bin()
        .args(["sweep", "--endpoint", &sim.url, "-c", "2", "-n", "4"])
        .args(["--input-tokens", "16", "--output-tokens", "4", "--json"])
        .args(["--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    drop(sim);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["endpoint"]["model"], "sim-moe-30b-a3b");
}

/// Each case that once panicked, exited 1, ran on regardless or printed its cause twice:
/// exit 2 with one line naming the flag, file or key.
#[test]
fn every_bad_value_is_refused_before_any_load_with_one_message() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["sweep", "--timeout", "18446744073709551615s"],
            "invalid value '18446744073709551615s' for '--timeout <DURATION>': \
             `18446744073709551615s` is too long (at most 365 days)",
        ),
        (
            &["search", "--e2e-sla", "18446744073709551615s"],
            "`18446744073709551615s` is too long (at most 365 days)",
        ),
        (
            &["search", "--ttft-sla", "p99:99999999999h"],
            "`99999999999h` is too long (at most 365 days)",
        ),
        (
            &["sweep", "--timeout", "0"],
            "`0`: a timeout of zero fails every request",
        ),
        (
            &["sweep", "--endpoint", "http://"],
            "error: --endpoint: invalid base URL 'http://': empty host\n",
        ),
        (
            &["sweep", "--endpoint", "http://127.0.0.1:99999/v1"],
            "error: --endpoint: invalid base URL 'http://127.0.0.1:99999/v1': invalid port number\n",
        ),
        (
            &["sweep", "--header", "X-A: b\r\nEvil: 1"],
            "header X-A: the value holds a line break or another control character, which \
             would split the request",
        ),
        (
            &["sweep", "--concurrency", "4,4,2"],
            "error: --concurrency lists 4 more than once; each level runs once (remove the \
             repeat)\n",
        ),
        (
            &["sweep", "--rates", "10", "--window", "0s"],
            "`0s`: a metrics window must be longer than zero",
        ),
        (
            &["sweep", "--rates", "10", "--level-duration", "0s"],
            "`0s`: a level's duration must be longer than zero",
        ),
        (
            &["sweep", "--warmup", "4294967295"],
            "error: --warmup 4294967295: at most 1000000 per level\n",
        ),
        (
            &["sweep", "-n", "4000000000"],
            "error: -n 4000000000: at most 1000000 per level\n",
        ),
        (
            &["sweep", "--rate", "1000000", "--level-duration", "1h"],
            "error: a rate of 1000000 req/s with --level-duration 3600s would send 3600000000 \
             requests in one level; at most 10000000 (a --level-duration of at most 10s at \
             this rate, or a lower rate)\n",
        ),
        (
            &["sweep", "--endpoint", "ftp://h:8000/v1"],
            "error: --endpoint ftp://h:8000/v1: `ftp://` is not an endpoint rightsize can \
             reach; it speaks http:// and https:// (and sagemaker:NAME for SageMaker)\n",
        ),
        (
            &["sweep", "--endpoint", "localhost:8000/v1"],
            "error: --endpoint localhost:8000/v1: a URL needs its scheme, e.g. \
             http://localhost:8000/v1 (or name an endpoint of the config)\n",
        ),
        (
            &["sweep", "--prefix-cache", "flush"],
            "invalid value 'flush' for '--prefix-cache <keep|reset>': `flush` is no \
             prefix-cache policy; use keep (what the levels before cached stays) or reset \
             (emptied before every level)",
        ),
        (
            &["sweep", "--prefix-cache-reset-url", "ftp://h/flush"],
            "`ftp://h/flush` is not an http(s) URL; give the URL whose POST empties the \
             server's prefix cache",
        ),
        (
            &["sweep", "--input-tokens", "100000000"],
            "error: profile `rag`: 100000000 input tokens is more than the largest supported \
             (1000000); lower --input-tokens (or the profile's input_tokens)\n",
        ),
    ];
    let out = tmpdir("bad-values");
    for (args, want) in cases {
        let o = bin()
            .args(*args)
            .args(["--no-tui", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(want), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{args:?}: {e}");
    }
    // nothing ran
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}

#[test]
fn bad_values_in_a_config_file_name_the_file_and_line() {
    let dir = tmpdir("badcfg-values");
    let path = dir.join("bad.toml");
    let cases: &[(&str, &str)] = &[
        (
            "[endpoints.x]\nurl = \"http://:99/v1\"\n",
            "TOML parse error at line 2, column 7",
        ),
        (
            "[defaults]\ntimeout = \"0s\"\n",
            "`0s`: a timeout of zero fails every request",
        ),
        (
            "[defaults]\ntimeout = \"99999999999h\"\n",
            "`99999999999h` is too long (at most 365 days)",
        ),
        (
            "[defaults]\nprefix_cache = \"flush\"\n",
            "unknown variant `flush`, expected `keep` or `reset`",
        ),
        (
            "[sweeps.e]\nconcurrency = []\n[defaults]\nsweep = \"e\"\n",
            "error: [sweeps.e] concurrency lists no level; give at least one, e.g. [16, 64, 256]\n",
        ),
    ];
    for (text, want) in cases {
        std::fs::write(&path, text).unwrap();
        let o = bin()
            .args(["sweep", "--no-tui", "--config", path.to_str().unwrap()])
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{text}: {e}");
        assert!(e.contains(want), "{text}: {e}");
        if want.starts_with("TOML") || want.starts_with('`') {
            assert!(e.contains(&path.display().to_string()), "{text}: {e}");
        }
    }
}

#[test]
fn a_pre_flight_error_prints_its_cause_once() {
    let sim = SimProcess::start(&[]);
    let o = bin()
        .args(["sweep", "--no-tui", "-c", "1", "-n", "2", "-e", &sim.url])
        .args(["--model", "no-such-model", "--out"])
        .arg(tmpdir("preflight-once"))
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    let line = e
        .lines()
        .find(|l| l.starts_with("error:"))
        .expect("an error line");
    let cause = line.trim_start_matches("error: pre-flight failed: ");
    assert_eq!(e.matches(cause).count(), 1, "{e}");
}

/// `--out` that cannot be a results folder (a file is there): exit 1 with the path named.
#[test]
fn an_out_that_cannot_hold_runs_names_the_path() {
    let dir = tmpdir("out-is-a-file");
    let file = dir.join("results");
    std::fs::write(&file, "not a folder").unwrap();
    let o = common::on_sim("sweep", 16, 4)
        .args(["-c", "1", "-n", "2", "--no-tui", "--out"])
        .arg(&file)
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains(&format!(
            "error: cannot write the results: {}: ",
            file.display()
        )),
        "{e}"
    );
}

/// `--workers` is bounded before anything is started: a ceiling of local processes, and no
/// more workers than the plan's highest concurrency (each holds at least one stream). It
/// used to fork about 4,000 processes for `--workers 100000` before EMFILE.
#[test]
fn too_many_workers_are_refused_before_any_is_started() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["sweep", "-c", "4", "--workers", "100000", "--no-tui"],
            "--workers 100000: at most 256 local worker processes",
        ),
        (
            &["sweep", "-c", "2,4", "--workers", "8", "--no-tui"],
            "--workers 8: more workers than the plan's highest concurrency (4)",
        ),
        (
            &[
                "search",
                "--e2e-sla",
                "1s",
                "--max",
                "16",
                "--workers",
                "32",
                "--no-tui",
            ],
            "--workers 32: more workers than the plan's highest concurrency (16)",
        ),
    ];
    for (args, want) in cases {
        let o = bin().args(*args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        // refused first: no controller note, no worker started
        assert!(
            !stderr(&o).contains("local workers"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

/// A server that accepts connections and never answers: the pre-flight says what it waits
/// for after 5 s and gives up at `--preflight-timeout`, exit 1 naming the flag. It used to
/// print nothing for the whole ten-minute request timeout.
#[test]
fn a_silent_server_is_named_at_the_preflight_timeout() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // accept and hold every connection, answering nothing
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming() {
            held.push(c);
        }
    });
    let url = format!("http://127.0.0.1:{port}/v1");
    let o = bin()
        .args(["sweep", "-e", &url, "--model", "m", "-c", "1", "-n", "1"])
        .args(["--preflight-timeout", "6s", "--no-tui"])
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains(&format!(
            "pre-flight: waiting for {url} to answer (5 s so far; gives up after 6 s, \
             --preflight-timeout)"
        )),
        "{e}"
    );
    assert!(
        e.contains(&format!("{url} did not answer within 6000 ms"))
            && e.contains("--preflight-timeout"),
        "{e}"
    );
}

#[test]
fn bad_tools_name_the_file_and_the_flag() {
    let dir = tmpdir("badtools");
    let good = dir.join("tools.json");
    std::fs::write(
        &good,
        r#"[{"type":"function","function":{"name":"lookup"}}]"#,
    )
    .unwrap();
    let broken = dir.join("broken.json");
    std::fs::write(&broken, r#"[{"type":"function","function":{"name":"#).unwrap();
    let nameless = dir.join("nameless.json");
    std::fs::write(
        &nameless,
        r#"{"tools":[{"type":"function","function":{}}]}"#,
    )
    .unwrap();
    let (good, broken, nameless) = (
        good.to_str().unwrap(),
        broken.to_str().unwrap(),
        nameless.to_str().unwrap(),
    );
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["--tools", broken],
            format!("--tools {broken}: not JSON: EOF while parsing a value at line 1 column 39"),
        ),
        (
            vec!["--tools", nameless],
            format!("--tools {nameless}: tool 1 has no function.name"),
        ),
        (
            vec!["--tools", good, "--tool-choice", "search"],
            format!(
                "--tools {good}: tool_choice names the function search, which the tools do \
                 not define (they define lookup)"
            ),
        ),
        (
            vec!["--tools", good, "--api", "completions"],
            format!(
                "--tools {good}: tools are sent on chat requests, and endpoint sim uses the \
                 completions API; use --api chat (or leave --tools out)"
            ),
        ),
        (
            vec!["--tool-choice", "auto"],
            "--tool-choice applies to the tools chat requests carry: give --tools FILE too, \
             or leave it out"
                .to_string(),
        ),
        (
            vec!["--fail-on-bad-tool-call"],
            "--fail-on-bad-tool-call applies to the tools chat requests carry: give --tools \
             FILE too, or leave it out"
                .to_string(),
        ),
        (
            vec!["--agent", "--turns", "4"],
            "--agent runs agent loops, which need tools to call: give --tools FILE (OpenAI \
             tool definitions) too"
                .to_string(),
        ),
        (
            vec!["--agent", "--tools", good, "--turns", "1"],
            "--agent runs sessions of several requests: give --turns N of 2 or more (default \
             10), or leave --turns out"
                .to_string(),
        ),
        (
            vec!["--agent", "--tools", good, "--think-time", "1s"],
            "--agent pauses for its tools (--tool-latency), not for a user: leave --think-time \
             out"
            .to_string(),
        ),
        (
            vec!["--tool-latency", "200ms", "--tools", good],
            "--tool-latency belongs to agent loops: give --agent (and --tools FILE) too, or \
             leave it out"
                .to_string(),
        ),
    ];
    for (args, want) in cases {
        let o = bin()
            .args(["sweep", "-e", "sim", "-c", "1", "-n", "2"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(&want), "{args:?}: {}", stderr(&o));
    }
    // agent loops wait for answers: no open-loop rate
    let o = bin()
        .args(["sweep", "-e", "sim", "-n", "2", "--rate", "5"])
        .args(["--agent", "--tools", good])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "--agent: agent loops run at concurrency levels (each request waits for the tool \
             calls of the previous answer); open-loop rates send independent requests. Use \
             --concurrency, or leave out --agent"
        ),
        "{}",
        stderr(&o)
    );
}
