//! The Kubernetes objects of a distributed run (`rightsize k8s render`, docs/distributed.md,
//! "On Kubernetes"): a Secret with the run's token, the controller Job and its Service, and an
//! Indexed Job of workers. Pure: a [`RenderSpec`] in, `serde_json::Value` objects and their
//! YAML (or a `v1` List as JSON) out. A leaf: the caller hands in the token and the name of
//! the variable that carries it, so nothing of the crate is imported.
//!
//! Names: the controller Job and its Service are `NAME`, the Secret `NAME-token`, the worker
//! Job `NAME-workers`. Every object carries `app.kubernetes.io/name: rightsize`,
//! `app.kubernetes.io/instance: NAME` and `app.kubernetes.io/component: controller|worker`;
//! the Service selects the controller's pod by all three.

pub mod yaml;

use serde_json::{json, Value};

/// The flags the controller gets from the render; a trailing command may not set them.
pub const RENDERED_FLAGS: [&str; 4] = [
    "--workers",
    "--worker-backend",
    "--controller-listen",
    "--serve",
];

/// The commands that can be distributed.
pub const DISTRIBUTED_COMMANDS: [&str; 2] = ["sweep", "search"];

/// Where the controller's pod mounts the results volume (`--results-pvc`), passed as `--out`.
pub const RESULTS_DIR: &str = "/results";

/// Kubernetes' limit on an Indexed Job's completions.
pub const MAX_WORKERS: u32 = 100_000;

/// The longest `--name`: the worker Job is `NAME-workers`, and its pods' hostnames
/// `NAME-workers-INDEX` must stay a DNS label (63 characters).
pub const MAX_NAME_LEN: usize = 40;

/// Which objects to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Only {
    /// Every object.
    All,
    /// The controller Job alone (step one of the owned flow).
    Controller,
    /// The Secret, the Service and the worker Job (step two).
    Workers,
}

/// CPU and memory of one pod's container: requests and limits alike.
#[derive(Debug, Clone)]
pub struct Resources {
    pub cpu: String,
    pub memory: String,
}

/// Everything the objects are made from.
#[derive(Debug, Clone)]
pub struct RenderSpec {
    pub name: String,
    pub namespace: String,
    pub image: String,
    pub workers: u32,
    pub port: u16,
    /// The port the controller serves the run on (`--serve`: its events for `rightsize
    /// watch`, `/metrics` for Prometheus).
    pub serve_port: u16,
    pub controller: Resources,
    pub worker: Resources,
    /// `ttlSecondsAfterFinished` of both Jobs.
    pub ttl_seconds: u32,
    /// `activeDeadlineSeconds` of both Jobs.
    pub active_deadline_seconds: Option<u64>,
    pub service_account: Option<String>,
    /// Secrets whose every key becomes an environment variable of both pods (`envFrom`).
    pub env_from_secrets: Vec<String>,
    /// The controller Job's uid: the other objects name it as their owner.
    pub owner_uid: Option<String>,
    pub only: Only,
    /// The command to distribute: `sweep|search ARGS...` (empty with
    /// [`Only::Workers`], which does not print the controller).
    pub command: Vec<String>,
    /// A PersistentVolumeClaim the controller keeps its results folder on (mounted at
    /// [`RESULTS_DIR`], which the command gets as `--out`).
    pub results_pvc: Option<String>,
    /// The workers' `--connect-timeout`.
    pub worker_connect_timeout: String,
    /// The variable the token is read from, in both pods.
    pub token_env: String,
    /// The variable a served run reads its token from (`--serve`, docs/watch.md): the
    /// controller gets the run's token in it too.
    pub serve_token_env: String,
    /// The token the Secret holds (needed when the Secret is printed).
    pub token: Option<String>,
    /// The render's own flags as given (without `--only`, `--owner-uid` and `--output`),
    /// shell-quoted or not: the comment at the top repeats them in the two-step commands.
    pub render_flags: Vec<String>,
}

/// The flag-free checks of a trailing command: it starts with a command that can be
/// distributed, and sets none of the flags the render adds.
pub fn check_command(command: &[String]) -> Result<(), String> {
    let Some(first) = command.first() else {
        return Err(
            "no command to distribute: add `-- sweep|search ARGS...` after the flags".into(),
        );
    };
    if !DISTRIBUTED_COMMANDS.contains(&first.as_str()) {
        return Err(format!(
            "`{first}` cannot be distributed: the command after `--` must be sweep or search (a campaign needs its file on the controller's disk, which render does not mount)"
        ));
    }
    for arg in &command[1..] {
        if arg == "--" {
            return Err(
                "the command after `--` holds another `--`: render appends its flags to the command, which would then be positional arguments"
                    .into(),
            );
        }
        let flag = arg.split_once('=').map_or(arg.as_str(), |(f, _)| f);
        if RENDERED_FLAGS.contains(&flag) {
            return Err(format!(
                "the command after `--` sets {flag}: render sets --workers, --worker-backend, --controller-listen and --serve itself (use render's --workers N and --serve-port PORT)"
            ));
        }
    }
    Ok(())
}

