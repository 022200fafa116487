//! `rightsize k8s render`: the objects of a distributed run, checked as Kubernetes would use
//! them (the Service finds the controller's pod, the workers find the Service and the Secret,
//! the owner references name the controller Job), validated offline against the Kubernetes
//! schemas by `kubernetes-validate --strict` (PyPI; `.ci/run` installs it), and the YAML read
//! back by a real YAML 1.1 reader (PyYAML, which kubernetes-validate brings) into the same
//! objects as `--output json`.

use crate::support::common;
use common::{bin, stderr, stdout, tmpdir, tool_missing};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TOKEN_ENV: &str = "RIGHTSIZE_WORKER_TOKEN";
const TOKEN: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";
const UID: &str = "6f1c7a52-3b8e-4d2a-9c1e-0a2b3c4d5e6f";
/// The Kubernetes versions the objects are validated against: an old one still in service
/// and the newest kubernetes-validate 1.37.0 ships.
const K8S_VERSIONS: [&str; 2] = ["1.30.0", "1.37.0"];

/// The flags of the main example: four workers of run r1 in namespace perf.
fn r1_flags() -> Vec<&'static str> {
    vec![
        "--workers",
        "4",
        "--name",
        "r1",
        "--namespace",
        "perf",
        "--image",
        "registry.example/rightsize:test",
    ]
}

const SWEEP: [&str; 5] = ["sweep", "-c", "64,256,1024", "-n", "512"];

/// `rightsize k8s render ARGS` with the token set (or the variable removed, with `None`).
fn render_with(args: &[&str], token: Option<&str>) -> Output {
    let mut c = bin();
    c.args(["k8s", "render"]).args(args);
    match token {
        Some(t) => c.env(TOKEN_ENV, t),
        None => c.env_remove(TOKEN_ENV),
    };
    c.output().unwrap()
}

