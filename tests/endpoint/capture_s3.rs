//! A Data Capture read from S3 (`s3://bucket/prefix`, issue 28): the real binary lists the
//! prefix through the AWS SDK, page by page, downloads every `.jsonl` object once however many
//! times the run reads the capture, signs every call with the credentials it was given, and
//! reads the same traffic as from the `aws s3 sync` copy of the same objects. The store is a
//! scripted S3 on a loopback port (`endpoint_support`), reached through `AWS_ENDPOINT_URL_S3`
//! and addressed by path, as an S3-compatible store is.

use crate::support::capture_support;
use crate::support::common;
use crate::support::endpoint_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use capture_support::write_capture;
use common::{bin, stderr, tmpdir};
use endpoint_support::{response, serve, Received, Server, Step};
use serde_json::Value;

const BUCKET: &str = "captures";
const KEY_ID: &str = "AKIDS3TEST";
/// Keys per listing page: the 10 capture files and the other objects take four pages.
const PAGE: usize = 3;

/// Every file under `dir` as (key relative to `dir`, text), in key order.
fn objects(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let key = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(key, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// `%XX` escapes decoded.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

fn s3_error(status: &str, code: &str, message: &str) -> Vec<Step> {
    vec![response(
        status,
        "application/xml",
        &format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code><Message>{message}</Message></Error>"),
    )]
}

/// ListObjectsV2 and GetObject of one bucket holding `store`, `PAGE` keys a page.
fn s3(store: &BTreeMap<String, String>, req: &Received) -> Vec<Step> {
    let (path, query) = req.path.split_once('?').unwrap_or((&req.path, ""));
    let path = unescape(path);
    let Some(rest) = path.strip_prefix(&format!("/{BUCKET}")) else {
        return s3_error(
            "404 Not Found",
            "NoSuchBucket",
            "The specified bucket does not exist",
        );
    };
    let params: BTreeMap<&str, String> = query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k, unescape(v)))
        .collect();
    if rest.is_empty() || rest == "/" {
        assert_eq!(params.get("list-type").map(String::as_str), Some("2"));
        let prefix = params.get("prefix").cloned().unwrap_or_default();
        let from: usize = params
            .get("continuation-token")
            .map_or(0, |t| t.parse().unwrap());
        let keys: Vec<&String> = store.keys().filter(|k| k.starts_with(&prefix)).collect();
        let page = &keys[from.min(keys.len())..(from + PAGE).min(keys.len())];
        let more = from + PAGE < keys.len();
        let contents: String = page
            .iter()
            .map(|k| {
                format!(
                    "<Contents><Key>{k}</Key><LastModified>2024-05-01T13:10:00.000Z</LastModified>\
                     <ETag>\"0\"</ETag><Size>{}</Size><StorageClass>STANDARD</StorageClass></Contents>",
                    store[*k].len()
                )
            })
            .collect();
        let next = if more {
            format!(
                "<NextContinuationToken>{}</NextContinuationToken>",
                from + PAGE
            )
        } else {
            String::new()
        };
        return vec![response(
            "200 OK",
            "application/xml",
            &format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
                 <ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
                 <Name>{BUCKET}</Name><Prefix>{prefix}</Prefix><KeyCount>{}</KeyCount>\
                 <MaxKeys>{PAGE}</MaxKeys><IsTruncated>{more}</IsTruncated>{contents}{next}\
                 </ListBucketResult>",
                page.len()
            ),
        )];
    }
    match store.get(rest.trim_start_matches('/')) {
        Some(text) => vec![response("200 OK", "application/octet-stream", text)],
        None => s3_error(
            "404 Not Found",
            "NoSuchKey",
            "The specified key does not exist.",
        ),
    }
}