/// Whether `s` is an RFC 1123 DNS label: at most 63 lowercase letters, digits and `-`,
/// starting and ending with a letter or digit.
pub fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// Whether `s` is an RFC 1123 DNS subdomain: dot-separated labels, at most 253 characters
/// (the names of Secrets and service accounts).
pub fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// Checks a render's `--name`: a DNS label that starts with a letter (the Service's name is
/// an RFC 1035 label) and leaves room for `-workers-INDEX`.
pub fn check_name(s: &str) -> Result<(), String> {
    if is_dns_label(s) && s.starts_with(|c: char| c.is_ascii_lowercase()) && s.len() <= MAX_NAME_LEN
    {
        Ok(())
    } else {
        Err(format!(
            "`{s}` is not a valid name: use at most {MAX_NAME_LEN} lowercase letters, digits and '-', starting with a letter and ending with a letter or digit (a DNS label, RFC 1123)"
        ))
    }
}

/// Checks a Kubernetes quantity (`500m`, `1.5`, `2Gi`, `1e3`) above zero.
pub fn check_quantity(s: &str) -> Result<(), String> {
    let bad =
        || format!("`{s}` is not a Kubernetes quantity above zero (use e.g. 500m, 2, 512Mi, 2Gi)");
    let digits_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(digits_end);
    let one_dot = num.matches('.').count() <= 1;
    let value: f64 = num.parse().map_err(|_| bad())?;
    let suffix_ok = match suffix {
        "" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => true,
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => true,
        e => {
            let exp = e.strip_prefix(['e', 'E']).unwrap_or("x");
            let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
            !exp.is_empty() && exp.bytes().all(|b| b.is_ascii_digit())
        }
    };
    if one_dot && suffix_ok && value > 0.0 {
        Ok(())
    } else {
        Err(bad())
    }
}