/// The YAML a successful render prints, with the token fixed.
fn render_yaml(args: &[&str]) -> String {
    let o = render_with(args, Some(TOKEN));
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// The objects of `--output json` (a v1 List), with the token fixed.
fn render_objects(args: &[&str]) -> Vec<Value> {
    let mut all = args.to_vec();
    all.splice(0..0, ["--output", "json"]);
    let o = render_with(&all, Some(TOKEN));
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let list: Value = serde_json::from_slice(&o.stdout).expect("--output json prints JSON");
    assert_eq!(list["apiVersion"], "v1");
    assert_eq!(list["kind"], "List");
    list["items"].as_array().expect("items").clone()
}

fn with_command<'a>(flags: &[&'a str], command: &[&'a str]) -> Vec<&'a str> {
    let mut v = flags.to_vec();
    v.push("--");
    v.extend_from_slice(command);
    v
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} among {objects:#?}"))
}

/// The objects of one kind.
fn kinds(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap(),
                o["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect()
}

fn container(job: &Value) -> &Value {
    let containers = job["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers");
    assert_eq!(containers.len(), 1, "{job:#}");
    &containers[0]
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().expect("a string"))
        .collect()
}

/// Whether a label selector selects these labels.
fn selects(selector: &Value, labels: &Value) -> bool {
    let sel = selector.as_object().expect("selector");
    !sel.is_empty() && sel.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// The Secret and key a container's variable is taken from.
fn secret_ref<'a>(c: &'a Value, var: &str) -> (&'a str, &'a str) {
    let env = c["env"].as_array().expect("env");
    let e = env
        .iter()
        .find(|e| e["name"] == var)
        .unwrap_or_else(|| panic!("no {var} in {env:#?}"));
    assert!(e.get("value").is_none(), "{var} is a literal: {e}");
    let r = &e["valueFrom"]["secretKeyRef"];
    (r["name"].as_str().unwrap(), r["key"].as_str().unwrap())
}

#[test]
fn owned_objects_are_wired_together() {
    let mut flags = r1_flags();
    flags.extend(["--owner-uid", UID]);
    let objects = render_objects(&with_command(&flags, &SWEEP));
    assert_eq!(
        kinds(&objects),
        ["Secret/r1-token", "Job/r1", "Service/r1", "Job/r1-workers"],
        "the Secret comes first: the pods that read it wait for it otherwise"
    );
    let secret = find(&objects, "Secret", "r1-token");
    let controller = find(&objects, "Job", "r1");
    let service = find(&objects, "Service", "r1");
    let workers = find(&objects, "Job", "r1-workers");

    // the Secret holds the token from the environment, as a string
    assert_eq!(secret["type"], "Opaque");
    assert_eq!(secret["stringData"]["token"], TOKEN);

    // the controller runs the sweep plus the flags that make it serve four workers, and the
    // run for watchers (docs/watch.md)
    let cc = container(controller);
    assert_eq!(cc["command"], json!(["rightsize"]));
    let mut want: Vec<&str> = SWEEP.to_vec();
    want.extend([
        "--workers",
        "4",
        "--worker-backend",
        "external",
        "--controller-listen",
        "0.0.0.0:7077",
        "--serve",
        "0.0.0.0:9464",
    ]);
    assert_eq!(strings(&cc["args"]), want);
    assert_eq!(cc["image"], "registry.example/rightsize:test");
    let port = &cc["ports"][0];
    assert_eq!(port["containerPort"], 7077);
    let probe = &cc["readinessProbe"]["httpGet"];
    assert_eq!(probe["path"], "/healthz");
    assert_eq!(
        probe["port"], port["name"],
        "the probe names the served port"
    );
    for (limit, want) in [("cpu", "1"), ("memory", "1Gi")] {
        assert_eq!(cc["resources"]["requests"][limit], want);
        assert_eq!(cc["resources"]["limits"][limit], want);
    }

    // the Service selects the controller's pod (and no worker's) on the served port
    let ctrl_labels = &controller["spec"]["template"]["metadata"]["labels"];
    let worker_labels = &workers["spec"]["template"]["metadata"]["labels"];
    assert_eq!(service["spec"]["type"], "ClusterIP");
    assert!(
        selects(&service["spec"]["selector"], ctrl_labels),
        "{service:#}"
    );
    assert!(
        !selects(&service["spec"]["selector"], worker_labels),
        "{service:#}"
    );
    let sp = &service["spec"]["ports"][0];
    assert_eq!(sp["port"], 7077);
    assert_eq!(
        sp["targetPort"], port["name"],
        "the Service forwards to the served port"
    );
    // the run served for watchers: a port of its own on the pod and the Service, and the
    // run's token from the same Secret
    let serve = &cc["ports"][1];
    assert_eq!(
        (&serve["name"], &serve["containerPort"]),
        (&json!("serve"), &json!(9464))
    );
    let ss = &service["spec"]["ports"][1];
    assert_eq!(
        (&ss["port"], &ss["targetPort"]),
        (&json!(9464), &json!("serve"))
    );
    assert_eq!(
        secret_ref(cc, "RIGHTSIZE_SERVE_TOKEN"),
        secret_ref(cc, TOKEN_ENV)
    );
    assert!(
        container(workers)["env"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["name"] != "RIGHTSIZE_SERVE_TOKEN"),
        "a worker serves nothing"
    );

    // the workers: an Indexed Job of four, each pointed at the Service
    let ws = &workers["spec"];
    assert_eq!(ws["completionMode"], "Indexed");
    assert_eq!(ws["parallelism"], 4);
    assert_eq!(ws["completions"], 4);
    assert_eq!(ws["backoffLimit"], 0);
    assert_eq!(ws["template"]["spec"]["restartPolicy"], "Never");
    let wc = container(workers);
    let args = strings(&wc["args"]);
    assert_eq!(args[0], "worker");
    let at = args
        .iter()
        .position(|a| *a == "--controller")
        .expect("--controller");
    let svc_url = format!(
        "http://{}.{}.svc:{}",
        service["metadata"]["name"].as_str().unwrap(),
        service["metadata"]["namespace"].as_str().unwrap(),
        sp["port"]
    );
    assert_eq!(args[at + 1], svc_url);
    assert_eq!(svc_url, "http://r1.perf.svc:7077");
    assert!(
        !args.iter().any(|a| a.starts_with("--index")),
        "the index comes from JOB_COMPLETION_INDEX: {args:?}"
    );
    for (limit, want) in [("cpu", "2"), ("memory", "2Gi")] {
        assert_eq!(wc["resources"]["requests"][limit], want);
        assert_eq!(wc["resources"]["limits"][limit], want);
    }

    // both pods take the token from the Secret, by a key it holds
    for c in [cc, wc] {
        let (name, key) = secret_ref(c, TOKEN_ENV);
        assert_eq!(name, secret["metadata"]["name"]);
        assert!(secret["stringData"].get(key).is_some(), "{key}");
    }

    // the Service, the Secret and the workers are owned by the controller Job
    for o in [secret, service, workers] {
        assert_eq!(
            o["metadata"]["ownerReferences"],
            json!([{
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": controller["metadata"]["name"],
                "uid": UID,
                "blockOwnerDeletion": true,
            }]),
            "{o:#}"
        );
    }
    assert!(controller["metadata"].get("ownerReferences").is_none());

    for job in [controller, workers] {
        assert_eq!(job["spec"]["ttlSecondsAfterFinished"], 3600);
        assert_eq!(job["spec"]["backoffLimit"], 0);
    }
    for o in &objects {
        assert_eq!(o["metadata"]["namespace"], "perf");
        let l = &o["metadata"]["labels"];
        assert_eq!(l["app.kubernetes.io/name"], "rightsize");
        assert_eq!(l["app.kubernetes.io/instance"], "r1");
        assert!(
            ["controller", "worker"].contains(&l["app.kubernetes.io/component"].as_str().unwrap()),
            "{l}"
        );
        // the token is in the Secret and nowhere else (not in any argument)
        if o["kind"] != "Secret" {
            assert!(!o.to_string().contains(TOKEN), "{o:#}");
        }
    }
    assert_eq!(
        controller["metadata"]["labels"]["app.kubernetes.io/component"],
        "controller"
    );
    assert_eq!(
        workers["metadata"]["labels"]["app.kubernetes.io/component"],
        "worker"
    );
    // and the YAML holds it once
    let yaml = render_yaml(&with_command(&flags, &SWEEP));
    assert_eq!(yaml.matches(TOKEN).count(), 1, "{yaml}");
}

#[test]
fn optional_flags_reach_both_pods() {
    let mut flags = r1_flags();
    flags.extend([
        "--port",
        "8080",
        "--service-account",
        "loadgen",
        "--env-from-secret",
        "endpoint-key",
        "--active-deadline-seconds",
        "7200",
        "--ttl-seconds",
        "60",
        "--worker-cpu",
        "500m",
        "--worker-memory",
        "512Mi",
        "--results-pvc",
        "loadtest-results",
    ]);
    let objects = render_objects(&with_command(&flags, &["search", "--e2e-sla", "p99<=10s"]));
    let controller = find(&objects, "Job", "r1");
    let workers = find(&objects, "Job", "r1-workers");
    let service = find(&objects, "Service", "r1");
    assert_eq!(
        strings(&container(controller)["args"])[..],
        [
            "search",
            "--e2e-sla",
            "p99<=10s",
            "--workers",
            "4",
            "--worker-backend",
            "external",
            "--controller-listen",
            "0.0.0.0:8080",
            "--serve",
            "0.0.0.0:9464",
            "--out",
            "/results"
        ]
    );
    // the results folder goes to the claim, mounted in the controller's pod alone
    let pod = &controller["spec"]["template"]["spec"];
    assert_eq!(
        pod["volumes"],
        json!([{"name": "results", "persistentVolumeClaim": {"claimName": "loadtest-results"}}])
    );
    assert_eq!(
        container(controller)["volumeMounts"],
        json!([{"name": "results", "mountPath": "/results"}])
    );
    assert!(workers["spec"]["template"]["spec"].get("volumes").is_none());
    assert_eq!(service["spec"]["ports"][0]["port"], 8080);
    assert_eq!(container(controller)["ports"][0]["containerPort"], 8080);
    assert!(strings(&container(workers)["args"]).contains(&"http://r1.perf.svc:8080"));
    for job in [controller, workers] {
        let pod = &job["spec"]["template"]["spec"];
        assert_eq!(pod["serviceAccountName"], "loadgen");
        assert_eq!(pod["automountServiceAccountToken"], false);
        assert_eq!(
            container(job)["envFrom"],
            json!([{"secretRef": {"name": "endpoint-key"}}])
        );
        assert_eq!(job["spec"]["activeDeadlineSeconds"], 7200);
        assert_eq!(job["spec"]["ttlSecondsAfterFinished"], 60);
    }
    assert_eq!(container(workers)["resources"]["limits"]["cpu"], "500m");
    assert_eq!(
        container(workers)["resources"]["requests"]["memory"],
        "512Mi"
    );
    assert_eq!(container(controller)["resources"]["limits"]["cpu"], "1");
}

#[test]
fn only_splits_the_objects_for_the_two_steps() {
    let controller = render_objects(&with_command(
        &[&r1_flags()[..], &["--only", "controller"]].concat(),
        &SWEEP,
    ));
    assert_eq!(kinds(&controller), ["Job/r1"]);
    // step two needs no command, and takes the uid
    let mut flags = r1_flags();
    flags.extend(["--only", "workers", "--owner-uid", UID]);
    let rest = render_objects(&flags);
    assert_eq!(
        kinds(&rest),
        ["Secret/r1-token", "Service/r1", "Job/r1-workers"]
    );
    for o in &rest {
        assert_eq!(o["metadata"]["ownerReferences"][0]["uid"], UID, "{o:#}");
    }
    // without --owner-uid, nothing is owned
    let plain = render_objects(&with_command(&r1_flags(), &SWEEP));
    assert_eq!(plain.len(), 4);
    assert!(plain
        .iter()
        .all(|o| o["metadata"].get("ownerReferences").is_none()));
}

#[test]
fn the_token_is_the_environments_or_a_fresh_one() {
    let args = with_command(&r1_flags(), &SWEEP);
    let token_of = |token: Option<&str>| {
        let mut a = vec!["--output", "json"];
        a.extend(&args);
        let o = render_with(&a, token);
        assert!(o.status.success(), "{}", stderr(&o));
        let list: Value = serde_json::from_slice(&o.stdout).unwrap();
        let items = list["items"].as_array().unwrap().clone();
        find(&items, "Secret", "r1-token")["stringData"]["token"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(token_of(Some("my-own-token")), "my-own-token");
    let (a, b) = (token_of(None), token_of(None));
    assert_ne!(a, b, "each render without the variable makes a new token");
    for t in [a, b] {
        assert_eq!(t.len(), 64, "{t}");
        assert!(t.bytes().all(|c| c.is_ascii_hexdigit()), "{t}");
    }
    // step one prints no Secret, so no token at all
    let mut step1 = r1_flags();
    step1.extend(["--only", "controller", "--"]);
    step1.extend(SWEEP);
    let o = render_with(&step1, Some(TOKEN));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains(TOKEN));
    assert!(!stdout(&o).contains("kind: \"Secret\""));
}

#[test]
fn bad_input_fails_naming_the_flag_and_prints_nothing() {
    let long_name = "a".repeat(41);
    let cases: Vec<(Vec<&str>, &str)> =
        vec![
        (
            vec!["--workers", "4", "--", "run", "-c", "4"],
            "`run` cannot be distributed: the command after `--` must be sweep or search (a campaign needs its file on the controller's disk, which render does not mount)",
        ),
        (
            vec!["--workers", "0", "--", "sweep"],
            "--workers <N>': must be at least 1, got 0",
        ),
        (vec!["--", "sweep"], "--workers <N>"),
        (
            vec!["--workers", "4", "--name", "Bad_Name", "--", "sweep"],
            "--name: `Bad_Name` is not a valid name",
        ),
        (
            vec!["--workers", "4", "--name", "7up", "--", "sweep"],
            "--name: `7up` is not a valid name",
        ),
        (
            vec![
                "--workers",
                "4",
                "--name",
                long_name.as_str(),
                "--",
                "sweep",
            ],
            "--name: `aaaa",
        ),
        (
            vec!["--workers", "4", "--", "sweep", "--workers", "8"],
            "the command after `--` sets --workers: render sets",
        ),
        (
            vec!["--workers", "4", "--", "sweep", "--worker-backend=local"],
            "sets --worker-backend",
        ),
        (
            vec![
                "--workers",
                "4",
                "--",
                "search",
                "--controller-listen",
                "0.0.0.0:1",
            ],
            "sets --controller-listen",
        ),
        (
            vec!["--workers", "4", "--", "sweep", "--serve=127.0.0.1:0"],
            "sets --serve: render sets",
        ),
        (
            vec!["--workers", "4", "--serve-port", "7077", "--", "sweep"],
            "--serve-port: 7077 is --port's too",
        ),
        (
            vec!["--workers", "4"],
            "no command to distribute: add `-- sweep|search ARGS...`",
        ),
        (
            vec!["--workers", "4", "--namespace", "Perf", "--", "sweep"],
            "--namespace: `Perf` is not a namespace name",
        ),
        (
            vec!["--workers", "4", "--worker-memory", "2GB", "--", "sweep"],
            "--worker-memory: `2GB` is not a Kubernetes quantity",
        ),
        (
            vec!["--workers", "4", "--controller-cpu", "0", "--", "sweep"],
            "--controller-cpu: `0` is not a Kubernetes quantity above zero",
        ),
        (
            vec!["--workers", "4", "--owner-uid", "", "--", "sweep"],
            "--owner-uid: `` is not a uid",
        ),
        (
            vec![
                "--workers",
                "4",
                "--only",
                "controller",
                "--owner-uid",
                UID,
                "--",
                "sweep",
            ],
            "--owner-uid: --only controller prints the controller Job alone",
        ),
        (
            vec!["--workers", "4", "--port", "0", "--", "sweep"],
            "--port <PORT>",
        ),
        (
            vec![
                "--workers",
                "4",
                "--env-from-secret",
                "Endpoint Key",
                "--",
                "sweep",
            ],
            "--env-from-secret: `Endpoint Key`",
        ),
        (
            vec![
                "--workers",
                "4",
                "--worker-connect-timeout",
                "soon",
                "--",
                "sweep",
            ],
            "--worker-connect-timeout: `soon` is not a duration",
        ),
        (
            vec!["--workers", "100001", "--", "sweep"],
            "--workers: 100001 is more than an Indexed Job runs",
        ),
        (
            vec!["--workers", "4", "--results-pvc", "keep", "--", "sweep", "--out=/data"],
            "--results-pvc: the command after `--` sets --out",
        ),
        (
            vec!["--workers", "4", "--results-pvc", "Keep", "--", "sweep"],
            "--results-pvc: `Keep` is not a Kubernetes object name",
        ),
    ];
    for (args, want) in cases {
        let o = render_with(&args, Some(TOKEN));
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(want),
            "{args:?}: want `{want}` in: {}",
            stderr(&o)
        );
        assert!(o.stdout.is_empty(), "{args:?} printed: {}", stdout(&o));
    }
    // an empty token variable is a mistake, not a request for a random token
    let o = render_with(&with_command(&r1_flags(), &SWEEP), Some(""));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("RIGHTSIZE_WORKER_TOKEN is set but empty"),
        "{}",
        stderr(&o)
    );
}