/// The store: the capture under `sim-llm/`, plus what a bucket also holds and a capture read
/// must pass over (a note beside it, another endpoint's capture outside the prefix).
fn store(dir: &Path) -> BTreeMap<String, String> {
    let mut store = objects(dir);
    store.insert("sim-llm/README.txt".into(), "not a capture\n".into());
    store.insert(
        "other-endpoint/AllTraffic/x.jsonl".into(),
        "not read\n".into(),
    );
    store
}

fn traffic_json(server: &Server, source: &str) -> Output {
    common::aws_bin("http://127.0.0.1:9", Some((KEY_ID, "s3-test-secret")))
        .env("AWS_ENDPOINT_URL_S3", server.base().trim_end_matches("/v1"))
        .env("AWS_REGION", "us-east-1")
        .args(["traffic", source, "--json"])
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_capture_in_s3_reads_as_its_synced_copy_does() {
    let dir = tmpdir("capture-s3");
    let folder = dir.join("capture");
    write_capture(&folder);
    let store = store(&folder);
    let served = store.clone();
    let server = serve(move |_, _, req| s3(&served, req)).await;

    let url = format!("s3://{BUCKET}/sim-llm/");
    let from_s3 = tokio::task::block_in_place(|| traffic_json(&server, &url));
    assert!(from_s3.status.success(), "{}", stderr(&from_s3));
    let local = folder.join("sim-llm");
    let from_disk = tokio::task::block_in_place(|| {
        bin()
            .arg("traffic")
            .arg(&local)
            .arg("--json")
            .output()
            .unwrap()
    });
    assert!(from_disk.status.success(), "{}", stderr(&from_disk));
    // the same figures; only the name of where they were read differs
    let a: Value = serde_json::from_slice(&from_s3.stdout).unwrap();
    let b: Value = serde_json::from_slice(&from_disk.stdout).unwrap();
    let local = local.display().to_string();
    let renamed: Value =
        serde_json::from_str(&serde_json::to_string(&b).unwrap().replace(&local, &url)).unwrap();
    assert_eq!(a, renamed, "s3: {a:#}\nfolder: {b:#}");
    assert_eq!(a["requests"], 500);

    let requests = server.requests();
    // every call signed with the credentials given, none anonymous
    for r in &requests {
        let auth = r.header("authorization").unwrap_or_default();
        assert!(
            auth.starts_with(&format!("AWS4-HMAC-SHA256 Credential={KEY_ID}/")),
            "{} {}: {auth}",
            r.method,
            r.path
        );
    }
    let lists = requests
        .iter()
        .filter(|r| r.path.contains("list-type=2"))
        .count();
    let gets: Vec<String> = requests
        .iter()
        .filter(|r| !r.path.contains("list-type=2"))
        .map(|r| unescape(r.path.split('?').next().unwrap()))
        .collect();
    // 10 capture files and the note under the prefix: four pages of three
    let under: Vec<&String> = store.keys().filter(|k| k.starts_with("sim-llm/")).collect();
    assert_eq!(under.len(), 11);
    assert_eq!(lists, 4, "{requests:#?}");
    // each .jsonl object once, though traffic reads the capture for its times and its records
    let mut want: Vec<String> = under
        .iter()
        .filter(|k| k.ends_with(".jsonl"))
        .map(|k| format!("/{BUCKET}/{k}"))
        .collect();
    want.sort();
    let mut got = gets.clone();
    got.sort();
    assert_eq!(got, want);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_bucket_or_an_empty_prefix_is_said_naming_the_url() {
    let dir = tmpdir("capture-s3-missing");
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    let store = store(&dir.join("empty"));
    let server = serve(move |_, _, req| s3(&store, req)).await;
    let o = tokio::task::block_in_place(|| traffic_json(&server, "s3://no-such-bucket/ep"));
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("s3://no-such-bucket/ep: cannot list the objects: The specified bucket does not exist (NoSuchBucket)"),
        "{err}"
    );
    let o = tokio::task::block_in_place(|| traffic_json(&server, "s3://captures/nothing-here"));
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("s3://captures/nothing-here: no .jsonl objects under this prefix"),
        "{err}"
    );
}
