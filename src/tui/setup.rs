//! The setup form: endpoint, workload and plan, each field editable with its validation
//! message beside it. It turns into a [`LaunchRequest`], the same the command line builds, so
//! both surfaces share one launch step. A dashboard opened by `rightsize sweep|search ...`
//! fills the form from the flags and keeps the request as the base the form's fields are laid
//! over: what is not in the form (headers, `--out`, a search plan, ...) stays as the flags said,
//! the first run and every run after.

use crate::config::overrides::{FleetChoice, SweepOverrides, WorkerBackend};
use crate::config::search::SearchOverrides;
use crate::launch::{LaunchRequest, OpenChoice, PlanChoice};
use crate::plan::capacity::Peak;
use crate::record::sla::{SlaMetric, SlaThreshold};
use crate::values::{parse_concurrency, parse_concurrency_list, parse_positive};

pub use super::setup_fields::{Field, FieldId, FieldKind};
use super::setup_sagemaker;

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

/// A text field with its first value.
fn text(id: FieldId, label: &'static str, value: &str, hint: &'static str) -> Field {
    Field {
        id,
        label,
        kind: FieldKind::Text,
        value: value.to_string(),
        error: None,
        hint,
    }
}

/// The text fields after the workload's, in the form's order: (id, label, first value, hint).
const LATER_ROWS: &[(FieldId, &str, &str, &str)] = &[
    (
        FieldId::E2eSla,
        "e2e SLA",
        "",
        "[stat:]time, p99 default, e.g. 50s",
    ),
    (
        FieldId::TtftSla,
        "TTFT SLA",
        "",
        "[stat:]time, p95 default, e.g. 1.5s",
    ),
    (
        FieldId::TpotSla,
        "TPOT SLA",
        "",
        "[stat:]time per token, e.g. 50ms",
    ),
    (
        FieldId::ErrorRateSla,
        "error rate SLA",
        "",
        "[avg:]share failed, e.g. 0.01",
    ),
    (
        FieldId::SearchMin,
        "search min",
        "16",
        "the search's first level",
    ),
    (
        FieldId::SearchMax,
        "search max",
        "4096",
        "the highest level it may try",
    ),
    (
        FieldId::MaxIterations,
        "max iterations",
        "10",
        "the most levels it runs",
    ),
    (
        FieldId::PeakConcurrency,
        "peak concurrency",
        "",
        "right-size for it (p on the run screen)",
    ),
    (
        FieldId::PricePerHour,
        "price / hour",
        "",
        "per instance ($ on the run screen)",
    ),
    (
        FieldId::TimeScale,
        "sim time scale",
        "",
        "simulator only; empty = config",
    ),
    (
        FieldId::Workers,
        "workers",
        "",
        "empty = one process; N = N workers",
    ),
];