/// The YAML documents of a render (the comment at the top dropped).
fn documents(yaml: &str) -> Vec<String> {
    let mut docs: Vec<String> = yaml.split("---\n").map(str::to_string).collect();
    let head = docs.remove(0);
    assert!(
        head.lines().all(|l| l.starts_with('#')),
        "before the first document: {head}"
    );
    docs
}

#[test]
fn the_comment_gives_commands_that_make_the_same_objects() {
    let mut flags = r1_flags();
    flags.extend([
        "--port",
        "8080",
        "--worker-memory",
        "4Gi",
        "--env-from-secret",
        "endpoint-key",
        "--results-pvc",
        "loadtest-results",
        "--active-deadline-seconds",
        "600",
    ]);
    // arguments a shell has to have quoted, one with a line break that must not end the comment
    let command = [
        "sweep",
        "-c",
        "64,256",
        "--header",
        "X-Note: it's $HOME",
        "--model",
        "a\nb",
    ];
    let all = render_yaml(&with_command(&flags, &command));
    let comment: Vec<&str> = all.lines().take_while(|l| l.starts_with('#')).collect();
    assert!(comment.len() >= 5, "{all}");
    let cleanup = "#   kubectl delete job,svc,secret -n perf -l app.kubernetes.io/instance=r1";
    assert!(comment.contains(&cleanup), "{comment:#?}");
    assert!(
        comment.contains(&"#   OWNER=$(kubectl get job r1 -n perf -o jsonpath='{.metadata.uid}')"),
        "{comment:#?}"
    );
    let step = |only: &str| -> String {
        let line = comment
            .iter()
            .find(|l| l.contains(&format!("--only {only}")))
            .unwrap_or_else(|| panic!("no --only {only} line in {comment:#?}"));
        line.strip_prefix("#   ")
            .and_then(|l| l.strip_suffix(" | kubectl apply -f -"))
            .unwrap_or_else(|| panic!("{line}"))
            .to_string()
    };
    // run the two commands as printed, through a shell, with this build as `rightsize`
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_rightsize")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let sh = |line: &str| -> String {
        let o = Command::new("bash")
            .args(["-c", line])
            .env("PATH", &path)
            .env("OWNER", UID)
            .env(TOKEN_ENV, TOKEN)
            .env("XDG_CONFIG_HOME", tmpdir("xdg-config"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{line}: {}", stderr(&o));
        stdout(&o)
    };
    let step1 = documents(&sh(&step("controller")));
    let step2 = documents(&sh(&step("workers")));
    // they are the objects of the command itself with --owner-uid
    let mut owned_flags = flags.clone();
    owned_flags.extend(["--owner-uid", UID]);
    let owned = documents(&render_yaml(&with_command(&owned_flags, &command)));
    assert_eq!(owned.len(), 4);
    assert_eq!(step1, [owned[1].clone()], "step one: the controller Job");
    assert_eq!(
        step2,
        [owned[0].clone(), owned[2].clone(), owned[3].clone()],
        "step two"
    );
    assert!(owned[1].contains(r#"- "a\nb""#), "{}", owned[1]);

    // the cleanup's label selects every object
    let objects = render_objects(&with_command(&flags, &command));
    for o in &objects {
        assert_eq!(o["metadata"]["labels"]["app.kubernetes.io/instance"], "r1");
        assert_eq!(o["metadata"]["namespace"], "perf");
    }

    // step one's comment tells the next step
    let first = render_yaml(&with_command(
        &[&flags[..], &["--only", "controller"]].concat(),
        &command,
    ));
    assert!(
        first.contains("--only workers --owner-uid \"$OWNER\" | kubectl apply -f -"),
        "{first}"
    );
}

/// The `kubernetes-validate` command: on PATH, else where `pip install --user` puts it.
fn kubernetes_validate() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(Path::new(&home).join(".local/bin"));
    }
    dirs.into_iter()
        .map(|d| d.join("kubernetes-validate"))
        .find(|p| p.is_file())
}

/// kubernetes-validate, or `None` after saying it is missing (a failure under CI=true).
fn validator() -> Option<PathBuf> {
    let found = kubernetes_validate();
    if found.is_none() {
        tool_missing(
            "kubernetes-validate",
            ".ci/run installs it: python3 -m pip install --user kubernetes-validate==1.37.0",
        );
    }
    found
}

/// The Python that runs kubernetes-validate (its script's `#!` line), which has PyYAML.
fn python_of(script: &Path) -> Command {
    let text = std::fs::read_to_string(script).unwrap();
    let shebang = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("#!"))
        .expect("a #! line");
    let mut words = shebang.split_whitespace();
    let mut c = Command::new(words.next().unwrap());
    c.args(words);
    c
}

