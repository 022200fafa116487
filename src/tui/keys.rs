//! The dashboard's keys ([`App::on_key`]): what each key does on each screen, in the help
//! box, while a field is typed into, and in the confirmations. Scrolling stops at the last
//! row, as far as the render's layout of the panels at the terminal's size says.

use super::app::{Action, App, ChartMode, Panel, RunEntry, Screen};
use super::setup::FieldId;
use crate::plan::capacity::Peak;
use crate::state::RunState;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Rows a page key scrolls.
const PAGE: isize = 10;

impl App {
    /// Handles one key press.
    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        let ctrl_c =
            key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c');
        if self.confirm_quit {
            // a second Ctrl-C is a yes, as `q` is
            return match key.code {
                KeyCode::Char('y') | KeyCode::Char('q') => Action::Quit,
                _ if ctrl_c => Action::Quit,
                _ => {
                    self.confirm_quit = false;
                    Action::None
                }
            };
        }
        if let Some((_, path)) = self.confirm_delete.take() {
            return match key.code {
                KeyCode::Char('y') => Action::DeleteRun(path),
                _ => {
                    self.status = Some("kept the run".into());
                    Action::None
                }
            };
        }
        if ctrl_c {
            // a live run is never stopped by one key press: Ctrl-C asks, as `q` does (a
            // watched one goes on when the watcher leaves)
            return if self.live && !self.watching {
                self.confirm_quit = true;
                Action::None
            } else {
                Action::Quit
            };
        }
        if self.help {
            let max = super::render::help_max_scroll(self);
            match key.code {
                KeyCode::Down | KeyCode::Char('j') => {
                    self.help_scroll = (self.help_scroll + 1).min(max)
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    self.help_scroll = self.help_scroll.saturating_sub(1)
                }
                _ => self.help = false,
            }
            return Action::None;
        }
        // on the setup screen a printable key on a text field types there, never a command
        if let Some(c) = self.typed_into_setup(key) {
            self.setup.start_typing(c);
            return Action::None;
        }
        if self.setup.editing.is_some() {
            return self.on_edit_key(key);
        }
        match key.code {
            KeyCode::Char('?') | KeyCode::F(1) => {
                self.help = true;
                self.help_scroll = 0;
                Action::None
            }
            KeyCode::Char('q') => {
                if self.live && !self.watching {
                    self.confirm_quit = true;
                    Action::None
                } else {
                    Action::Quit
                }
            }
            KeyCode::Char('x') if self.live => {
                self.status = Some("stopping: keeping finished levels".into());
                Action::Stop
            }
            KeyCode::Char('1') => self.go(Screen::Setup),
            KeyCode::Char('2') => self.go(Screen::Run),
            KeyCode::Char('3') => {
                self.screen = Screen::Runs;
                Action::LoadRuns
            }
            _ => match self.screen {
                Screen::Setup => self.on_setup_key(key),
                Screen::Run => self.on_run_key(key),
                Screen::Runs => self.on_runs_key(key),
            },
        }
    }

    fn go(&mut self, s: Screen) -> Action {
        self.screen = s;
        Action::None
    }

    fn on_edit_key(&mut self, key: KeyEvent) -> Action {
        const MAX_TYPED_BYTES: usize = 1024;
        let on_setup = self.screen == Screen::Setup;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let Some(text) = self.setup.editing.as_mut() else {
            return Action::None;
        };
        match key.code {
            // Ctrl-S keeps what was typed and starts
            KeyCode::Char('s') | KeyCode::Char('S') if ctrl && on_setup => return self.start(),
            // room for a custom format's request template
            KeyCode::Char(c)
                if plain && !c.is_control() && text.len() + c.len_utf8() <= MAX_TYPED_BYTES =>
            {
                text.push(c)
            }
            KeyCode::Backspace => {
                text.pop();
            }
            KeyCode::Esc => self.setup.finish_edit(false),
            KeyCode::Enter => self.confirm_edit(0),
            // Tab (and the arrows) keep it and move on, as in a spreadsheet
            KeyCode::Tab | KeyCode::Down if on_setup => self.confirm_edit(1),
            KeyCode::BackTab | KeyCode::Up if on_setup => self.confirm_edit(-1),
            KeyCode::Tab => self.confirm_edit(0),
            KeyCode::F(1) => {
                self.help = true;
                self.help_scroll = 0;
            }
            _ => {}
        }
        Action::None
    }

    fn on_setup_key(&mut self, key: KeyEvent) -> Action {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('s') | KeyCode::Char('S') if ctrl => return self.start(),
            KeyCode::Up | KeyCode::Char('k') | KeyCode::BackTab => self.setup.move_cursor(-1),
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => self.setup.move_cursor(1),
            KeyCode::Home => self.setup.move_cursor(-(self.setup.fields.len() as i32)),
            KeyCode::End => self.setup.move_cursor(self.setup.fields.len() as i32),
            KeyCode::Left | KeyCode::Char('h') => self.setup.cycle(-1),
            KeyCode::Right | KeyCode::Char('l') => self.setup.cycle(1),
            KeyCode::Enter | KeyCode::Char('e') => self.setup.activate(),
            // Backspace or Delete on a text field empties it and starts typing
            KeyCode::Backspace | KeyCode::Delete if self.setup.selected_takes_text() => {
                self.setup.editing = Some(String::new())
            }
            KeyCode::Char('s') => return self.start(),
            _ => {}
        }
        self.refresh_fix_status();
        Action::None
    }

    fn start(&mut self) -> Action {
        if self.live {
            self.status = Some("a run is already going; x stops it".into());
            return Action::None;
        }
        // what is being typed is kept first (Ctrl-S while editing)
        self.setup.finish_edit(true);
        if !self.setup.validate() {
            // the cursor goes to the first field to fix, and the status says what
            if let Some((i, label, e)) = self.setup.first_error() {
                self.status = Some(format!("fix {label}: {e}"));
                self.setup.selected = i;
            }
            self.screen = Screen::Setup;
            return Action::None;
        }
        Action::Start(Box::new(self.setup.to_request()))
    }

    /// The character a key types into the setup form's selected text field when it is not
    /// being edited yet: any printable key (no Control, no Alt) starts editing it.
    fn typed_into_setup(&self, key: KeyEvent) -> Option<char> {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Char(c)
                if plain
                    && !c.is_control()
                    && self.screen == Screen::Setup
                    && self.setup.editing.is_none()
                    && self.setup.selected_takes_text() =>
            {
                Some(c)
            }
            _ => None,
        }
    }

    /// Keeps the text being typed (checking it as the field is left) and moves the cursor
    /// `step` rows; on the run screen (peak, price) the planning numbers follow.
    fn confirm_edit(&mut self, step: i32) {
        self.setup.finish_edit(true);
        if self.screen == Screen::Run {
            self.replan();
        } else {
            self.setup.move_cursor(step);
            self.refresh_fix_status();
        }
    }

    /// After a refused start the status says what to fix: it follows the form, naming the
    /// next field still wrong, and goes once none is.
    fn refresh_fix_status(&mut self) {
        if self
            .status
            .as_deref()
            .is_some_and(|s| s.starts_with("fix "))
        {
            self.status = self
                .setup
                .first_error()
                .map(|(_, label, e)| format!("fix {label}: {e}"));
        }
    }

    fn on_run_key(&mut self, key: KeyEvent) -> Action {
        if self.full_results {
            return self.on_full_results_key(key);
        }
        match key.code {
            KeyCode::Tab | KeyCode::Right | KeyCode::Char('l') => {
                self.focus = self.focus.step(false)
            }
            KeyCode::BackTab | KeyCode::Left | KeyCode::Char('h') => {
                self.focus = self.focus.step(true)
            }
            KeyCode::Down | KeyCode::Char('j') => self.scroll(1),
            KeyCode::Up | KeyCode::Char('k') => self.scroll(-1),
            KeyCode::PageDown => self.scroll(PAGE),
            KeyCode::PageUp => self.scroll(-PAGE),
            KeyCode::End | KeyCode::Char('G') => self.scroll(isize::MAX / 2),
            KeyCode::Home | KeyCode::Char('g') => self.scroll(-(isize::MAX / 2)),
            KeyCode::Char('r') | KeyCode::Enter => {
                self.full_results = true;
                self.full_scroll = 0;
            }
            KeyCode::Char('C') => self.clear_overlay(),
            KeyCode::Char('s') => return self.start(),
            KeyCode::Char('t') => {
                if self.time.is_none() {
                    self.status = Some(
                        "the time view shows open-loop levels: rates, schedules and replays".into(),
                    );
                } else {
                    self.chart_mode = if self.shows_time_view() {
                        ChartMode::Curves
                    } else {
                        ChartMode::Time
                    };
                }
            }
            KeyCode::Char('e') if !self.live => match &self.run.dir {
                Some(dir) => {
                    return Action::Export {
                        run: dir.clone(),
                        compare: self.overlay.as_ref().map(|o| o.1.clone()),
                    }
                }
                None => self.status = Some("no run to export yet".into()),
            },
            KeyCode::Char('p') => self.setup.edit(FieldId::PeakConcurrency),
            KeyCode::Char('$') => self.setup.edit(FieldId::PricePerHour),
            _ => {}
        }
        Action::None
    }

    /// Keys of the full-screen results view: scroll it, or leave it.
    fn on_full_results_key(&mut self, key: KeyEvent) -> Action {
        let max = super::render::scroll::full_results_max_scroll(self);
        let to = |from: usize, by: isize| from.saturating_add_signed(by).min(max);
        match key.code {
            KeyCode::Esc | KeyCode::Enter | KeyCode::Char('r') => self.full_results = false,
            KeyCode::Down | KeyCode::Char('j') => self.full_scroll = to(self.full_scroll, 1),
            KeyCode::Up | KeyCode::Char('k') => self.full_scroll = to(self.full_scroll, -1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.full_scroll = to(self.full_scroll, PAGE),
            KeyCode::PageUp => self.full_scroll = to(self.full_scroll, -PAGE),
            KeyCode::End | KeyCode::Char('G') => self.full_scroll = max,
            KeyCode::Home | KeyCode::Char('g') => self.full_scroll = 0,
            KeyCode::Char('s') => return self.start(),
            KeyCode::Char('e') if !self.live => {
                self.full_results = false;
                return self.on_run_key(key);
            }
            KeyCode::Char('p') | KeyCode::Char('$') => {
                self.full_results = false;
                return self.on_run_key(key);
            }
            _ => {}
        }
        Action::None
    }

    /// Scrolls the focused panel by `by` rows, stopping at its first and last rows. The
    /// levels table follows the newest level again once scrolled to its end.
    fn scroll(&mut self, by: isize) {
        let limits = super::render::scroll::scroll_limits(self);
        let to = |from: usize, max: usize| from.saturating_add_signed(by).min(max);
        match self.focus {
            Panel::Levels => {
                let from = if self.level_follow {
                    limits.levels
                } else {
                    self.level_scroll.min(limits.levels)
                };
                self.level_scroll = to(from, limits.levels);
                self.level_follow = self.level_scroll >= limits.levels;
            }
            Panel::Results => self.results_scroll = to(self.results_scroll, limits.results),
            Panel::Warnings => self.notes_scroll = to(self.notes_scroll, limits.notes),
            Panel::Charts => {}
        }
    }

    fn on_runs_key(&mut self, key: KeyEvent) -> Action {
        let n = self.runs.len();
        match key.code {
            KeyCode::Down | KeyCode::Char('j') if n > 0 => {
                self.runs_selected = (self.runs_selected + 1).min(n - 1)
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.runs_selected = self.runs_selected.saturating_sub(1)
            }
            KeyCode::Char('d') | KeyCode::Delete => {
                if let Some(r) = self.runs.get(self.runs_selected) {
                    self.confirm_delete = Some((r.id.clone(), r.path.clone()));
                }
            }
            KeyCode::Enter | KeyCode::Char('o') => {
                if let Some(r) = self.runs.get(self.runs_selected).cloned() {
                    return self.open_run(&r);
                }
            }
            KeyCode::Char('c') => {
                if let Some(r) = self.runs.get(self.runs_selected).cloned() {
                    match crate::report::load_levels(&r.path) {
                        Ok(levels) => {
                            let id = r.id.clone();
                            self.overlay = Some((r.id, r.path, levels));
                            self.refresh_view();
                            self.status = Some(if self.view.overlay.is_some() {
                                format!("{id} is drawn over the run screen's charts (C clears)")
                            } else {
                                format!(
                                    "{id} varies the other load (rate or concurrency): \
                                     its curves cannot share these axes"
                                )
                            });
                        }
                        Err(e) => self.status = Some(format!("cannot read {}: {e}", r.id)),
                    }
                }
            }
            KeyCode::Char('C') => self.clear_overlay(),
            _ => {}
        }
        Action::None
    }

    /// Shows a past run on the run screen.
    fn open_run(&mut self, r: &RunEntry) -> Action {
        if self.live {
            self.status = Some("a run is going; open past runs when it ends".into());
            return Action::None;
        }
        if let Some(p) = &r.problem {
            self.status = Some(format!("cannot open {}: {p}", r.id));
            return Action::None;
        }
        match crate::report::history::load_run(&r.path) {
            Ok(data) => {
                // read with the run's own SLAs, search bounds, peak and price, as `show` and
                // the report read it: the same answer, bracket and breaking point
                self.analysis = data.analysis();
                self.gate = None;
                self.run = RunState {
                    run_id: Some(r.id.clone()),
                    dir: Some(r.path.clone()),
                    endpoint: Some(r.endpoint.clone()),
                    model: Some(r.model.clone()),
                    levels: data.levels,
                    finished: true,
                    ..RunState::default()
                };
                self.refresh_view();
                self.screen = Screen::Run;
                self.reset_run_view();
                self.ended = Some(r.status);
                self.failure = data.echo["failure"].as_str().map(str::to_string);
                // `p` and `$` start from the peak and price the run was sized with
                let cap = &self.analysis.capacity;
                if let Some(Peak::Concurrency(v)) = cap.peak {
                    self.setup.set(FieldId::PeakConcurrency, &v.to_string());
                }
                if let Some(price) = cap.price_per_hour {
                    self.setup.set(FieldId::PricePerHour, &price.to_string());
                }
                // the header names the run
                self.status = None;
            }
            Err(e) => self.status = Some(format!("cannot open {}: {e}", r.id)),
        }
        Action::None
    }
}
