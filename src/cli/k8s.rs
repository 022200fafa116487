//! `rightsize k8s render [FLAGS] -- sweep|search ARGS...`: the Kubernetes objects of a
//! distributed run, printed for `kubectl apply -f -` (`k8s`, docs/distributed.md, "On
//! Kubernetes"). The flags are checked here, each message naming its flag; the objects are
//! made by `crate::k8s`, which is handed the token so that it imports nothing.

use crate::headless::exit::BadInput;
use crate::k8s::{self, Only, RenderSpec, Resources};
use clap::{Args, Subcommand, ValueEnum};
use std::process::ExitCode;

/// The `k8s` commands.
#[derive(Debug, Clone, Subcommand)]
pub enum K8sCommand {
    /// Print the Kubernetes objects of a distributed run (a Secret with the run's token, the
    /// controller Job and its Service, an Indexed Job of workers) as YAML for
    /// `kubectl apply -f -`
    #[command(after_help = RENDER_AFTER_HELP)]
    Render(RenderArgs),
}

const RENDER_AFTER_HELP: &str = "\
Examples:
  # everything at once (no owner references: clean up by label, see the comment printed first)
  rightsize k8s render --workers 4 --image registry.example/rightsize:0.1.0 \\
      -- sweep -e http://vllm.llm.svc:8000/v1 -c 64,256,1024 -n 512 | kubectl apply -f -

  # two steps: the Secret, Service and workers owned by the controller Job, so that deleting
  # the controller (or its ttlSecondsAfterFinished running out) deletes them too
  rightsize k8s render --name r1 --workers 4 --only controller -- sweep -c 64,256 \\
      | kubectl apply -f -
  OWNER=$(kubectl get job r1 -o jsonpath='{.metadata.uid}')
  rightsize k8s render --name r1 --workers 4 --only workers --owner-uid \"$OWNER\" \\
      | kubectl apply -f -

  kubectl logs -f job/r1          # the controller's progress and table
  kubectl delete job,svc,secret -l app.kubernetes.io/instance=r1

The token is RIGHTSIZE_WORKER_TOKEN when set, else a fresh random one; it is written only in
the Secret. docs/distributed.md, \"On Kubernetes\", says more.";

const PORT: u16 = 7077;
/// The port the controller serves the run on for watchers and Prometheus.
const SERVE_PORT: u16 = 9464;
const CONTROLLER_CPU: &str = "1";
const CONTROLLER_MEMORY: &str = "1Gi";
const WORKER_CPU: &str = "2";
const WORKER_MEMORY: &str = "2Gi";
const TTL_SECONDS: u32 = 3600;
const CONNECT_TIMEOUT: &str = "5m";

/// Which objects `--only` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnlyArg {
    /// The Secret, the controller Job, its Service and the worker Job
    All,
    /// The controller Job alone (step one: its uid is then known)
    Controller,
    /// The Secret, the Service and the worker Job (step two, with --owner-uid)
    Workers,
}

/// What `--output` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputArg {
    /// Multi-document YAML after a comment that says how to apply it
    Yaml,
    /// One JSON `v1` List holding the objects
    Json,
}

