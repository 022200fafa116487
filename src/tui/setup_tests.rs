//! The setup form as a person types into it: keys in through [`App::on_key`], what the form
//! holds, says and starts read back. No terminal needed.

use super::app::{Action, App, Screen};
use super::setup::{read, FieldId, FieldKind};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

// the form of the snapshot tests' config: endpoints local-vllm and sim, profiles chat and rag
use super::snapshot_tests::{app, choices};

fn code(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

/// A character as a terminal sends it (capitals with Shift).
fn typed(c: char) -> KeyEvent {
    let shift = if c.is_ascii_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    KeyEvent::new(KeyCode::Char(c), shift)
}

fn ctrl_s() -> KeyEvent {
    KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL)
}

fn type_text(a: &mut App, text: &str) -> Vec<Action> {
    text.chars().map(|c| a.on_key(typed(c))).collect()
}

fn acts(action: &Action) -> bool {
    matches!(action, Action::Start(_) | Action::Stop | Action::Quit)
}

fn error_of(a: &App, id: FieldId) -> Option<String> {
    a.setup
        .fields
        .iter()
        .find(|f| f.id == id)
        .and_then(|f| f.error.clone())
}

fn index_of(a: &App, id: FieldId) -> usize {
    a.setup.fields.iter().position(|f| f.id == id).unwrap()
}

/// The labels of the rows on the form, top to bottom.
fn rows(a: &App) -> Vec<&'static str> {
    (0..a.setup.fields.len())
        .filter(|i| a.setup.shown(*i))
        .map(|i| a.setup.fields[i].label.trim())
        .collect()
}

/// Every text row of the form in both plans, the endpoint (which takes a URL) among them.
fn text_fields(a: &App) -> Vec<FieldId> {
    a.setup
        .fields
        .iter()
        .filter(|f| matches!(f.kind, FieldKind::Text | FieldKind::Open(_)))
        .map(|f| f.id)
        .collect()
}

const ALNUM: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// Each letter and digit typed on each text row, from a row not being edited and while
/// editing, with a run live and without: it is typed, never a command.
#[test]
fn every_letter_and_digit_on_a_text_field_types_and_never_acts() {
    for live in [false, true] {
        for plan in ["sweep", "search"] {
            let mut a = app();
            a.setup.set(FieldId::Mode, plan);
            // the SageMaker rows show for a SageMaker endpoint, the custom format's too
            a.setup.set(FieldId::Endpoint, "sagemaker:x");
            a.setup.set(FieldId::SageMakerFormat, "custom");
            a.live = live;
            for id in text_fields(&a) {
                if !a.setup.shown(index_of(&a, id)) {
                    continue;
                }
                for c in ALNUM.chars() {
                    a.setup.select(id);
                    a.setup.editing = None;
                    let before = a.setup.get(id).to_string();
                    // from a row not being edited: starts editing with that character
                    let first = a.on_key(typed(c));
                    // and while editing: one more
                    let second = a.on_key(typed(c));
                    let what = format!("{id:?} {c:?} live={live} plan={plan}");
                    assert!(!acts(&first) && !acts(&second), "{what}");
                    assert_eq!(a.screen, Screen::Setup, "{what}");
                    assert!(!a.confirm_quit && !a.help, "{what}");
                    assert_eq!(a.setup.editing, Some(format!("{c}{c}")), "{what}");
                    assert_eq!(a.setup.fields[a.setup.selected].id, id, "{what}");
                    // Esc puts the old value back
                    a.on_key(code(KeyCode::Esc));
                    assert_eq!(a.setup.editing, None, "{what}");
                    assert_eq!(a.setup.get(id), before, "{what}");
                }
            }
        }
    }
}

