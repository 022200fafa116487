//! The setup form: endpoint, workload and plan, each field editable with its validation
//! message beside it. It turns into a [`LaunchRequest`], the same the command line builds, so
//! both surfaces share one launch step. A dashboard opened by `rightsize sweep|search ...`
//! fills the form from the flags and keeps the request as the base the form's fields are laid
//! over: what is not in the form (headers, `--out`, a TPOT SLA, ...) stays as the flags said,
//! the first run and every run after.

use crate::config::overrides::{FleetChoice, SweepOverrides, WorkerBackend};
use crate::config::search::SearchOverrides;
use crate::launch::{LaunchRequest, OpenChoice, PlanChoice};
use crate::plan::capacity::Peak;
use crate::record::sla::{SlaMetric, SlaThreshold};
use crate::values::{parse_concurrency, parse_concurrency_list, parse_positive};

/// How a field is edited.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// Cycle through fixed choices with left/right.
    Choice(Vec<String>),
    /// Cycle through choices with left/right, or type any text (Enter).
    Open(Vec<String>),
    /// Typed text, checked by the field's validator.
    Text,
    /// On or off.
    Toggle,
}

/// Which setting a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldId {
    Mode,
    Endpoint,
    // SageMaker endpoints only (see [`super::setup_sagemaker`])
    Region,
    AwsProfile,
    SageMakerFormat,
    InferenceComponent,
    TargetVariant,
    RequestTemplate,
    TextPointer,
    TokenCountPointer,
    Model,
    Profile,
    InputTokens,
    OutputTokens,
    Stream,
    Concurrency,
    Requests,
    E2eSla,
    TtftSla,
    SearchMin,
    SearchMax,
    MaxIterations,
    PeakConcurrency,
    PricePerHour,
    TimeScale,
    Workers,
}

/// One row of the form.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub id: FieldId,
    pub label: &'static str,
    pub kind: FieldKind,
    pub value: String,
    /// What is wrong with the value, shown beside it.
    pub error: Option<String>,
    pub hint: &'static str,
}

/// The whole form, with the cursor and the text being typed.
#[derive(Debug, Clone)]
pub struct SetupForm {
    pub fields: Vec<Field>,
    pub selected: usize,
    /// `Some(text)` while the selected text field is being edited.
    pub editing: Option<String>,
    /// The request the form's fields are laid over: the command line's, else the demo.
    pub base: LaunchRequest,
    /// Config endpoints of kind `sagemaker` (they show the SageMaker fields, as
    /// `sagemaker:NAME` does).
    pub sagemaker_endpoints: Vec<String>,
}

/// Names offered in the form, read from the config.
#[derive(Debug, Clone, Default)]
pub struct SetupChoices {
    pub endpoints: Vec<String>,
    /// The config's endpoints of kind `sagemaker`.
    pub sagemaker_endpoints: Vec<String>,
    pub profiles: Vec<String>,
    pub default_endpoint: String,
    pub default_profile: String,
    pub default_levels: Vec<u32>,
    pub default_requests: u32,
}

fn choice_value(choices: &[String], default: &str) -> String {
    if choices.iter().any(|c| c == default) {
        default.to_string()
    } else {
        choices.first().cloned().unwrap_or_default()
    }
}