/// Flags of `rightsize k8s render`.
#[derive(Debug, Clone, Args)]
pub struct RenderArgs {
    /// Name of the run: the controller Job and its Service (the Secret is NAME-token, the
    /// worker Job NAME-workers), and the app.kubernetes.io/instance label
    #[arg(long, value_name = "NAME", default_value = "rightsize")]
    pub name: String,
    /// Namespace of every object
    #[arg(long, value_name = "NAMESPACE", default_value = "default")]
    pub namespace: String,
    /// Container image with `rightsize` on its PATH (none is published: build the repository's
    /// Containerfile and push it, or load it into the cluster; docs/distributed.md)
    #[arg(long, value_name = "IMAGE", default_value = concat!("rightsize:", env!("CARGO_PKG_VERSION")))]
    pub image: String,
    /// Number of workers: the worker Job's parallelism and completions, and the controller's
    /// --workers
    #[arg(long, value_name = "N", value_parser = crate::values::parse_positive)]
    pub workers: u32,
    /// Port the controller serves its workers on (container port and Service port)
    #[arg(long, value_name = "PORT", default_value_t = PORT, value_parser = clap::value_parser!(u16).range(1..))]
    pub port: u16,
    /// Port the controller serves the run on (its --serve: `rightsize watch`, /metrics for
    /// Prometheus; container port and Service port `serve`), with the run's token
    #[arg(long, value_name = "PORT", default_value_t = SERVE_PORT, value_parser = clap::value_parser!(u16).range(1..))]
    pub serve_port: u16,
    /// CPU of the controller's pod (request and limit)
    #[arg(long, value_name = "QUANTITY", default_value = CONTROLLER_CPU)]
    pub controller_cpu: String,
    /// Memory of the controller's pod (request and limit)
    #[arg(long, value_name = "QUANTITY", default_value = CONTROLLER_MEMORY)]
    pub controller_memory: String,
    /// CPU of each worker's pod (request and limit)
    #[arg(long, value_name = "QUANTITY", default_value = WORKER_CPU)]
    pub worker_cpu: String,
    /// Memory of each worker's pod (request and limit)
    #[arg(long, value_name = "QUANTITY", default_value = WORKER_MEMORY)]
    pub worker_memory: String,
    /// Seconds after a Job finishes before Kubernetes deletes it (ttlSecondsAfterFinished of
    /// both Jobs)
    #[arg(long, value_name = "SECONDS", default_value_t = TTL_SECONDS, value_parser = clap::value_parser!(u32).range(0..=i64::from(i32::MAX)))]
    pub ttl_seconds: u32,
    /// Seconds a Job may run before Kubernetes stops it (activeDeadlineSeconds of both Jobs;
    /// default: no limit)
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub active_deadline_seconds: Option<u64>,
    /// Service account of both pods (for a cloud identity such as EKS IRSA; rightsize needs
    /// no Kubernetes RBAC, and the pods do not mount its API token)
    #[arg(long, value_name = "NAME")]
    pub service_account: Option<String>,
    /// A Secret whose every key becomes an environment variable of both pods, e.g. the one
    /// holding the variable --api-key-env names (repeatable)
    #[arg(long, value_name = "SECRET")]
    pub env_from_secret: Vec<String>,
    /// A PersistentVolumeClaim to keep the results folder on: mounted at /results in the
    /// controller's pod, whose command gets --out /results (default: the folder stays in the
    /// pod and is lost with it; the table is in its log)
    #[arg(long, value_name = "CLAIM")]
    pub results_pvc: Option<String>,
    /// How long a worker tries to reach the controller before it gives up (its
    /// --connect-timeout): long enough for the controller's pod to be scheduled and pulled
    #[arg(long, value_name = "DURATION", default_value = CONNECT_TIMEOUT)]
    pub worker_connect_timeout: String,
    /// The controller Job's uid: the Secret, Service and worker Job then name it as their
    /// owner, so that deleting the controller Job deletes them
    #[arg(long, value_name = "UID")]
    pub owner_uid: Option<String>,
    /// Which objects to print: all, the controller Job, or the rest (for the two-step flow
    /// with --owner-uid)
    #[arg(long, value_enum, value_name = "WHICH", default_value = "all")]
    pub only: OnlyArg,
    /// Output format (JSON: a v1 List, which kubectl applies too)
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "yaml")]
    pub output: OutputArg,
    /// The command the controller runs: sweep or search and its flags (not needed
    /// with --only workers)
    #[arg(last = true, value_name = "sweep|search ARGS")]
    pub command: Vec<String>,
}

/// Runs a `k8s` command.
pub fn execute(cmd: K8sCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        K8sCommand::Render(args) => render(args),
    }
}

fn render(args: RenderArgs) -> anyhow::Result<ExitCode> {
    let spec = spec(&args).map_err(BadInput)?;
    match args.output {
        OutputArg::Yaml => print!("{}", k8s::render_yaml(&spec)),
        OutputArg::Json => println!("{}", serde_json::to_string_pretty(&k8s::list(&spec))?),
    }
    Ok(ExitCode::SUCCESS)
}

