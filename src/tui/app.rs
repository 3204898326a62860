//! `top`'s two threads: this one reads and analyses frames ([`engine::run`]); a screen thread
//! owns the terminal (raw mode, alternate screen), takes the engine's ticks, redraws at most
//! four times a second and sends the engine the user's commands. Quitting (`q`, Ctrl-C,
//! SIGTERM) restores the terminal before anything else is printed.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, mpsc::SyncSender};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::engine::{self, Command, Engine, Feed, Settings, TICK, Tick};
use super::model::Model;
use super::pane;
use super::render::{self, Prompt, Screen};
use crate::analyze::Report;

/// How `top` ended.
pub struct Finished {
    /// The final report (for `--summary`).
    pub report: Report,
    /// Frames read.
    pub frames: u64,
    /// The read error that ended the capture, if one did.
    pub error: Option<String>,
}

/// Run `top` over `feed` until the user quits or `stop` is set (a signal): the screen on a
/// thread of its own, the capture on this one. `source` names the input in the header; `w`
/// writes into `save_dir`.
///
/// # Errors
/// The terminal cannot be set up or drawn on (after restoring it).
pub fn run(
    feed: &mut dyn Feed,
    settings: Settings,
    source: String,
    save_dir: PathBuf,
    stop: Arc<AtomicBool>,
) -> Result<Finished> {
    let (tick_tx, tick_rx): (SyncSender<Tick>, Receiver<Tick>) = mpsc::sync_channel(4);
    let (cmd_tx, cmd_rx) = mpsc::channel();
    let ui_stop = Arc::clone(&stop);
    let ui = std::thread::Builder::new()
        .name("top-screen".into())
        .spawn(move || {
            // Whatever ends the screen, a panic included, ends the capture.
            let _stop = StopOnDrop(Arc::clone(&ui_stop));
            screen(&tick_rx, &cmd_tx, &ui_stop, source, &save_dir)
        })
        .context("starting the screen thread")?;
    let engine = engine::run(Engine::new(settings), feed, &tick_tx, &cmd_rx, &stop);
    drop(tick_tx);
    let shown = ui
        .join()
        .map_err(|_| anyhow::anyhow!("the screen thread panicked"))?;
    let frames = engine.frames();
    let error = engine.error().map(str::to_string);
    let report = engine.finish();
    shown?;
    Ok(Finished {
        report,
        frames,
        error,
    })
}

/// Where `w` writes: `DIR/roce-inspect-top-UNIXTIME.pcapng`, with `-2`, `-3`, … before the
/// extension when that file exists (two `w` within a second).
fn save_path(dir: &std::path::Path, unix_s: u64) -> PathBuf {
    let mut p = dir.join(format!("roce-inspect-top-{unix_s}.pcapng"));
    let mut n = 1;
    while p.exists() {
        n += 1;
        p = dir.join(format!("roce-inspect-top-{unix_s}-{n}.pcapng"));
    }
    p
}

/// Sets the flag when dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// The screen thread: set the terminal up, loop, restore it whatever happened.
fn screen(
    ticks: &Receiver<Tick>,
    commands: &Sender<Command>,
    stop: &AtomicBool,
    source: String,
    save_dir: &std::path::Path,
) -> Result<()> {
    let mut term = ratatui::try_init().context("setting up the terminal")?;
    let mut ui = Ui {
        model: Model::default(),
        screen: Screen {
            source,
            ..Screen::default()
        },
        started: Instant::now(),
        commands: commands.clone(),
        save_dir: save_dir.to_path_buf(),
        selected: None,
    };
    let result = ui.event_loop(&mut term, ticks, stop);
    ratatui::try_restore().context("restoring the terminal")?;
    result
}

/// The screen's state.
struct Ui {
    model: Model,
    screen: Screen,
    started: Instant,
    commands: Sender<Command>,
    save_dir: PathBuf,
    /// The selection last told to the engine.
    selected: Option<crate::analyze::flow::FlowKey>,
}

/// What a key asks for.
enum Action {
    Quit,
    Redraw,
    Nothing,
}