impl SetupForm {
    /// A form filled with the config's defaults.
    pub fn new(c: &SetupChoices) -> Self {
        let levels = c
            .default_levels
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let f = |id, label, kind, value: String, hint| Field {
            id,
            label,
            kind,
            value,
            error: None,
            hint,
        };
        let mut fields = vec![
            f(
                FieldId::Mode,
                "plan",
                FieldKind::Choice(vec!["sweep".into(), "search".into()]),
                "sweep".into(),
                "sweep: fixed levels; search: highest under the SLA",
            ),
            f(
                FieldId::Endpoint,
                "endpoint",
                FieldKind::Open(c.endpoints.clone()),
                choice_value(&c.endpoints, &c.default_endpoint),
                "←→ from config (sim); Enter: a URL or sagemaker:NAME",
            ),
            f(
                FieldId::Model,
                "model",
                FieldKind::Text,
                String::new(),
                "empty = the endpoint's own",
            ),
            f(
                FieldId::Profile,
                "profile",
                FieldKind::Choice(c.profiles.clone()),
                choice_value(&c.profiles, &c.default_profile),
                "workload from the config",
            ),
            f(
                FieldId::InputTokens,
                "input tokens",
                FieldKind::Text,
                String::new(),
                "empty = the profile's",
            ),
            f(
                FieldId::OutputTokens,
                "output tokens",
                FieldKind::Text,
                String::new(),
                "empty = the profile's",
            ),
            f(
                FieldId::Stream,
                "streaming",
                FieldKind::Toggle,
                "on".into(),
                "needed for TTFT",
            ),
            f(
                FieldId::Concurrency,
                "concurrency",
                FieldKind::Text,
                levels,
                "levels, e.g. 16,64,256",
            ),
            f(
                FieldId::Requests,
                "requests/level",
                FieldKind::Text,
                c.default_requests.to_string(),
                "per level",
            ),
            f(
                FieldId::E2eSla,
                "e2e SLA",
                FieldKind::Text,
                String::new(),
                "[stat:]time, p99 default, e.g. 50s",
            ),
            f(
                FieldId::TtftSla,
                "TTFT SLA",
                FieldKind::Text,
                String::new(),
                "[stat:]time, p95 default, e.g. 1.5s",
            ),
            f(
                FieldId::SearchMin,
                "search min",
                FieldKind::Text,
                "16".into(),
                "search: first level",
            ),
            f(
                FieldId::SearchMax,
                "search max",
                FieldKind::Text,
                "4096".into(),
                "search: highest level",
            ),
            f(
                FieldId::MaxIterations,
                "max iterations",
                FieldKind::Text,
                "10".into(),
                "search: most levels",
            ),
            f(
                FieldId::PeakConcurrency,
                "peak concurrency",
                FieldKind::Text,
                String::new(),
                "right-size for it (p on the run screen)",
            ),
            f(
                FieldId::PricePerHour,
                "price / hour",
                FieldKind::Text,
                String::new(),
                "per instance ($ on the run screen)",
            ),
            f(
                FieldId::TimeScale,
                "sim time scale",
                FieldKind::Text,
                String::new(),
                "simulator only; empty = config",
            ),
            f(
                FieldId::Workers,
                "workers",
                FieldKind::Text,
                String::new(),
                "empty = one process; N = N workers",
            ),
        ];
        // the SageMaker fields, under the endpoint (shown for a SageMaker one)
        let at = fields
            .iter()
            .position(|f| f.id == FieldId::Endpoint)
            .map_or(0, |i| i + 1);
        fields.splice(at..at, super::setup_sagemaker::fields());
        SetupForm {
            fields,
            selected: 0,
            editing: None,
            base: LaunchRequest::demo(),
            sagemaker_endpoints: c.sagemaker_endpoints.clone(),
        }
    }

    /// True when row `i` is on the form now (the SageMaker rows only for a SageMaker
    /// endpoint, the custom format's only in that format).
    pub fn shown(&self, i: usize) -> bool {
        self.fields
            .get(i)
            .is_some_and(|f| super::setup_sagemaker::shown(self, f.id))
    }