/// The flags checked and made into a spec; the message names the flag that is wrong.
fn spec(args: &RenderArgs) -> Result<RenderSpec, String> {
    k8s::check_name(&args.name).map_err(|e| format!("--name: {e}"))?;
    if !k8s::is_dns_label(&args.namespace) {
        return Err(format!(
            "--namespace: `{}` is not a namespace name (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)",
            args.namespace
        ));
    }
    if args.image.is_empty() || args.image.chars().any(char::is_whitespace) {
        return Err(format!(
            "--image: `{}` is not an image reference",
            args.image
        ));
    }
    if args.serve_port == args.port {
        return Err(format!(
            "--serve-port: {} is --port's too: the controller serves its workers on one port \
             and the run on another",
            args.serve_port
        ));
    }
    if args.workers > k8s::MAX_WORKERS {
        return Err(format!(
            "--workers: {} is more than an Indexed Job runs (at most {})",
            args.workers,
            k8s::MAX_WORKERS
        ));
    }
    for (flag, value) in [
        ("--controller-cpu", &args.controller_cpu),
        ("--controller-memory", &args.controller_memory),
        ("--worker-cpu", &args.worker_cpu),
        ("--worker-memory", &args.worker_memory),
    ] {
        k8s::check_quantity(value).map_err(|e| format!("{flag}: {e}"))?;
    }
    let names = args
        .service_account
        .iter()
        .map(|s| ("--service-account", s))
        .chain(
            args.env_from_secret
                .iter()
                .map(|s| ("--env-from-secret", s)),
        )
        .chain(args.results_pvc.iter().map(|s| ("--results-pvc", s)));
    for (flag, value) in names {
        if !k8s::is_dns_subdomain(value) {
            return Err(format!(
                "{flag}: `{value}` is not a Kubernetes object name (lowercase letters, digits, '-' and '.')"
            ));
        }
    }
    crate::values::parse_timeout(&args.worker_connect_timeout)
        .map_err(|e| format!("--worker-connect-timeout: {e}"))?;
    let only = match args.only {
        OnlyArg::All => Only::All,
        OnlyArg::Controller => Only::Controller,
        OnlyArg::Workers => Only::Workers,
    };
    if let Some(uid) = &args.owner_uid {
        k8s::check_uid(uid).map_err(|e| format!("--owner-uid: {e}"))?;
        if only == Only::Controller {
            return Err(
                "--owner-uid: --only controller prints the controller Job alone, which has no owner; pass the uid with --only workers"
                    .into(),
            );
        }
    }
    // the workers' objects do not need the command; when given it is checked all the same
    if only != Only::Workers || !args.command.is_empty() {
        k8s::check_command(&args.command)?;
        no_secret_in_args(&args.command)?;
    }
    let sets_out = |a: &String| a == "--out" || a.starts_with("--out=");
    if args.results_pvc.is_some() && args.command.iter().any(sets_out) {
        return Err(format!(
            "--results-pvc: the command after `--` sets --out, which --results-pvc sets to {}",
            k8s::RESULTS_DIR
        ));
    }
    let token = if only == Only::Controller {
        None
    } else {
        Some(token_from_env()?)
    };
    Ok(RenderSpec {
        name: args.name.clone(),
        namespace: args.namespace.clone(),
        image: args.image.clone(),
        workers: args.workers,
        port: args.port,
        serve_port: args.serve_port,
        controller: Resources {
            cpu: args.controller_cpu.clone(),
            memory: args.controller_memory.clone(),
        },
        worker: Resources {
            cpu: args.worker_cpu.clone(),
            memory: args.worker_memory.clone(),
        },
        ttl_seconds: args.ttl_seconds,
        active_deadline_seconds: args.active_deadline_seconds,
        service_account: args.service_account.clone(),
        env_from_secrets: args.env_from_secret.clone(),
        owner_uid: args.owner_uid.clone(),
        only,
        command: args.command.clone(),
        results_pvc: args.results_pvc.clone(),
        worker_connect_timeout: args.worker_connect_timeout.clone(),
        token_env: crate::secrets::WORKER_TOKEN_ENV.to_string(),
        serve_token_env: crate::serve::SERVE_TOKEN_ENV.to_string(),
        token,
        render_flags: render_flags(args),
    })
}