impl SetupForm {
    /// A form filled with the config's defaults.
    pub fn new(c: &SetupChoices) -> Self {
        let levels = c
            .default_levels
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let choice = |id, label, choices: &[String], value: &str, hint| Field {
            id,
            label,
            kind: FieldKind::Choice(choices.to_vec()),
            value: value.to_string(),
            error: None,
            hint,
        };
        let modes = ["sweep".to_string(), "search".to_string()];
        let mut fields = vec![
            choice(
                FieldId::Mode,
                "plan",
                &modes,
                "sweep",
                "sweep: fixed levels; search: highest under the SLA",
            ),
            Field {
                kind: FieldKind::Open(c.endpoints.clone()),
                ..text(
                    FieldId::Endpoint,
                    "endpoint",
                    &choice_value(&c.endpoints, &c.default_endpoint),
                    "←→ from config (sim); Enter: a URL or sagemaker:NAME",
                )
            },
            text(FieldId::Model, "model", "", "empty = the endpoint's own"),
            choice(
                FieldId::Profile,
                "profile",
                &c.profiles,
                &choice_value(&c.profiles, &c.default_profile),
                "workload from the config",
            ),
            text(
                FieldId::InputTokens,
                "input tokens",
                "",
                "empty = the profile's",
            ),
            text(
                FieldId::OutputTokens,
                "output tokens",
                "",
                "empty = the profile's",
            ),
            Field {
                kind: FieldKind::Toggle,
                ..text(
                    FieldId::Stream,
                    "streaming",
                    "on",
                    "needed for TTFT and TPOT",
                )
            },
            text(
                FieldId::Concurrency,
                "concurrency",
                &levels,
                "levels, e.g. 16,64,256",
            ),
            text(
                FieldId::Requests,
                "requests/level",
                &c.default_requests.to_string(),
                "per level",
            ),
        ];
        fields.extend(
            LATER_ROWS
                .iter()
                .map(|&(id, label, value, hint)| text(id, label, value, hint)),
        );
        // the SageMaker fields, under the endpoint (shown for a SageMaker one)
        let at = fields
            .iter()
            .position(|f| f.id == FieldId::Endpoint)
            .map_or(0, |i| i + 1);
        fields.splice(at..at, setup_sagemaker::fields());
        SetupForm {
            fields,
            selected: 0,
            editing: None,
            base: LaunchRequest::demo(),
            sagemaker_endpoints: c.sagemaker_endpoints.clone(),
        }
    }

    /// True when row `i` is on the form now (the SageMaker rows only for a SageMaker
    /// endpoint, the custom format's only in that format; a sweep's levels in a sweep, a
    /// search's bounds and budget in a search).
    pub fn shown(&self, i: usize) -> bool {
        let search = self.get(FieldId::Mode) == "search";
        self.fields.get(i).is_some_and(|f| match f.id {
            FieldId::Concurrency => !search,
            FieldId::SearchMin | FieldId::SearchMax | FieldId::MaxIterations => search,
            id => self.sagemaker_shown(id),
        })
    }

    /// True when row `id` is on the form as far as the SageMaker rows go (each other row is).
    fn sagemaker_shown(&self, id: FieldId) -> bool {
        let sagemaker =
            setup_sagemaker::is_sagemaker(self.get(FieldId::Endpoint), &self.sagemaker_endpoints);
        setup_sagemaker::shown(id, sagemaker, self.get(FieldId::SageMakerFormat))
    }