/// Every YAML document of `yaml`, read by PyYAML (YAML 1.1), as JSON.
fn pyyaml_documents(tool: &Path, yaml: &str) -> Vec<Value> {
    let dir = tmpdir("k8s-yaml");
    let file = dir.join("objects.yaml");
    std::fs::write(&file, yaml).unwrap();
    let o = python_of(tool)
        .args([
            "-c",
            "import json, sys, yaml\nprint(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1], encoding='utf-8')) if d is not None]))",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "PyYAML: {}\n{yaml}", stderr(&o));
    serde_json::from_slice::<Vec<Value>>(&o.stdout).unwrap()
}

#[test]
fn rendered_objects_pass_kubernetes_validate_strict() {
    let Some(tool) = validator() else { return };
    let mut owned = r1_flags();
    owned.extend(["--owner-uid", UID]);
    let mut optional = r1_flags();
    optional.extend([
        "--port",
        "8080",
        "--service-account",
        "loadgen",
        "--env-from-secret",
        "endpoint-key",
        "--env-from-secret",
        "hf-token",
        "--active-deadline-seconds",
        "7200",
        "--worker-cpu",
        "500m",
        "--worker-memory",
        "512Mi",
        "--ttl-seconds",
        "0",
        "--results-pvc",
        "loadtest-results",
    ]);
    let mut workers_only = r1_flags();
    workers_only.extend(["--only", "workers"]);
    let cases: Vec<(&str, Vec<&str>, usize)> = vec![
        ("owned", with_command(&owned, &SWEEP), 4),
        ("no --owner-uid", with_command(&r1_flags(), &SWEEP), 4),
        ("--only workers", workers_only, 3),
        (
            "--only controller",
            with_command(
                &[&r1_flags()[..], &["--only", "controller"]].concat(),
                &SWEEP,
            ),
            1,
        ),
        (
            "optional flags",
            with_command(&optional, &["search", "--e2e-sla", "p99:8s"]),
            4,
        ),
    ];
    let dir = tmpdir("k8s-validate");
    for (what, args, count) in cases {
        let file = dir.join(format!("{}.yaml", what.replace([' ', '-'], "")));
        std::fs::write(&file, render_yaml(&args)).unwrap();
        for version in K8S_VERSIONS {
            let o = Command::new(&tool)
                .args(["--strict", "-k", version])
                .arg(&file)
                .output()
                .unwrap();
            let out = format!("{}{}", stdout(&o), stderr(&o));
            assert!(o.status.success(), "{what}, Kubernetes {version}: {out}");
            // the tool saw every document
            assert_eq!(
                out.matches(" passed for resource ").count(),
                count,
                "{what}: {out}"
            );
        }
    }
    // and the tool does fail: an unknown field in strict mode
    let bad = dir.join("bad.yaml");
    let text = render_yaml(&with_command(&owned, &SWEEP)).replace(
        "  completionMode: \"Indexed\"\n",
        "  completionMode: \"Indexed\"\n  completionsMode: \"Indexed\"\n",
    );
    std::fs::write(&bad, text).unwrap();
    let o = Command::new(&tool)
        .args(["--strict", "-k", K8S_VERSIONS[0]])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!o.status.success(), "{}", stdout(&o));
}