/// Refuses a command that would put a credential into the Job's args, where `kubectl get job
/// -o yaml` and every log of the pod spec show it: a password (or token-like user name) in a
/// URL, or a header that carries one. The Secret is the place (`--env-from-secret`, and
/// `--api-key-env` for the endpoint's key).
fn no_secret_in_args(command: &[String]) -> Result<(), String> {
    let fix = "put it in a Secret instead: --env-from-secret NAME gives the pod its variables, \
               and --api-key-env VAR sends one as the endpoint's key";
    let mut args = command.iter().peekable();
    while let Some(arg) = args.next() {
        let (flag, inline) = flag_and_inline_value(arg);
        let value = inline
            .clone()
            .or_else(|| args.peek().map(|v| v.to_string()));
        for v in [Some(arg.clone()), inline.clone()].into_iter().flatten() {
            if crate::secrets::redact_url(&v) != v {
                return Err(format!(
                    "the command after `--` has a URL with a password or token in it \
                     (`{}`): the Job's args are readable by anyone who can read the Job; {fix}",
                    crate::secrets::redact_url(&v)
                ));
            }
        }
        if matches!(flag, "--header" | "-H") {
            if let Some((name, _)) = value.as_deref().and_then(|h| h.split_once(':')) {
                if crate::secrets::is_sensitive(name.trim()) {
                    return Err(format!(
                        "the command after `--` sends a `{}` header: its value would be in the \
                         Job's args, readable by anyone who can read the Job; {fix}",
                        name.trim()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A flag and the value written into the same argument: `--flag=VALUE`, or a short flag's
/// glued `-fVALUE` / `-f=VALUE`, as clap reads them; else the argument as it is, and none.
fn flag_and_inline_value(arg: &str) -> (&str, Option<String>) {
    if arg.starts_with("--") {
        return match arg.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (arg, None),
        };
    }
    let mut chars = arg.char_indices();
    match (chars.next(), chars.next(), chars.next()) {
        (Some((_, '-')), Some((_, c)), Some((at, _))) if c.is_ascii_alphabetic() => {
            let glued = &arg[at..];
            (
                &arg[..at],
                Some(glued.strip_prefix('=').unwrap_or(glued).to_string()),
            )
        }
        _ => (arg, None),
    }
}

/// The token: the environment's when set, else a fresh one.
fn token_from_env() -> Result<String, String> {
    let var = crate::secrets::WORKER_TOKEN_ENV;
    match std::env::var(var) {
        Ok(t) if t.is_empty() => Err(format!(
            "{var} is set but empty: unset it for a fresh random token, or set the token"
        )),
        Ok(t) => Ok(t),
        Err(std::env::VarError::NotPresent) => Ok(crate::secrets::random_token()),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{var} is not UTF-8 text")),
    }
}

/// The flags that make the same objects again, shell-quoted, for the comment's two-step
/// commands: the names always, the rest when not at their defaults.
fn render_flags(args: &RenderArgs) -> Vec<String> {
    let mut flags: Vec<(&str, String)> = vec![
        ("--name", args.name.clone()),
        ("--namespace", args.namespace.clone()),
        ("--image", args.image.clone()),
        ("--workers", args.workers.to_string()),
    ];
    let defaults = [
        ("--port", args.port.to_string(), PORT.to_string()),
        (
            "--serve-port",
            args.serve_port.to_string(),
            SERVE_PORT.to_string(),
        ),
        (
            "--controller-cpu",
            args.controller_cpu.clone(),
            CONTROLLER_CPU.into(),
        ),
        (
            "--controller-memory",
            args.controller_memory.clone(),
            CONTROLLER_MEMORY.into(),
        ),
        ("--worker-cpu", args.worker_cpu.clone(), WORKER_CPU.into()),
        (
            "--worker-memory",
            args.worker_memory.clone(),
            WORKER_MEMORY.into(),
        ),
        (
            "--ttl-seconds",
            args.ttl_seconds.to_string(),
            TTL_SECONDS.to_string(),
        ),
        (
            "--worker-connect-timeout",
            args.worker_connect_timeout.clone(),
            CONNECT_TIMEOUT.into(),
        ),
    ];
    for (flag, value, default) in defaults {
        if value != default {
            flags.push((flag, value));
        }
    }
    if let Some(d) = args.active_deadline_seconds {
        flags.push(("--active-deadline-seconds", d.to_string()));
    }
    if let Some(sa) = &args.service_account {
        flags.push(("--service-account", sa.clone()));
    }
    for s in &args.env_from_secret {
        flags.push(("--env-from-secret", s.clone()));
    }
    if let Some(claim) = &args.results_pvc {
        flags.push(("--results-pvc", claim.clone()));
    }
    flags
        .into_iter()
        .flat_map(|(f, v)| [f.to_string(), k8s::shell_quote(&v)])
        .collect()
}