impl Ui {
    fn event_loop(
        &mut self,
        term: &mut ratatui::DefaultTerminal,
        ticks: &Receiver<Tick>,
        stop: &AtomicBool,
    ) -> Result<()> {
        let mut last_draw: Option<Instant> = None;
        let mut dirty = true;
        while !stop.load(Ordering::SeqCst) {
            while let Ok(t) = ticks.try_recv() {
                self.apply(t);
                dirty = true;
            }
            if dirty && last_draw.is_none_or(|t| t.elapsed() >= TICK) {
                self.screen.elapsed_s = self.started.elapsed().as_secs_f64();
                term.draw(|f| render::draw(f, &self.model, &self.screen))
                    .context("drawing")?;
                last_draw = Some(Instant::now());
                dirty = false;
            }
            if event::poll(Duration::from_millis(50)).context("reading the terminal")? {
                match event::read().context("reading the terminal")? {
                    Event::Key(k) if k.kind != KeyEventKind::Release => match self.key(k) {
                        Action::Quit => break,
                        Action::Redraw => dirty = true,
                        Action::Nothing => {}
                    },
                    Event::Resize(..) => dirty = true,
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Take a tick of the engine.
    fn apply(&mut self, t: Tick) {
        if let Some(first) = t.first_ts_ns {
            self.model.set_origin(first);
        }
        self.model.set_shown(t.shown);
        self.model
            .update(t.now_ns, &t.flows, t.frames, t.roce, t.bytes);
        let s = &mut self.screen;
        s.drops = t.drops;
        s.first_ts_ns = t.first_ts_ns;
        if !self.model.paused() {
            s.recent = t.recent;
        }
        if let Some(r) = t.report
            && !s.report.as_ref().is_some_and(|o| Arc::ptr_eq(o, &r))
        {
            // The one place the pane's lines are made (see `pane`).
            s.findings = pane::lines(&r);
            s.report = Some(r);
        }
        if t.ended.is_some() {
            s.ended = t.ended;
        }
        if t.message.is_some() {
            s.message = t.message;
        }
        self.tell_selection();
    }

    /// Tell the engine when the selection changed.
    fn tell_selection(&mut self) {
        let now = self.model.selected();
        if now != self.selected {
            self.selected = now;
            self.screen.recent.clear();
            let _ = self.commands.send(Command::Select(now));
        }
    }

    fn key(&mut self, k: KeyEvent) -> Action {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        if self.screen.prompt.is_some() {
            return self.prompt_key(k.code, ctrl);
        }
        match k.code {
            KeyCode::Char('q') | KeyCode::Char('Q') => return Action::Quit,
            KeyCode::Char('c') if ctrl => return Action::Quit,
            KeyCode::Up | KeyCode::Char('k') => self.model.move_selection(-1),
            KeyCode::Down | KeyCode::Char('j') => self.model.move_selection(1),
            KeyCode::PageUp => self.model.move_selection(-10),
            KeyCode::PageDown => self.model.move_selection(10),
            KeyCode::Home => self.model.move_selection(isize::MIN / 2),
            KeyCode::End => self.model.move_selection(isize::MAX / 2),
            KeyCode::Enter => self.screen.detail = !self.screen.detail,
            KeyCode::Esc => self.screen.detail = false,
            KeyCode::Char('s') => self.model.cycle_sort(),
            KeyCode::Char('p') => {
                self.model.toggle_pause();
                let _ = self.commands.send(Command::Pause(self.model.paused()));
            }
            KeyCode::Char('/') => {
                // Opened on the filter applied, to edit it (as Wireshark's filter bar).
                let text = self
                    .model
                    .shown()
                    .map(|s| s.expr.clone())
                    .unwrap_or_default();
                self.screen.prompt = Some(Prompt::new(text));
            }
            KeyCode::Char('w') => {
                let path = save_path(&self.save_dir, engine::wall_ns() / 1_000_000_000);
                self.screen.message = Some(format!("writing {}…", path.display()));
                let _ = self.commands.send(Command::Write(path));
            }
            _ => return Action::Nothing,
        }
        self.tell_selection();
        Action::Redraw
    }
}

impl Ui {
    /// A key while the `/` prompt is open: typed text, Backspace, Ctrl-U (clear), Enter
    /// (apply; an empty line clears the filter), Esc (cancel); Ctrl-C still quits.
    fn prompt_key(&mut self, code: KeyCode, ctrl: bool) -> Action {
        let Some(p) = self.screen.prompt.as_mut() else {
            return Action::Nothing;
        };
        match code {
            KeyCode::Char('c') if ctrl => return Action::Quit,
            KeyCode::Char('u') if ctrl => p.text.clear(),
            KeyCode::Char(c) if !ctrl => p.text.push(c),
            KeyCode::Backspace => {
                p.text.pop();
            }
            KeyCode::Esc => self.screen.prompt = None,
            KeyCode::Enter => match prompt_command(&p.text) {
                Ok(c) => {
                    let _ = self.commands.send(c);
                    self.screen.prompt = None;
                    return Action::Redraw;
                }
                Err(e) => {
                    p.error = Some(e);
                    return Action::Redraw;
                }
            },
            _ => return Action::Nothing,
        }
        if let Some(p) = self.screen.prompt.as_mut() {
            p.check();
        }
        Action::Redraw
    }
}

/// The engine's command for the filter `text` typed at the `/` prompt (blank: no filter); the
/// compiler's one-line error (column and expectation, as `read -Y` prints it) otherwise.
fn prompt_command(text: &str) -> Result<Command, String> {
    if text.trim().is_empty() {
        return Ok(Command::Filter(None));
    }
    // Compiled as typed, so that the error's column is the typed text's.
    let f = super::shown::compile(text).map_err(|e| e.to_string())?;
    Ok(Command::Filter(Some((text.trim().to_string(), f))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_commands() {
        assert!(matches!(prompt_command("  "), Ok(Command::Filter(None))));
        match prompt_command(" bth.dest_qp == 0x11 ") {
            Ok(Command::Filter(Some((e, _)))) => assert_eq!(e, "bth.dest_qp == 0x11"),
            _ => panic!("not a filter"),
        }
        // The error read -Y gives for the same text (column and expectation).
        let e = prompt_command("bth.dest_qp == ").unwrap_err();
        let cli = crate::filter::DisplayFilter::compile("bth.dest_qp == ").unwrap_err();
        assert_eq!(e, cli.to_string());
        assert!(e.starts_with("display filter: column "), "{e}");
    }

    #[test]
    fn save_paths_do_not_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let first = save_path(dir.path(), 1_700_000_000);
        assert_eq!(first, dir.path().join("roce-inspect-top-1700000000.pcapng"));
        std::fs::write(&first, b"").unwrap();
        let second = save_path(dir.path(), 1_700_000_000);
        assert_eq!(
            second,
            dir.path().join("roce-inspect-top-1700000000-2.pcapng")
        );
        std::fs::write(&second, b"").unwrap();
        assert!(
            save_path(dir.path(), 1_700_000_000).ends_with("roce-inspect-top-1700000000-3.pcapng")
        );
    }
}