#[test]
fn the_yaml_reads_back_as_the_json_objects() {
    let Some(tool) = validator() else { return };
    let mut owned = r1_flags();
    owned.extend(["--owner-uid", UID]);
    let awkward = [
        "sweep",
        "--model",
        "on",
        "-c",
        "0",
        "--header",
        "X-A: yes # no",
        "--tag",
        "null",
    ];
    for args in [
        with_command(&owned, &SWEEP),
        with_command(&r1_flags(), &awkward),
        with_command(
            &[&r1_flags()[..], &["--only", "controller"]].concat(),
            &awkward,
        ),
    ] {
        let yaml = render_yaml(&args);
        assert_eq!(
            pyyaml_documents(&tool, &yaml),
            render_objects(&args),
            "{yaml}"
        );
    }
}

#[test]
fn the_yaml_writer_quotes_what_a_reader_would_retype() {
    use rightsize::k8s::yaml::to_yaml;
    // exact text for the cases Kubernetes objects meet
    assert_eq!(
        to_yaml(
            &json!({"cpu": "1", "memory": "1Gi", "on": "on", "n": 3, "replicas": 3, "empty": {}, "none": []})
        ),
        "cpu: \"1\"\nempty: {}\nmemory: \"1Gi\"\n\"n\": 3\nnone: []\n\"on\": \"on\"\nreplicas: 3\n"
    );
    assert_eq!(
        to_yaml(&json!({"a": [{"b": 1, "c": ["x", "y"]}, [1, [2]]]})),
        "a:\n  - b: 1\n    c:\n      - \"x\"\n      - \"y\"\n  - - 1\n    - - 2\n"
    );
    assert_eq!(to_yaml(&json!("multi\nline")), "\"multi\\nline\"\n");
    assert_eq!(to_yaml(&json!(1e300)), "1.0e+300\n");

    // everything awkward, read back by a YAML 1.1 reader
    let Some(tool) = validator() else { return };
    let awkward = json!({
        "strings": ["0", "007", "on", "off", "yes", "No", "y", "~", "null", "true", "1Gi", "1e3",
            "0x1F", "1:20", "2001-12-14", ".inf", "", " lead", "trail ", "a: b", "- x", "#c",
            "&anchor", "*alias", "!tag", "%dir", "@at", "`tick", "|", ">", "'single'",
            "\"double\"", "back\\slash", "multi\nline\r\n", "tab\tin", "\u{7}bell", "\u{7f}del",
            "\u{85}nel", "\u{2028}ls\u{2029}ps", "\u{feff}bom", "é😀", "{a: 1}", "[1]"],
        "keys": {"on": 1, "Y": 2, "NULL": 3, "1": 4, "": 5, "a b": 6, "x:y": 7, "<<": 8,
            "app.kubernetes.io/name": 9, "-dash": 10, "~": 11, "é": 12},
        "numbers": [0, -1, 1.5, 1e300, -2.5e-7, 18446744073709551615u64],
        "others": [true, false, null, {}, [], [[]], [{}], {"a": {"b": {"c": []}}}],
    });
    let yaml = to_yaml(&awkward);
    assert_eq!(pyyaml_documents(&tool, &yaml), [awkward], "{yaml}");
}