/// Checks a uid as the API server writes one (a UUID: 8-4-4-4-12 hex digits).
pub fn check_uid(s: &str) -> Result<(), String> {
    let groups: Vec<&str> = s.split('-').collect();
    let ok = groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{s}` is not a uid: pass the controller Job's, from kubectl get job NAME -o jsonpath='{{.metadata.uid}}'"
        ))
    }
}

/// The labels of one component's objects.
fn labels(spec: &RenderSpec, component: &str) -> Value {
    json!({
        "app.kubernetes.io/name": "rightsize",
        "app.kubernetes.io/instance": spec.name,
        "app.kubernetes.io/component": component,
    })
}

/// The Secret's name.
pub fn secret_name(spec: &RenderSpec) -> String {
    format!("{}-token", spec.name)
}

/// The worker Job's name.
pub fn workers_name(spec: &RenderSpec) -> String {
    format!("{}-workers", spec.name)
}

/// The URL workers reach the controller at: the Service's name in its namespace (the pods'
/// DNS search path completes it with the cluster's domain, whatever that is).
pub fn controller_url(spec: &RenderSpec) -> String {
    format!("http://{}.{}.svc:{}", spec.name, spec.namespace, spec.port)
}

/// An object's metadata; owned by the controller Job when its uid is known.
fn metadata(spec: &RenderSpec, name: &str, component: &str, owned: bool) -> Value {
    let mut m = json!({
        "name": name,
        "namespace": spec.namespace,
        "labels": labels(spec, component),
    });
    if let (true, Some(uid)) = (owned, &spec.owner_uid) {
        m["ownerReferences"] = json!([{
            "apiVersion": "batch/v1",
            "kind": "Job",
            "name": spec.name,
            "uid": uid,
            "blockOwnerDeletion": true,
        }]);
    }
    m
}

/// A container's environment: the token from the Secret.
fn token_env_var(spec: &RenderSpec) -> Value {
    json!([{
        "name": spec.token_env,
        "valueFrom": {"secretKeyRef": {"name": secret_name(spec), "key": "token"}},
    }])
}

/// A pod spec around one container.
fn pod_spec(spec: &RenderSpec, mut container: Value, res: &Resources) -> Value {
    let quantities = json!({"cpu": res.cpu, "memory": res.memory});
    container["resources"] = json!({"requests": quantities, "limits": quantities});
    container["env"] = token_env_var(spec);
    if !spec.env_from_secrets.is_empty() {
        container["envFrom"] = spec
            .env_from_secrets
            .iter()
            .map(|s| json!({"secretRef": {"name": s}}))
            .collect();
    }
    let mut pod = json!({
        "restartPolicy": "Never",
        // rightsize never calls the Kubernetes API
        "automountServiceAccountToken": false,
        "containers": [container],
    });
    if let Some(sa) = &spec.service_account {
        pod["serviceAccountName"] = json!(sa);
    }
    pod
}

/// A Job's spec around its pod template.
fn job_spec(spec: &RenderSpec, component: &str, pod: Value) -> Value {
    let mut js = json!({
        // a failed pod is not retried: the run's levels cannot take a second copy of a share
        "backoffLimit": 0,
        "ttlSecondsAfterFinished": spec.ttl_seconds,
        "template": {
            "metadata": {"labels": labels(spec, component)},
            "spec": pod,
        },
    });
    if let Some(d) = spec.active_deadline_seconds {
        js["activeDeadlineSeconds"] = json!(d);
    }
    js
}

/// The Secret holding the run's token.
pub fn secret(spec: &RenderSpec, token: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": metadata(spec, &secret_name(spec), "controller", true),
        "type": "Opaque",
        // a second render has another token: applying it over a running run fails instead
        // of handing new pods a token the controller does not hold
        "immutable": true,
        "stringData": {"token": token},
    })
}

/// The controller Job: the command plus the flags that make it serve its workers (and keep
/// its results on the volume, when there is one).
pub fn controller_job(spec: &RenderSpec) -> Value {
    let mut args = spec.command.clone();
    args.extend([
        "--workers".to_string(),
        spec.workers.to_string(),
        "--worker-backend".into(),
        "external".into(),
        "--controller-listen".into(),
        format!("0.0.0.0:{}", spec.port),
        "--serve".into(),
        format!("0.0.0.0:{}", spec.serve_port),
    ]);
    if spec.results_pvc.is_some() {
        args.extend(["--out".to_string(), RESULTS_DIR.to_string()]);
    }
    let mut container = json!({
        "name": "controller",
        "image": spec.image,
        "command": ["rightsize"],
        "args": args,
        "ports": [
            {"name": "http", "containerPort": spec.port, "protocol": "TCP"},
            {"name": "serve", "containerPort": spec.serve_port, "protocol": "TCP"},
        ],
        "readinessProbe": {
            "httpGet": {"path": "/healthz", "port": "http"},
            "periodSeconds": 2,
            "failureThreshold": 3,
        },
    });
    let volume = "results";
    if spec.results_pvc.is_some() {
        container["volumeMounts"] = json!([{"name": volume, "mountPath": RESULTS_DIR}]);
    }
    let mut pod = pod_spec(spec, container, &spec.controller);
    // the run is served beyond loopback: with the run's token, from the same Secret
    if let Some(env) = pod["containers"][0]["env"].as_array_mut() {
        env.push(json!({
            "name": spec.serve_token_env,
            "valueFrom": {"secretKeyRef": {"name": secret_name(spec), "key": "token"}},
        }));
    }
    if let Some(claim) = &spec.results_pvc {
        pod["volumes"] = json!([{"name": volume, "persistentVolumeClaim": {"claimName": claim}}]);
    }
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(spec, &spec.name, "controller", false),
        "spec": job_spec(spec, "controller", pod),
    })
}

/// The Service in front of the controller's pod.
pub fn service(spec: &RenderSpec) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(spec, &spec.name, "controller", true),
        "spec": {
            "type": "ClusterIP",
            "selector": labels(spec, "controller"),
            "ports": [
                {"name": "http", "port": spec.port, "targetPort": "http", "protocol": "TCP"},
                {"name": "serve", "port": spec.serve_port, "targetPort": "serve", "protocol": "TCP"},
            ],
        },
    })
}

/// The Indexed Job of workers. Kubernetes sets `JOB_COMPLETION_INDEX` in each pod of an
/// Indexed Job (0 to N-1), which `rightsize worker` reads as its `--index`.
pub fn worker_job(spec: &RenderSpec) -> Value {
    let container = json!({
        "name": "worker",
        "image": spec.image,
        "command": ["rightsize"],
        "args": [
            "worker",
            "--controller", controller_url(spec),
            "--connect-timeout", spec.worker_connect_timeout,
        ],
    });
    let mut js = job_spec(spec, "worker", pod_spec(spec, container, &spec.worker));
    js["completionMode"] = json!("Indexed");
    js["completions"] = json!(spec.workers);
    js["parallelism"] = json!(spec.workers);
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(spec, &workers_name(spec), "worker", true),
        "spec": js,
    })
}

/// The objects `spec.only` asks for, in the order they are best applied: the Secret first
/// (a pod whose Secret does not exist yet waits for it), the controller Job, its Service,
/// the workers.
pub fn objects(spec: &RenderSpec) -> Vec<Value> {
    let mut out = Vec::new();
    if spec.only != Only::Controller {
        let token = spec
            .token
            .as_deref()
            .expect("a token when the Secret is printed");
        out.push(secret(spec, token));
    }
    if spec.only != Only::Workers {
        out.push(controller_job(spec));
    }
    if spec.only != Only::Controller {
        out.push(service(spec));
        out.push(worker_job(spec));
    }
    out
}

/// The objects as one `v1` List (what `--output json` prints; kubectl applies it too).
pub fn list(spec: &RenderSpec) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "items": objects(spec)})
}

/// The objects as multi-document YAML, after a comment that says how to apply them.
pub fn render_yaml(spec: &RenderSpec) -> String {
    let mut out = header(spec);
    for obj in objects(spec) {
        out.push_str("---\n");
        out.push_str(&yaml::to_yaml(&obj));
    }
    out
}

/// The comment at the top: what the objects are, how to apply them with owner references,
/// how to clean up.
fn header(spec: &RenderSpec) -> String {
    let ns = &spec.namespace;
    let name = &spec.name;
    let flags = spec.render_flags.join(" ");
    let flags = if flags.is_empty() {
        String::new()
    } else {
        format!(" {flags}")
    };
    let command = if spec.command.is_empty() {
        "sweep|search ARGS...".to_string()
    } else {
        spec.command
            .iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let step1 = format!(
        "#   rightsize k8s render{flags} --only controller -- {command} | kubectl apply -f -"
    );
    let get_uid =
        format!("#   OWNER=$(kubectl get job {name} -n {ns} -o jsonpath='{{.metadata.uid}}')");
    let step2 = format!(
        "#   rightsize k8s render{flags} --only workers --owner-uid \"$OWNER\" | kubectl apply -f -"
    );
    let cleanup =
        format!("#   kubectl delete job,svc,secret -n {ns} -l app.kubernetes.io/instance={name}");
    let mut lines = vec![format!(
        "# rightsize k8s render: distributed run {name} in namespace {ns}, {} worker(s).",
        spec.workers
    )];
    match (spec.only, &spec.owner_uid) {
        (Only::Controller, _) => lines.extend([
            "# Step one of two: the controller Job. Its pod waits for the Secret of step two.".into(),
            "# Step two: the Secret, Service and worker Job, owned by this Job (deleted with it):".into(),
            get_uid,
            step2,
        ]),
        (_, Some(uid)) => lines.push(format!(
            "# The Secret, Service and worker Job are owned by Job {name} (uid {uid}): deleting it deletes them."
        )),
        (_, None) => lines.extend([
            "# These objects carry no ownerReferences: deleting the controller Job leaves the others.".into(),
            "# To have them deleted with it, apply in two steps instead:".into(),
            step1,
            get_uid,
            step2,
            "# Either way, the labels clean everything up:".into(),
            cleanup,
        ]),
    }
    lines.push(String::new());
    lines.join("\n")
}

/// An argument as a POSIX shell reads it back: bare when it holds only safe characters,
/// single-quoted otherwise, and `$'...'` when it holds a control character (which must not
/// end the comment line it is written in).
pub fn shell_quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else if s.chars().any(breaks_line) {
        let mut q = String::from("$'");
        for c in s.chars() {
            match c {
                '\\' => q.push_str("\\\\"),
                '\'' => q.push_str("\\'"),
                '\n' => q.push_str("\\n"),
                '\t' => q.push_str("\\t"),
                '\r' => q.push_str("\\r"),
                c if breaks_line(c) && (c as u32) < 0x100 => {
                    q.push_str(&format!("\\x{:02x}", c as u32))
                }
                c if breaks_line(c) => q.push_str(&format!("\\u{:04x}", c as u32)),
                c => q.push(c),
            }
        }
        q.push('\'');
        q
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Whether a character must not be written raw in a comment line: a control character, or one
/// a YAML 1.1 reader takes for a line break (NEL is a control character; LS and PS are not).
fn breaks_line(c: char) -> bool {
    c.is_control() || c == '\u{2028}' || c == '\u{2029}'
}
