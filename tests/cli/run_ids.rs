//! Runs started at once into one results folder each get a folder of their own, and the id
//! each prints is the id its files record and the one `show` opens: the folder is claimed
//! first (atomically), and the run is named by the folder it got. Four runs start in the same
//! second here, so three of them find the first id taken.

use crate::support::common;
use common::*;
use std::collections::BTreeSet;

/// The id after `run ` on the progress line (`run ID: endpoint ...`).
fn printed_id(err: &str) -> String {
    err.lines()
        .find_map(|l| {
            l.strip_prefix("run ")?
                .split_once(": endpoint")
                .map(|(id, _)| id)
        })
        .unwrap_or_else(|| panic!("no `run ID:` line in stderr:\n{err}"))
        .to_string()
}

#[test]
fn four_runs_started_at_once_print_record_and_open_their_own_ids() {
    let out = tmpdir("same-second");
    let children: Vec<_> = (0..4)
        .map(|_| {
            on_sim("sweep", 16, 4)
                .args(["-c", "2", "-n", "8", "--no-tui", "--out"])
                .arg(&out)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut ids = BTreeSet::new();
    for child in children {
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let id = printed_id(&stderr(&o));
        let dir = out.join(&id);
        assert!(dir.is_dir(), "{id} printed, no folder of that name");
        assert_eq!(read_json(&dir.join("run.json"))["run_id"], id.as_str());
        assert_eq!(read_json(&dir.join("summary.json"))["run_id"], id.as_str());
        let shown = bin()
            .args(["show", &id, "--json", "--runs-dir"])
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
        let v: serde_json::Value = serde_json::from_str(&stdout(&shown)).unwrap();
        assert_eq!(
            v["run"]["run_id"],
            id.as_str(),
            "show {id} opened another run"
        );
        ids.insert(id);
    }
    assert_eq!(ids.len(), 4, "{ids:?}");
    let folders = std::fs::read_dir(&out).unwrap().count();
    assert_eq!(folders, 4);
}