/// A credential in the command would land in the Job's args, readable by anyone who can read
/// the Job: a password in a URL and a header that carries one are refused, naming the
/// Secret as the place (it used to copy them in plain text without a word).
#[test]
fn a_secret_in_the_command_is_refused_for_the_secret() {
    for (command, says) in [
        (
            vec!["sweep", "--endpoint", "http://alice:PW@h:8000/v1"],
            "a URL with a password or token in it (`http://alice:***@h:8000/v1`)",
        ),
        (
            vec!["sweep", "--endpoint=http://h:8000/v1?api_key=K1"],
            "a URL with a password or token in it",
        ),
        (
            vec![
                "sweep",
                "--endpoint",
                "http://h/v1",
                "--header",
                "Authorization: Bearer T",
            ],
            "sends a `Authorization` header",
        ),
        (
            vec!["sweep", "--endpoint", "http://h/v1", "-H", "X-Api-Key: K2"],
            "sends a `X-Api-Key` header",
        ),
        // a short flag's value glued on (benches/hostile_probe.sh found these copied in)
        (
            vec!["sweep", "-ehttp://alice:PW@h:8000/v1"],
            "a URL with a password or token in it (`http://alice:***@h:8000/v1`)",
        ),
        (
            vec!["sweep", "-e=http://alice:PW@h:8000/v1"],
            "a URL with a password or token in it (`http://alice:***@h:8000/v1`)",
        ),
        (
            vec!["sweep", "-e", "http://h/v1", "-HX-Api-Key: K2"],
            "sends a `X-Api-Key` header",
        ),
    ] {
        let o = render_with(&with_command(&r1_flags(), &command), Some(TOKEN));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{command:?}: {err}");
        assert!(err.contains(says), "{command:?}: {err}");
        assert!(err.contains("--env-from-secret"), "{command:?}: {err}");
        for secret in ["PW", "K1", "Bearer T", "K2"] {
            assert!(!stdout(&o).contains(secret) && !err.contains(&format!(" {secret}")));
        }
    }
    // a header that carries nothing secret goes through
    let yaml = render_yaml(&with_command(
        &r1_flags(),
        &["sweep", "--endpoint", "http://h/v1", "-H", "X-Trace: 1"],
    ));
    assert!(yaml.contains("X-Trace: 1"));
}