    /// A form showing what `req` asks for (the command line's flags), keeping `req` as the
    /// base of every run it starts.
    pub fn from_request(c: &SetupChoices, req: &LaunchRequest) -> Self {
        let mut form = SetupForm::new(c);
        let text = |v: Option<String>| v.unwrap_or_default();
        let num = |v: Option<u32>| v.map(|n| n.to_string());
        let sla_text = |m: SlaMetric| {
            req.slas()
                .iter()
                .find(|t| t.metric == m)
                .map(|t| format!("{}:{}ms", t.stat, t.limit))
        };
        let mut set = |id: FieldId, value: Option<String>| {
            if let (Some(f), Some(v)) = (form.fields.iter_mut().find(|f| f.id == id), value) {
                if let FieldKind::Choice(choices) = &mut f.kind {
                    if !choices.contains(&v) {
                        choices.push(v.clone());
                    }
                }
                f.value = v;
            }
        };
        let e = &req.endpoint;
        let w = &req.workload;
        set(FieldId::Endpoint, e.endpoint.clone());
        for (id, value) in super::setup_sagemaker::values(e) {
            set(id, value);
        }
        set(FieldId::Model, Some(text(e.model.clone())));
        set(
            FieldId::TimeScale,
            Some(text(e.sim_time_scale.map(|f| f.to_string()))),
        );
        set(FieldId::Profile, w.profile.clone());
        set(FieldId::InputTokens, Some(text(num(w.input_tokens))));
        set(FieldId::OutputTokens, Some(text(num(w.output_tokens))));
        set(
            FieldId::Stream,
            w.stream.map(|on| if on { "on" } else { "off" }.to_string()),
        );
        set(FieldId::Requests, num(req.run().requests));
        set(
            FieldId::Workers,
            Some(text(num(req.run().fleet.as_ref().map(|f| f.workers)))),
        );
        set(FieldId::E2eSla, Some(text(sla_text(SlaMetric::E2e))));
        set(FieldId::TtftSla, Some(text(sla_text(SlaMetric::Ttft))));
        match &req.plan {
            PlanChoice::Sweep { overrides, .. } => {
                set(FieldId::Mode, Some("sweep".into()));
                let levels = overrides
                    .concurrency
                    .as_ref()
                    .map(|l| l.iter().map(u32::to_string).collect::<Vec<_>>().join(","));
                set(FieldId::Concurrency, levels);
            }
            PlanChoice::Search(s) => {
                set(FieldId::Mode, Some("search".into()));
                set(FieldId::SearchMin, num(s.min));
                set(FieldId::SearchMax, num(s.max));
                set(FieldId::MaxIterations, num(s.max_iterations));
            }
        }
        let peak = match req.capacity.peak {
            Some(Peak::Concurrency(v)) => Some(v.to_string()),
            _ => None,
        };
        set(FieldId::PeakConcurrency, peak);
        set(
            FieldId::PricePerHour,
            req.capacity.price_per_hour.map(|p| p.to_string()),
        );
        form.base = req.clone();
        form.sagemaker_endpoints = c.sagemaker_endpoints.clone();
        form
    }

    /// The text of field `id`.
    pub fn get(&self, id: FieldId) -> &str {
        self.fields
            .iter()
            .find(|f| f.id == id)
            .map_or("", |f| f.value.as_str())
    }

    /// Moves the cursor by `delta` rows on the form (wrapping, over rows not shown).
    pub fn move_cursor(&mut self, delta: i32) {
        let n = self.fields.len() as i32;
        let step = delta.signum();
        for _ in 0..delta.abs() {
            for _ in 0..n {
                self.selected = ((self.selected as i32 + step).rem_euclid(n)) as usize;
                if self.shown(self.selected) {
                    break;
                }
            }
        }
    }

    /// Puts the cursor on field `id`.
    pub fn select(&mut self, id: FieldId) {
        if let Some(i) = self.fields.iter().position(|f| f.id == id) {
            self.selected = i;
        }
    }

    /// Sets field `id`'s text.
    pub fn set(&mut self, id: FieldId, value: &str) {
        if let Some(f) = self.fields.iter_mut().find(|f| f.id == id) {
            f.value = value.to_string();
        }
    }

    /// Cycles a choice or flips a toggle on the selected row.
    pub fn cycle(&mut self, delta: i32) {
        let field = &mut self.fields[self.selected];
        match &field.kind {
            FieldKind::Choice(choices) | FieldKind::Open(choices) if !choices.is_empty() => {
                let i = choices.iter().position(|c| *c == field.value).unwrap_or(0) as i32;
                let n = choices.len() as i32;
                field.value = choices[(i + delta).rem_euclid(n) as usize].clone();
            }
            FieldKind::Toggle => {
                field.value = if field.value == "on" { "off" } else { "on" }.into();
            }
            _ => {}
        }
        field.error = None;
    }

    /// Selects field `id` and starts editing it (the run screen's planning keys).
    pub fn edit(&mut self, id: FieldId) {
        if let Some(i) = self.fields.iter().position(|f| f.id == id) {
            self.selected = i;
            self.editing = Some(self.fields[i].value.clone());
        }
    }

    /// Starts editing the selected text field, or cycles a choice/toggle.
    pub fn activate(&mut self) {
        match self.fields[self.selected].kind {
            FieldKind::Text => self.editing = Some(self.fields[self.selected].value.clone()),
            // typing a new one (a URL, sagemaker:NAME) starts afresh; a typed one is edited
            FieldKind::Open(ref choices) => {
                let f = &self.fields[self.selected];
                let typed = !choices.contains(&f.value);
                self.editing = Some(if typed {
                    f.value.clone()
                } else {
                    String::new()
                });
            }
            _ => self.cycle(1),
        }
    }