#[test]
fn command_keys_type_on_a_text_field_and_act_elsewhere() {
    let mut a = app();
    a.setup.select(FieldId::Model);
    for c in "sq?x123jkhle".chars() {
        assert!(!acts(&a.on_key(typed(c))), "{c}");
    }
    assert_eq!(a.setup.editing.as_deref(), Some("sq?x123jkhle"));
    assert_eq!(
        (a.screen, a.help, a.confirm_quit),
        (Screen::Setup, false, false)
    );
    a.on_key(code(KeyCode::Enter));
    assert_eq!(a.setup.get(FieldId::Model), "sq?x123jkhle");
    // on a choice row the commands work
    a.setup.select(FieldId::Profile);
    a.on_key(typed('l'));
    assert_eq!(a.setup.get(FieldId::Profile), "chat");
    a.on_key(typed('?'));
    assert!(a.help);
    a.on_key(code(KeyCode::Esc));
    a.on_key(typed('2'));
    assert_eq!(a.screen, Screen::Run);
    a.on_key(typed('1'));
    assert!(matches!(a.on_key(typed('s')), Action::Start(_)));
    assert!(matches!(a.on_key(typed('q')), Action::Quit));
}

#[test]
fn localhost_typed_on_the_endpoint_is_kept_as_typed_and_refused_without_a_run() {
    let mut a = app();
    a.setup.select(FieldId::Endpoint);
    let actions = type_text(&mut a, "localhost:8000");
    assert!(actions.iter().all(|x| !acts(x)));
    assert_eq!(a.setup.editing.as_deref(), Some("localhost:8000"));
    assert!(!acts(&a.on_key(code(KeyCode::Enter))));
    assert_eq!(a.setup.get(FieldId::Endpoint), "localhost:8000");
    assert_eq!(
        error_of(&a, FieldId::Endpoint).as_deref(),
        Some("needs http:// or https://, e.g. http://localhost:8000")
    );
    // the peak field was not touched
    assert_eq!(a.setup.get(FieldId::PeakConcurrency), "");
    // starting says what to fix, where
    a.setup.select(FieldId::Profile);
    assert!(matches!(a.on_key(typed('s')), Action::None));
    assert_eq!(a.setup.fields[a.setup.selected].id, FieldId::Endpoint);
    assert_eq!(
        a.status.as_deref(),
        Some("fix endpoint: needs http:// or https://, e.g. http://localhost:8000")
    );
    // typed over where the cursor went: the message and the status go
    type_text(&mut a, "http://localhost:8000/v1");
    a.on_key(code(KeyCode::Enter));
    assert_eq!(error_of(&a, FieldId::Endpoint), None);
    assert_eq!(a.status, None);
    assert!(matches!(a.on_key(ctrl_s()), Action::Start(_)));
}

#[test]
fn the_cursor_stops_at_the_first_and_last_rows() {
    let mut a = app();
    assert_eq!(a.setup.selected, 0);
    a.on_key(code(KeyCode::Up));
    a.on_key(code(KeyCode::BackTab));
    assert_eq!(a.setup.selected, 0);
    a.on_key(code(KeyCode::End));
    let last = a.setup.selected;
    assert_eq!(a.setup.fields[last].id, FieldId::Workers);
    a.on_key(code(KeyCode::Down));
    a.on_key(code(KeyCode::Tab));
    assert_eq!(a.setup.selected, last);
    // while editing, Up keeps the text and moves up, then stops at the first row
    a.setup.select(FieldId::Endpoint);
    type_text(&mut a, "sim");
    a.on_key(code(KeyCode::Up));
    assert_eq!(
        (a.setup.selected, a.setup.get(FieldId::Endpoint)),
        (0, "sim")
    );
    a.on_key(code(KeyCode::Up));
    assert_eq!(a.setup.selected, 0);
}

#[test]
fn enter_edits_keeping_the_value_esc_cancels_tab_keeps_and_moves_on() {
    let mut a = app();
    a.setup.select(FieldId::Requests);
    a.on_key(code(KeyCode::Enter));
    assert_eq!(a.setup.editing.as_deref(), Some("1024"));
    a.on_key(code(KeyCode::Backspace));
    type_text(&mut a, "8");
    assert_eq!(a.setup.editing.as_deref(), Some("1028"));
    a.on_key(code(KeyCode::Esc));
    assert_eq!(a.setup.get(FieldId::Requests), "1024");
    // typed over, kept with Tab: the next row is selected
    type_text(&mut a, "512");
    a.on_key(code(KeyCode::Tab));
    assert_eq!(a.setup.get(FieldId::Requests), "512");
    assert_eq!(a.setup.fields[a.setup.selected].id, FieldId::E2eSla);
    assert_eq!(a.setup.editing, None);
    // Backspace on a row not being edited empties it and starts typing
    a.on_key(code(KeyCode::Backspace));
    assert_eq!(a.setup.editing.as_deref(), Some(""));
}