    /// A form showing what `req` asks for (the command line's flags), keeping `req` as the
    /// base of every run it starts.
    pub fn from_request(c: &SetupChoices, req: &LaunchRequest) -> Self {
        let mut form = SetupForm::new(c);
        let text = |v: Option<String>| v.unwrap_or_default();
        let num = |v: Option<u32>| v.map(|n| n.to_string());
        let sla_text = |m: SlaMetric| {
            req.slas().iter().find(|t| t.metric == m).map(|t| match m {
                SlaMetric::ErrorRate => format!("{}:{}", t.stat, t.limit),
                _ => format!("{}:{}ms", t.stat, t.limit),
            })
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
        for (id, value) in setup_sagemaker::values(e) {
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
        set(FieldId::TpotSla, Some(text(sla_text(SlaMetric::Tpot))));
        set(
            FieldId::ErrorRateSla,
            Some(text(sla_text(SlaMetric::ErrorRate))),
        );
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

    /// Moves the cursor by `delta` rows on the form, over rows not shown; it stops at the
    /// first and the last row (no wrapping round).
    pub fn move_cursor(&mut self, delta: i32) {
        let step = delta.signum();
        for _ in 0..delta.unsigned_abs() {
            let mut i = self.selected as i64;
            loop {
                i += i64::from(step);
                if i < 0 || i >= self.fields.len() as i64 {
                    return;
                }
                if self.shown(i as usize) {
                    self.selected = i as usize;
                    break;
                }
            }
        }
    }

    /// True when the selected row takes typed text (a text field, or the endpoint, which
    /// takes a URL): a printable key types there instead of acting as a command.
    pub fn selected_takes_text(&self) -> bool {
        self.fields
            .get(self.selected)
            .is_some_and(|f| matches!(f.kind, FieldKind::Text | FieldKind::Open(_)))
    }

    /// Starts editing the selected text field with `c` typed, replacing its value (as a
    /// spreadsheet cell does); Esc puts the old value back.
    pub fn start_typing(&mut self, c: char) {
        if self.selected_takes_text() {
            self.editing = Some(c.to_string());
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

    /// Cycles a choice or flips a toggle on the selected row (a text row is left alone).
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
            _ => return,
        }
        self.fields[self.selected].error = self.check_at(self.selected).err();
        self.recheck(self.fields[self.selected].id);
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

    /// Ends editing: `keep` stores the typed text (and checks it, as the field is left),
    /// otherwise it is dropped and the old value stays.
    pub fn finish_edit(&mut self, keep: bool) {
        if let Some(text) = self.editing.take() {
            if keep {
                let i = self.selected;
                self.fields[i].value = text.trim().to_string();
                self.fields[i].error = self.check_at(i).err();
                self.recheck(self.fields[i].id);
            }
        }
    }

    /// After field `changed` took a new value: the rows it bears on are checked again (the
    /// SLAs that need streaming, search max against search min), and so is every row marked
    /// wrong, so a message goes as soon as its cause does.
    fn recheck(&mut self, changed: FieldId) {
        let depends = |id: FieldId| match changed {
            FieldId::Stream => matches!(id, FieldId::TtftSla | FieldId::TpotSla),
            FieldId::SearchMin => id == FieldId::SearchMax,
            _ => false,
        };
        for i in 0..self.fields.len() {
            let f = &self.fields[i];
            if f.id == changed || !(f.error.is_some() || depends(f.id)) {
                continue;
            }
            self.fields[i].error = if self.shown(i) {
                self.check_at(i).err()
            } else {
                None
            };
        }
    }

    /// Checks every field on the form; true when all are valid (errors are stored beside
    /// the fields).
    pub fn validate(&mut self) -> bool {
        for i in 0..self.fields.len() {
            self.fields[i].error = if self.shown(i) {
                self.check_at(i).err()
            } else {
                None
            };
        }
        self.fields.iter().all(|f| f.error.is_none())
    }

    /// The first row marked wrong: its index, its name on the form and the message.
    pub fn first_error(&self) -> Option<(usize, &'static str, &str)> {
        (0..self.fields.len())
            .filter(|i| self.shown(*i))
            .find_map(|i| {
                let f = &self.fields[i];
                f.error.as_deref().map(|e| (i, f.label.trim(), e))
            })
    }

    /// How row `i`'s value is read (`p99 <= 1.50 s`, `levels 16, 64`), for the line beside
    /// it; `None` when the value says it all, is empty, or is wrong.
    pub fn reading(&self, i: usize) -> Option<String> {
        self.check_at(i).ok().flatten()
    }

    /// Row `i` checked as it stands on this form: its own text (the endpoint against the
    /// config's names), and what it needs from the other rows.
    fn check_at(&self, i: usize) -> Result<Option<String>, String> {
        let f = &self.fields[i];
        let endpoints = self.fields.iter().find_map(|f| match &f.kind {
            FieldKind::Open(names) if f.id == FieldId::Endpoint => Some(names.as_slice()),
            _ => None,
        });
        let reading = read(f.id, &f.value, endpoints)?;
        match f.id {
            FieldId::E2eSla if self.search_lacks_an_sla() => Err(NO_SLA.into()),
            FieldId::TtftSla | FieldId::TpotSla
                if !f.value.is_empty() && self.get(FieldId::Stream) == "off" =>
            {
                Err("measured on streamed answers: turn streaming on, or leave it empty".into())
            }
            FieldId::SearchMax => match (
                parse_concurrency(self.get(FieldId::SearchMin)),
                parse_concurrency(&f.value),
            ) {
                (Ok(min), Ok(max)) if max < min => Err(format!("below search min {min}")),
                _ => Ok(reading),
            },
            _ => Ok(reading),
        }
    }

    /// A search with no SLA on the form (nor a search plan from the command line, whose
    /// SLAs stay under the form) has nothing to search for.
    fn search_lacks_an_sla(&self) -> bool {
        let from_plan = matches!(&self.base.plan, PlanChoice::Search(s) if s.plan.is_some());
        self.get(FieldId::Mode) == "search"
            && !from_plan
            && SLA_FIELDS
                .iter()
                .all(|(id, _)| self.get(*id).trim().is_empty())
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
        let sagemaker_row = |id| {
            let v = self.get(id).trim();
            (self.sagemaker_shown(id) && !v.is_empty()).then(|| v.to_string())
        };
        setup_sagemaker::apply(sagemaker_row, &mut r.endpoint);
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
        // the form holds every SLA the command line takes
        let mut slas: Vec<SlaThreshold> = r
            .slas()
            .iter()
            .filter(|t| !SLA_FIELDS.iter().any(|(_, m)| *m == t.metric))
            .copied()
            .collect();
        for (id, metric) in SLA_FIELDS {
            slas.extend(self.sla(id, metric));
        }
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

/// The SLA rows and what each limits, in the command line's order.
const SLA_FIELDS: [(FieldId, SlaMetric); 4] = [
    (FieldId::E2eSla, SlaMetric::E2e),
    (FieldId::TtftSla, SlaMetric::Ttft),
    (FieldId::TpotSla, SlaMetric::Tpot),
    (FieldId::ErrorRateSla, SlaMetric::ErrorRate),
];

/// What a search without an SLA is told, in the form's words.
const NO_SLA: &str = "a search needs at least one SLA: e2e, TTFT, TPOT or error rate SLA";

/// Checks one field's text; the message says what would fix it.
pub fn check(id: FieldId, v: &str) -> Result<(), String> {
    read(id, v, None).map(|_| ())
}

/// Reads one field's text: how it was read when that is worth saying (`p99 <= 1.50 s`,
/// `levels 16, 64`), or what is wrong with it, in the form's words (the message stands
/// beside the field: it does not repeat the field's name). `endpoints`: the config's
/// endpoint names, when known (a bare name must be one of them).
pub fn read(id: FieldId, v: &str, endpoints: Option<&[String]>) -> Result<Option<String>, String> {
    let optional = v.is_empty();
    let none = |r: Result<u32, String>| r.map(|_| None);
    match id {
        FieldId::InputTokens | FieldId::OutputTokens if !optional => none(whole(v)),
        FieldId::Requests if optional => Err("give the requests per level, e.g. 1024".into()),
        FieldId::Requests => none(whole(v)),
        FieldId::Concurrency => read_levels(v).map(|levels| {
            let shown: Vec<String> = levels.iter().map(u32::to_string).collect();
            let word = if levels.len() == 1 { "level" } else { "levels" };
            Some(format!("{word} {}", shown.join(", ")))
        }),
        FieldId::E2eSla | FieldId::TtftSla | FieldId::TpotSla | FieldId::ErrorRateSla
            if !optional =>
        {
            let metric = SLA_FIELDS
                .iter()
                .find(|(f, _)| *f == id)
                .map_or(SlaMetric::E2e, |(_, m)| *m);
            read_sla(metric, v).map(Some)
        }
        FieldId::SearchMin if optional => Err("give the search's first level, e.g. 16".into()),
        FieldId::SearchMax if optional => Err("give the highest level to try, e.g. 4096".into()),
        FieldId::MaxIterations if optional => Err("give the most levels to run, e.g. 10".into()),
        FieldId::SearchMin | FieldId::SearchMax | FieldId::MaxIterations => none(whole(v)),
        FieldId::Workers if !optional => whole(v)
            .map(|_| None)
            .map_err(|e| format!("{e}; empty runs in this process")),
        FieldId::PeakConcurrency | FieldId::PricePerHour | FieldId::TimeScale if !optional => {
            match v.parse::<f64>() {
                Ok(f) if f.is_finite() && f > 0.0 => Ok(None),
                _ => Err(format!("`{v}` is not a positive number")),
            }
        }
        FieldId::Endpoint if !optional => read_endpoint(v, endpoints).map(|_| None),
        FieldId::RequestTemplate | FieldId::TextPointer | FieldId::TokenCountPointer => {
            setup_sagemaker::check(id, v).map(|_| None)
        }
        _ => Ok(None),
    }
}

/// A whole number of at least 1.
fn whole(v: &str) -> Result<u32, String> {
    match v.trim().parse::<i64>() {
        Ok(n) => crate::values::check_positive(n),
        Err(_) => Err(format!("`{v}` is not a whole number")),
    }
}

/// Levels separated by commas, each a whole number of at least 1; an empty one is refused
/// (a doubled comma is a typo more often than a wish).
fn read_levels(v: &str) -> Result<Vec<u32>, String> {
    if v.trim().is_empty() {
        return Err("give at least one level, e.g. 16,64,256".into());
    }
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let mut levels = Vec::with_capacity(parts.len());
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() {
            return Err(if i == 0 {
                "an empty level before the first comma"
            } else if i + 1 == parts.len() {
                "an empty level after the last comma"
            } else {
                "an empty level between commas"
            }
            .into());
        }
        levels.push(whole(part).map_err(|e| match part.parse::<i64>() {
            Ok(_) => format!("each level {e}"),
            Err(_) => e,
        })?);
    }
    Ok(levels)
}

/// An SLA as the command line reads it, said back: `p99 <= 1.50 s`. A duration without a
/// unit is read as seconds, as the command line reads it, and the reading says so.
fn read_sla(metric: SlaMetric, v: &str) -> Result<String, String> {
    let t = SlaThreshold::parse(metric, v)?;
    let value = v.split_once(':').map_or(v, |(_, x)| x).trim();
    let no_unit =
        metric != SlaMetric::ErrorRate && value.ends_with(|c: char| c.is_ascii_digit() || c == '.');
    let mut reading = format!(
        "{} <= {}",
        t.stat,
        crate::record::sla::fmt_value(metric, t.limit)
    );
    if no_unit {
        reading.push_str(" (no unit: seconds)");
    }
    Ok(reading)
}

/// An endpoint: a name from the config, `sagemaker:NAME`, or a URL with its scheme.
fn read_endpoint(v: &str, endpoints: Option<&[String]>) -> Result<(), String> {
    if endpoints.is_some_and(|names| names.iter().any(|n| n == v)) {
        return Ok(());
    }
    if let Some(name) = v.strip_prefix("sagemaker:") {
        return if name.trim().is_empty() {
            Err("name the SageMaker endpoint: sagemaker:NAME".into())
        } else {
            Ok(())
        };
    }
    let shown = crate::secrets::redact_url(v);
    if let Some((scheme, _)) = v.split_once("://") {
        if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
            return Err(format!(
                "`{scheme}://` cannot be reached: use http:// or https:// (or sagemaker:NAME)"
            ));
        }
        return match url::Url::parse(v) {
            Ok(url) if url.host_str().is_some_and(|h| !h.is_empty()) => Ok(()),
            Ok(_) => Err(format!(
                "`{shown}` names no host, e.g. http://127.0.0.1:8000/v1"
            )),
            Err(e) => Err(format!("`{shown}` is not a URL: {e}")),
        };
    }
    let looks_like_host = v.contains([':', '/', '.']) || v.eq_ignore_ascii_case("localhost");
    match endpoints {
        _ if looks_like_host => Err(format!("needs http:// or https://, e.g. http://{shown}")),
        // the config's names are not known here: a bare name is left to the launch
        None => Ok(()),
        Some(names) => Err(format!(
            "no endpoint `{v}` in the config ({}); a URL needs http:// or https://",
            if names.is_empty() {
                "it names none".to_string()
            } else {
                names.join(", ")
            }
        )),
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
            Some("each level must be at least 1, got 0")
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
            Some("must be at least 1, got 0; empty runs in this process")
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