    /// Ends editing: `keep` stores the typed text (and checks it), otherwise it is dropped.
    pub fn finish_edit(&mut self, keep: bool) {
        if let Some(text) = self.editing.take() {
            if keep {
                let field = &mut self.fields[self.selected];
                field.value = text.trim().to_string();
                field.error = check(field.id, &field.value).err();
            }
        }
    }

    /// Checks every field on the form; true when all are valid (errors are stored beside
    /// the fields).
    pub fn validate(&mut self) -> bool {
        for i in 0..self.fields.len() {
            let shown = self.shown(i);
            let f = &mut self.fields[i];
            f.error = if shown {
                check(f.id, &f.value).err()
            } else {
                None
            };
        }
        self.fields.iter().all(|f| f.error.is_none())
    }

    fn sla(&self, id: FieldId, metric: SlaMetric) -> Option<SlaThreshold> {
        let v = self.get(id);
        (!v.is_empty())
            .then(|| SlaThreshold::parse(metric, v).ok())
            .flatten()
    }

    /// The run these settings ask for: the form's fields laid over [`SetupForm::base`].
    /// Call [`SetupForm::validate`] first.
    pub fn to_request(&self) -> LaunchRequest {
        let opt_num = |id| parse_positive(self.get(id)).ok();
        let non_empty = |id| Some(self.get(id).to_string()).filter(|s| !s.is_empty());
        let mut r = self.base.clone();
        r.endpoint.endpoint = non_empty(FieldId::Endpoint);
        super::setup_sagemaker::apply(self, &mut r.endpoint);
        r.endpoint.model = non_empty(FieldId::Model);
        r.endpoint.sim_time_scale = self.get(FieldId::TimeScale).parse().ok();
        r.workload.profile = non_empty(FieldId::Profile);
        r.workload.input_tokens = opt_num(FieldId::InputTokens);
        r.workload.output_tokens = opt_num(FieldId::OutputTokens);
        r.workload.stream = Some(self.get(FieldId::Stream) == "on");
        let mut run = r.run().clone();
        run.requests = opt_num(FieldId::Requests);
        // N workers started as the command line said (local unless it said external), or
        // this process alone
        run.fleet = opt_num(FieldId::Workers).map(|workers| FleetChoice {
            workers,
            ..r.run().fleet.clone().unwrap_or(FleetChoice {
                workers,
                backend: WorkerBackend::Local,
                listen: None,
            })
        });
        // the form holds the e2e and TTFT SLAs; the others stay as the base gave them
        let mut slas: Vec<SlaThreshold> = r
            .slas()
            .iter()
            .filter(|t| !matches!(t.metric, SlaMetric::E2e | SlaMetric::Ttft))
            .copied()
            .collect();
        slas.extend(self.sla(FieldId::E2eSla, SlaMetric::E2e));
        slas.extend(self.sla(FieldId::TtftSla, SlaMetric::Ttft));
        r.plan = if self.get(FieldId::Mode) == "search" {
            let base = match &r.plan {
                PlanChoice::Search(s) => s.clone(),
                PlanChoice::Sweep { .. } => SearchOverrides::default(),
            };
            // a search by rate keeps its rate bounds (the form's bounds are concurrencies)
            let (min, max) = if base.by_rate {
                (base.min, base.max)
            } else {
                (
                    parse_concurrency(self.get(FieldId::SearchMin)).ok(),
                    parse_concurrency(self.get(FieldId::SearchMax)).ok(),
                )
            };
            PlanChoice::Search(SearchOverrides {
                slas,
                min,
                max,
                max_iterations: opt_num(FieldId::MaxIterations),
                run,
                ..base
            })
        } else {
            let (plan, refine_knee, open) = match &r.plan {
                PlanChoice::Sweep {
                    overrides,
                    refine_knee,
                    open,
                    ..
                } => (overrides.plan.clone(), *refine_knee, open.clone()),
                PlanChoice::Search(_) => (None, false, OpenChoice::Closed),
            };
            PlanChoice::Sweep {
                overrides: SweepOverrides {
                    plan,
                    concurrency: parse_concurrency_list(self.get(FieldId::Concurrency)).ok(),
                    run,
                },
                refine_knee,
                slas,
                open,
            }
        };
        if let Ok(v) = self.get(FieldId::PeakConcurrency).parse::<f64>() {
            r.capacity.peak = Some(Peak::Concurrency(v));
        } else if matches!(r.capacity.peak, Some(Peak::Concurrency(_))) {
            r.capacity.peak = None;
        }
        r.capacity.price_per_hour = self.get(FieldId::PricePerHour).parse().ok();
        r
    }
}