/// Each row's check: the message (the form's words) or how the value was read.
#[test]
fn field_checks_read_back_or_say_what_is_wrong() {
    let names = ["sim".to_string(), "local-vllm".to_string()];
    let ok = |r: &str| Ok(Some(r.to_string()));
    let fine = Ok(None);
    let no = |m: &str| Err(m.to_string());
    type Case = (FieldId, &'static str, Result<Option<String>, String>);
    let cases: Vec<Case> = vec![
        (FieldId::E2eSla, "1.5s", ok("p99 <= 1.50 s")),
        (FieldId::E2eSla, "1.5", ok("p99 <= 1.50 s (no unit: seconds)")),
        (FieldId::E2eSla, "p95:800ms", ok("p95 <= 800 ms")),
        (FieldId::E2eSla, "p99:2", ok("p99 <= 2.00 s (no unit: seconds)")),
        (FieldId::E2eSla, "50s", ok("p99 <= 50.0 s")),
        (FieldId::E2eSla, "", fine.clone()),
        (
            FieldId::E2eSla,
            "soon",
            no("`soon` is not a duration (use e.g. 800ms, 1.5s, 2m)"),
        ),
        (
            FieldId::E2eSla,
            "p42:1s",
            no("`p42` is not a statistic (use avg, p50, p90, p95, p99 or max)"),
        ),
        (FieldId::TtftSla, "1.5s", ok("p95 <= 1.50 s")),
        (FieldId::TpotSla, "50ms", ok("p95 <= 50 ms")),
        (FieldId::TpotSla, "p99:20ms", ok("p99 <= 20 ms")),
        (FieldId::ErrorRateSla, "0.01", ok("avg <= 1.0 %")),
        (
            FieldId::ErrorRateSla,
            "2",
            no("must be a fraction between 0 and 1, got 2"),
        ),
        (FieldId::Concurrency, "16,64", ok("levels 16, 64")),
        (FieldId::Concurrency, " 16 , 64 ,256", ok("levels 16, 64, 256")),
        (FieldId::Concurrency, "8", ok("level 8")),
        (
            FieldId::Concurrency,
            "16,,64",
            no("an empty level between commas"),
        ),
        (
            FieldId::Concurrency,
            "16,64,",
            no("an empty level after the last comma"),
        ),
        (
            FieldId::Concurrency,
            ",16",
            no("an empty level before the first comma"),
        ),
        (
            FieldId::Concurrency,
            "16,0",
            no("each level must be at least 1, got 0"),
        ),
        (
            FieldId::Concurrency,
            "16,x",
            no("`x` is not a whole number"),
        ),
        (
            FieldId::Concurrency,
            "",
            no("give at least one level, e.g. 16,64,256"),
        ),
        (
            FieldId::Endpoint,
            "127.0.0.1:9/v1",
            no("needs http:// or https://, e.g. http://127.0.0.1:9/v1"),
        ),
        (
            FieldId::Endpoint,
            "localhost:8000",
            no("needs http:// or https://, e.g. http://localhost:8000"),
        ),
        (FieldId::Endpoint, "http://127.0.0.1:9/v1", fine.clone()),
        (FieldId::Endpoint, "https://api.example.com/v1", fine.clone()),
        (FieldId::Endpoint, "sim", fine.clone()),
        (FieldId::Endpoint, "sagemaker:my-llm", fine.clone()),
        (
            FieldId::Endpoint,
            "sagemaker:",
            no("name the SageMaker endpoint: sagemaker:NAME"),
        ),
        (
            FieldId::Endpoint,
            "ftp://host/v1",
            no("`ftp://` cannot be reached: use http:// or https:// (or sagemaker:NAME)"),
        ),
        (
            FieldId::Endpoint,
            "prod",
            no("no endpoint `prod` in the config (sim, local-vllm); a URL needs http:// or https://"),
        ),
        (
            FieldId::Requests,
            "",
            no("give the requests per level, e.g. 1024"),
        ),
        (FieldId::Requests, "0", no("must be at least 1, got 0")),
        (FieldId::Requests, "lots", no("`lots` is not a whole number")),
        (
            FieldId::SearchMin,
            "",
            no("give the search's first level, e.g. 16"),
        ),
        (
            FieldId::SearchMax,
            "",
            no("give the highest level to try, e.g. 4096"),
        ),
        (
            FieldId::MaxIterations,
            "",
            no("give the most levels to run, e.g. 10"),
        ),
        (FieldId::InputTokens, "", fine.clone()),
        (FieldId::InputTokens, "0", no("must be at least 1, got 0")),
        (
            FieldId::Workers,
            "two",
            no("`two` is not a whole number; empty runs in this process"),
        ),
        (
            FieldId::PeakConcurrency,
            "-1",
            no("`-1` is not a positive number"),
        ),
        (FieldId::PricePerHour, "4.5", fine.clone()),
        (FieldId::TimeScale, "20", fine),
    ];
    for (id, v, want) in cases {
        assert_eq!(read(id, v, Some(&names)), want, "{id:?} {v:?}");
    }
}

/// No message names a command-line flag: the form has its own names.
#[test]
fn messages_use_the_forms_words_not_flags() {
    let names = ["sim".to_string()];
    let a = app();
    for f in &a.setup.fields {
        for v in [
            "",
            "0",
            "-1",
            "x",
            "16,,64",
            "localhost:8000",
            "p42:1s",
            "2",
            "{",
        ] {
            if let Err(e) = read(f.id, v, Some(&names)) {
                assert!(!e.contains("--"), "{:?} {v:?}: {e}", f.id);
            }
        }
    }
}

#[test]
fn a_field_is_checked_as_it_is_left_and_the_message_goes_when_fixed() {
    let mut a = app();
    a.setup.select(FieldId::Concurrency);
    type_text(&mut a, "16,,64");
    a.on_key(code(KeyCode::Tab));
    assert_eq!(
        error_of(&a, FieldId::Concurrency).as_deref(),
        Some("an empty level between commas")
    );
    a.setup.select(FieldId::Concurrency);
    type_text(&mut a, "16,64");
    a.on_key(code(KeyCode::Enter));
    assert_eq!(error_of(&a, FieldId::Concurrency), None);
    let i = index_of(&a, FieldId::Concurrency);
    assert_eq!(a.setup.reading(i).as_deref(), Some("levels 16, 64"));
    // an SLA without a unit: read as seconds, and said so
    a.setup.select(FieldId::E2eSla);
    type_text(&mut a, "1.5");
    a.on_key(code(KeyCode::Enter));
    let i = index_of(&a, FieldId::E2eSla);
    assert_eq!(
        a.setup.reading(i).as_deref(),
        Some("p99 <= 1.50 s (no unit: seconds)")
    );
    // a TTFT SLA needs streaming: turning it off marks the SLA, on again clears it
    a.setup.select(FieldId::TtftSla);
    type_text(&mut a, "1s");
    a.on_key(code(KeyCode::Enter));
    a.setup.select(FieldId::Stream);
    a.on_key(code(KeyCode::Right));
    assert_eq!(
        error_of(&a, FieldId::TtftSla).as_deref(),
        Some("measured on streamed answers: turn streaming on, or leave it empty")
    );
    a.on_key(code(KeyCode::Right));
    assert_eq!(error_of(&a, FieldId::TtftSla), None);
}

#[test]
fn search_shows_its_fields_and_every_sla_and_hides_the_levels() {
    let mut a = app();
    let sweep = rows(&a);
    assert!(sweep.contains(&"concurrency"), "{sweep:?}");
    for hidden in ["search min", "search max", "max iterations"] {
        assert!(!sweep.contains(&hidden), "{sweep:?}");
    }
    a.on_key(code(KeyCode::Right));
    assert_eq!(a.setup.get(FieldId::Mode), "search");
    let search = rows(&a);
    assert!(!search.contains(&"concurrency"), "{search:?}");
    for shown in [
        "e2e SLA",
        "TTFT SLA",
        "TPOT SLA",
        "error rate SLA",
        "search min",
        "search max",
        "max iterations",
    ] {
        assert!(search.contains(&shown), "{shown}: {search:?}");
    }
    let screen = super::snapshot_tests::draw(&a, 100, 34);
    assert!(!screen.contains("levels run one after another"), "{screen}");
    assert!(screen.contains("TPOT SLA") && screen.contains("error rate SLA"));
    // the TPOT and error-rate SLAs go into the search
    a.setup.set(FieldId::TpotSla, "40ms");
    a.setup.set(FieldId::ErrorRateSla, "0.02");
    let r = a.setup.to_request();
    let slas: Vec<String> = r.slas().iter().map(|t| t.describe()).collect();
    assert_eq!(slas, ["p95 TPOT <= 40 ms", "avg error rate <= 2.0 %"]);
    // and come back from a command line that gave them
    let f = super::setup::SetupForm::from_request(&choices(), &r);
    assert_eq!(f.get(FieldId::TpotSla), "p95:40ms");
    assert_eq!(f.get(FieldId::ErrorRateSla), "avg:0.02");
    let again: Vec<String> = f.to_request().slas().iter().map(|t| t.describe()).collect();
    assert_eq!(again, slas);
}

#[test]
fn a_search_without_an_sla_is_refused_in_the_forms_words_until_one_is_filled_in() {
    let mut a = app();
    a.on_key(code(KeyCode::Right));
    assert!(matches!(a.on_key(ctrl_s()), Action::None));
    let want = "a search needs at least one SLA: e2e, TTFT, TPOT or error rate SLA";
    assert_eq!(
        a.status.as_deref(),
        Some(format!("fix e2e SLA: {want}").as_str())
    );
    assert_eq!(a.setup.fields[a.setup.selected].id, FieldId::E2eSla);
    assert_eq!(error_of(&a, FieldId::E2eSla).as_deref(), Some(want));
    // a TPOT SLA is enough: the e2e row's message and the status go
    a.setup.select(FieldId::TpotSla);
    type_text(&mut a, "50ms");
    a.on_key(code(KeyCode::Enter));
    assert_eq!(error_of(&a, FieldId::E2eSla), None);
    assert_eq!(a.status, None);
    assert!(matches!(a.on_key(ctrl_s()), Action::Start(_)));
    // back to a sweep, none is needed
    let mut a = app();
    a.on_key(code(KeyCode::Right));
    a.on_key(ctrl_s());
    a.setup.select(FieldId::Mode);
    a.on_key(code(KeyCode::Left));
    assert_eq!(error_of(&a, FieldId::E2eSla), None);
    assert_eq!(a.status, None);
}

#[test]
fn ctrl_s_starts_from_anywhere_keeping_what_is_typed_or_names_the_field() {
    // from a text row being edited: the text is kept, then the run starts with it
    let mut a = app();
    a.setup.select(FieldId::Requests);
    type_text(&mut a, "64");
    let Action::Start(r) = a.on_key(ctrl_s()) else {
        panic!("Ctrl-S starts")
    };
    assert_eq!(r.run().requests, Some(64));
    assert_eq!(a.setup.editing, None);
    // not valid: the cursor goes to the field and the status names it
    let mut a = app();
    a.setup.select(FieldId::Model);
    a.setup.set(FieldId::Concurrency, "16,,64");
    a.setup.set(FieldId::SearchMin, "0");
    assert!(matches!(a.on_key(ctrl_s()), Action::None));
    assert_eq!(a.setup.fields[a.setup.selected].id, FieldId::Concurrency);
    assert_eq!(
        a.status.as_deref(),
        Some("fix concurrency: an empty level between commas")
    );
    // (search min is not on a sweep's form: not checked)
    assert_eq!(error_of(&a, FieldId::SearchMin), None);
    // search max below search min is named on search max
    let mut a = app();
    a.on_key(code(KeyCode::Right));
    a.setup.set(FieldId::E2eSla, "50s");
    a.setup.set(FieldId::SearchMin, "64");
    a.setup.set(FieldId::SearchMax, "32");
    assert!(matches!(a.on_key(typed('s')), Action::None));
    assert_eq!(
        a.status.as_deref(),
        Some("fix search max: below search min 64")
    );
}