/// Checks one field's text; the message says what would fix it.
pub fn check(id: FieldId, v: &str) -> Result<(), String> {
    let optional = v.is_empty();
    match id {
        FieldId::InputTokens | FieldId::OutputTokens if !optional => parse_positive(v)
            .map(|_| ())
            .map_err(|e| format!("tokens {e}")),
        FieldId::Requests => parse_positive(v)
            .map(|_| ())
            .map_err(|e| format!("requests {e}")),
        FieldId::Concurrency => parse_concurrency_list(v).map(|_| ()),
        FieldId::E2eSla if !optional => SlaThreshold::parse(SlaMetric::E2e, v).map(|_| ()),
        FieldId::TtftSla if !optional => SlaThreshold::parse(SlaMetric::Ttft, v).map(|_| ()),
        FieldId::SearchMin | FieldId::SearchMax => parse_concurrency(v).map(|_| ()),
        FieldId::MaxIterations => parse_positive(v)
            .map(|_| ())
            .map_err(|e| format!("iterations {e}")),
        FieldId::Workers if !optional => parse_positive(v)
            .map(|_| ())
            .map_err(|e| format!("workers {e}; empty runs in this process")),
        FieldId::PeakConcurrency | FieldId::PricePerHour if !optional => match v.parse::<f64>() {
            Ok(f) if f.is_finite() && f > 0.0 => Ok(()),
            _ => Err(format!("`{v}` is not a positive number")),
        },
        FieldId::TimeScale if !optional => match v.parse::<f64>() {
            Ok(f) if f.is_finite() && f > 0.0 => Ok(()),
            _ => Err(format!("`{v}` is not a positive number")),
        },
        FieldId::Endpoint
            if v.strip_prefix("sagemaker:")
                .is_some_and(|n| n.trim().is_empty()) =>
        {
            Err("name the SageMaker endpoint: sagemaker:NAME".into())
        }
        FieldId::RequestTemplate | FieldId::TextPointer | FieldId::TokenCountPointer => {
            super::setup_sagemaker::check(id, v)
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choices() -> SetupChoices {
        SetupChoices {
            endpoints: vec!["local".into(), "sim".into()],
            sagemaker_endpoints: vec![],
            profiles: vec!["chat".into(), "rag".into()],
            default_endpoint: "sim".into(),
            default_profile: "rag".into(),
            default_levels: vec![16, 64],
            default_requests: 128,
        }
    }

    #[test]
    fn defaults_cycle_and_edit() {
        let mut f = SetupForm::new(&choices());
        assert_eq!(f.get(FieldId::Endpoint), "sim");
        f.move_cursor(1);
        f.cycle(1);
        assert_eq!(f.get(FieldId::Endpoint), "local");
        f.select(FieldId::Concurrency);
        let concurrency = f.selected;
        f.activate();
        f.editing = Some("8, 0".into());
        f.finish_edit(true);
        assert_eq!(
            f.fields[concurrency].error.as_deref(),
            Some("concurrency must be at least 1, got 0")
        );
        assert!(!f.validate());
        f.set(FieldId::Concurrency, "8,32");
        assert!(f.validate());
        let r = f.to_request();
        let PlanChoice::Sweep { overrides, .. } = &r.plan else {
            panic!("a sweep")
        };
        assert_eq!(overrides.concurrency, Some(vec![8, 32]));
        assert_eq!(r.run().requests, Some(128));
        assert_eq!(r.endpoint.endpoint.as_deref(), Some("local"));
        assert_eq!(r.workload.stream, Some(true));
        f.set(FieldId::Mode, "search");
        f.set(FieldId::E2eSla, "p99:2s");
        let r = f.to_request();
        let PlanChoice::Search(s) = &r.plan else {
            panic!("a search")
        };
        assert_eq!(
            (s.min, s.max, s.max_iterations),
            (Some(16), Some(4096), Some(10))
        );
        assert_eq!(s.slas.first().map(|t| t.limit), Some(2000.0));
    }

    #[test]
    fn the_command_line_fills_the_form_and_stays_under_it() {
        let mut req = LaunchRequest::demo();
        req.endpoint.endpoint = Some("http://127.0.0.1:9/v1".into());
        req.endpoint.headers = vec![("X-Team".into(), "ml".into())];
        req.workload.input_tokens = Some(64);
        req.workload.stream = Some(false);
        req.run_mut().requests = Some(32);
        req.run_mut().out = Some("/tmp/runs-here".into());
        let tpot = SlaThreshold::parse(SlaMetric::Tpot, "50ms").unwrap();
        let e2e = SlaThreshold::parse(SlaMetric::E2e, "p95:3s").unwrap();
        if let PlanChoice::Sweep {
            overrides, slas, ..
        } = &mut req.plan
        {
            overrides.plan = None;
            overrides.concurrency = Some(vec![2, 4]);
            *slas = vec![e2e, tpot];
        }
        let f = SetupForm::from_request(&choices(), &req);
        assert_eq!(f.get(FieldId::Endpoint), "http://127.0.0.1:9/v1");
        assert_eq!(f.get(FieldId::Concurrency), "2,4");
        assert_eq!(f.get(FieldId::Requests), "32");
        assert_eq!(f.get(FieldId::InputTokens), "64");
        assert_eq!(f.get(FieldId::Stream), "off");
        assert_eq!(f.get(FieldId::E2eSla), "p95:3000ms");
        // what the form runs is what the command line asked for, every time
        let again = f.to_request();
        assert_eq!(again.endpoint.endpoint, req.endpoint.endpoint);
        assert_eq!(again.endpoint.headers, req.endpoint.headers);
        assert_eq!(again.run().out, req.run().out);
        assert_eq!(again.run().requests, Some(32));
        assert_eq!(again.workload.stream, Some(false));
        let PlanChoice::Sweep {
            overrides, slas, ..
        } = &again.plan
        else {
            panic!("a sweep")
        };
        assert_eq!(overrides.concurrency, Some(vec![2, 4]));
        assert!(slas.contains(&tpot) && slas.contains(&e2e), "{slas:?}");
    }

    #[test]
    fn the_workers_field_asks_for_a_distributed_run() {
        // empty: this process
        let mut f = SetupForm::new(&choices());
        assert_eq!(f.get(FieldId::Workers), "");
        assert_eq!(f.to_request().run().fleet, None);
        // typed: that many local workers
        f.set(FieldId::Workers, "4");
        assert!(f.validate());
        let want = FleetChoice {
            workers: 4,
            backend: WorkerBackend::Local,
            listen: None,
        };
        assert_eq!(f.to_request().run().fleet, Some(want));
        // the command line's external workers and address stay; the form sets how many
        let mut req = LaunchRequest::demo();
        req.run_mut().fleet = Some(FleetChoice {
            workers: 8,
            backend: WorkerBackend::External,
            listen: Some("0.0.0.0:7077".into()),
        });
        let mut f = SetupForm::from_request(&choices(), &req);
        assert_eq!(f.get(FieldId::Workers), "8");
        f.set(FieldId::Workers, "2");
        let fleet = f.to_request().run().fleet.clone().expect("a fleet");
        assert_eq!(
            (fleet.workers, fleet.backend, fleet.listen.as_deref()),
            (2, WorkerBackend::External, Some("0.0.0.0:7077"))
        );
        f.set(FieldId::Workers, "0");
        assert!(!f.validate());
        assert_eq!(
            f.fields
                .iter()
                .find(|x| x.id == FieldId::Workers)
                .unwrap()
                .error
                .as_deref(),
            Some("workers must be at least 1, got 0; empty runs in this process")
        );
    }

    #[test]
    fn checks_table() {
        let cases: &[(FieldId, &str, bool)] = &[
            (FieldId::InputTokens, "", true),
            (FieldId::InputTokens, "0", false),
            (FieldId::Requests, "", false),
            (FieldId::E2eSla, "50s", true),
            (FieldId::E2eSla, "soon", false),
            (FieldId::TtftSla, "p99:800ms", true),
            (FieldId::SearchMin, "0", false),
            (FieldId::PricePerHour, "4.5", true),
            (FieldId::PeakConcurrency, "-1", false),
            (FieldId::TimeScale, "-2", false),
            (FieldId::TimeScale, "20", true),
            (FieldId::Workers, "", true),
            (FieldId::Workers, "4", true),
            (FieldId::Workers, "0", false),
            (FieldId::Workers, "two", false),
        ];
        for (id, v, ok) in cases {
            assert_eq!(check(*id, v).is_ok(), *ok, "{id:?} {v:?}");
        }
    }
}
