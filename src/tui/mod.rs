//! The TUI runtime: owns the terminal and the I/O tasks, feeds `App` one
//! event channel, carries out its effects, and redraws when something
//! changed (bursts coalesced, at most 60 frames a second). Idle, it sleeps.

use std::collections::VecDeque;
use std::time::Duration;

use anyhow::Context as _;
use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use futures::StreamExt;
// ratatui's `Terminal` draws on the user's tty: a `Screen` here, since a
// terminal in podbay is a session on a container (`app::terminal`).
use ratatui::Terminal as Screen;
use ratatui::backend::CrosstermBackend;
use tokio::sync::mpsc;

use crate::app::keymap::Keymap;
use crate::app::{App, AppOptions, Effect, Event};
use crate::cluster::client::{Connection, PluginTerminal, Target};
use crate::term::Size;
use crate::theme::Theme;
use crate::tty::{self, TtyGuard};
use connect::connect_the_browser;
use executor::{Tagged, Tasks};
use sessions::Sessions;

pub struct TuiOptions {
    pub target: Target,
    /// Contexts whose pods the list shows beside the target's.
    pub other_contexts: Vec<String>,
    pub all_namespaces: bool,
    pub namespace: Option<String>,
    pub fallback_namespaces: Vec<String>,
    pub keymap: Keymap,
    pub theme: Theme,
    pub debug_images: Vec<String>,
    pub debug_profile: crate::model::debug::Profile,
    /// `[profiles.NAME]`, offered in the launcher after the built-ins.
    pub custom_profiles: Vec<crate::model::debug::CustomProfile>,
    /// `[files] download_dir`.
    pub download_dir: String,
    /// How long adding a debug container may take.
    pub launch_timeout: Duration,
    /// Where launched images are remembered for the launcher.
    pub image_history: Option<std::path::PathBuf>,
    pub panes: crate::app::PaneOptions,
    /// How often session streams are pinged.
    pub keepalive: Option<Duration>,
    /// Where `:record` writes its files.
    pub recordings: std::path::PathBuf,
    /// A sentence for the status line at start (the demo's fallback).
    pub notice: Option<String>,
    /// Where the workspace is kept, and whether to bring it back.
    pub workspace: Option<WorkspaceOptions>,
}

pub struct WorkspaceOptions {
    pub store: kept::Store,
    pub restore: crate::app::restore::RestoreChoice,
    /// The command line chose the context or the namespaces: a restore
    /// leaves the browser where they put it.
    pub browser_pinned: bool,
}

mod connect;
mod executor;
mod files;
pub mod kept;
mod log_pane;
mod outbox;
mod pacer;
mod pulse;
mod session_task;
mod sessions;
mod turns;

const FRAME: Duration = Duration::from_millis(16);
/// How long a one-off read (a namespace's labels) may take before podbay
/// goes on without it.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Output parsed per loop turn, from every session together: a key typed
/// meanwhile waits for the turn, so about one chunk (a session's chunk or
/// a log pane's batch is 16 KiB, about a millisecond of vt100's work: a
/// turn takes small events up to this, or one chunk); floods beside each
/// other take turns.
const OUTPUT_BUDGET: usize = 12 * 1024;
/// How long after a key its echo counts as urgent.
const ECHO_WINDOW: Duration = Duration::from_millis(150);

/// Connects, checks the server answers, then runs the TUI until quit.
/// Errors before the TUI starts are one sentence for stderr.
pub async fn run(mut options: TuiOptions) -> anyhow::Result<()> {
    let (connection, others, passed_over) =
        connect_the_browser(&options.target, &options.other_contexts).await?;
    // From here on the screen and the keyboard are the TUI's: also for `:ctx`.
    options.target.plugins = PluginTerminal::Withheld;
    let namespace = options
        .namespace
        .clone()
        .unwrap_or_else(|| connection.namespace.clone());
    let (mut app, effects) = App::new(AppOptions {
        cluster: connection.cluster(),
        context: connection.context.clone(),
        others,
        contexts: connection.contexts.clone(),
        namespace_chosen: options.namespace.is_some(),
        namespace,
        all_namespaces: options.all_namespaces,
        fallback_namespaces: options.fallback_namespaces.clone(),
        keymap: options.keymap.clone(),
        now: jiff::Timestamp::now(),
        debug_images: options.debug_images.clone(),
        debug_profile: options.debug_profile,
        download_dir: options.download_dir.clone(),
        panes: options.panes.clone(),
    });
    app.custom_profiles = options.custom_profiles.clone();
    if let Some(notice) = options.notice.take().or(passed_over) {
        app.message = Some(crate::app::warning(notice));
    }

    let guard = TtyGuard::enter().context("cannot put the terminal in full-screen mode")?;
    // A frame goes out in a few large writes, not one per cell: crossterm
    // writes each command on its own, and stdout's line buffer holds 1 KiB.
    let out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout());
    let mut screen =
        Screen::new(CrosstermBackend::new(out)).context("cannot draw on this terminal")?;
    if let Ok(size) = screen.size() {
        app.update(Event::Resize(Size::new(size.width, size.height)));
    }
    let (tx, mut rx) = mpsc::channel::<Tagged>(4096);
    let (connected_tx, mut connected) = mpsc::channel::<Connection>(1);
    let (beside_tx, mut beside) = mpsc::channel::<(String, Result<Connection, String>)>(8);
    let (outboxes, mut ready) = outbox::Outboxes::new();
    let mut sessions = Sessions::new(outboxes);
    sessions.keepalive = options.keepalive;
    sessions.recordings = options.recordings.clone();
    sessions.stderr_sgr = options.theme.stderr_sgr();
    // Some terminals keep the default, others the configured length.
    sessions.scrollback = options
        .panes
        .scrollback
        .max(crate::term::grid::DEFAULT_SCROLLBACK);
    let mut tasks = Tasks::new(
        connection,
        options.target.clone(),
        tx,
        connected_tx,
        beside_tx,
        sessions,
    );
    tasks.image_history = options.image_history.clone();
    tasks.launch_timeout = options.launch_timeout;
    tasks.watch_namespaces();
    tasks.feel_pulse();
    let mut effects = effects;
    let mut keeper = None;
    if let Some(workspace) = options.workspace.take() {
        match workspace.store.read(crate::app::saved::LAST) {
            Ok(Some(saved)) => {
                effects.extend(app.offer_restore(
                    saved,
                    workspace.restore,
                    workspace.browser_pinned,
                ));
            }
            Ok(None) => {}
            Err(sentence) => app.message = Some(crate::app::warning(sentence)),
        }
        app.kept_workspaces = workspace.store.names();
        tasks.workspaces = Some(workspace.store.clone());
        // What it starts with is not written: a start that changes
        // nothing (--no-restore, the question open) leaves the kept one.
        keeper = Some(Keeper::new(workspace.store, &app, &tasks));
    }
    let started: VecDeque<Event> = effects.into_iter().filter_map(|e| tasks.run(e)).collect();
    let mut quit = apply(&mut app, &mut tasks, &mut screen, started);

    let mut input = EventStream::new();
    let mut ticks = tokio::time::interval(Duration::from_secs(1));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let stop = tty::termination();
    tokio::pin!(stop);
    let mut dirty = true;
    let mut last_frame = tokio::time::Instant::now() - FRAME;
    let theme = options.theme;
    // When the focused terminal answers a key just typed, its echo is
    // drawn at once instead of at the next frame boundary.
    let mut last_key = tokio::time::Instant::now() - ECHO_WINDOW;
    let mut echo_due = false;
    let panic_key = test_panic_key();
    let mut burst = Burst::default();
    while !quit {
        let hush_ends = tasks.sessions.hush_ends();
        let since_frame = last_frame.elapsed();
        if dirty && (echo_due || since_frame >= FRAME) {
            let drawing = tokio::time::Instant::now();
            screen
                .draw(|f| crate::ui::draw(f, &app, &theme))
                .context("drawing failed")?;
            turns::drawn(drawing.elapsed());
            if echo_due {
                tracing::debug!(target: "podbay::echo", "echo drawn {} µs after the key", last_key.elapsed().as_micros());
            }
            last_frame = tokio::time::Instant::now();
            dirty = false;
            echo_due = false;
        }
        let redraw_in = FRAME.saturating_sub(last_frame.elapsed());
        // Keys first: they must never wait behind output.
        let event = tokio::select! {
            biased;
            _ = &mut stop => break,
            Some(Ok(term)) = input.next() => match term {
                TermEvent::Key(k) if k.kind != KeyEventKind::Release => Some(Event::Key(k)),
                TermEvent::Mouse(m) => Some(Event::Mouse(m)),
                TermEvent::Paste(text) => Some(Event::Paste(text)),
                TermEvent::Resize(w, h) => Some(Event::Resize(Size::new(w, h))),
                _ => None,
            },
            Some(tagged) = rx.recv() => tasks.current(tagged),
            Some(connection) = connected.recv() => {
                let event = Event::Connected {
                    cluster: connection.cluster(),
                    context: connection.context.clone(),
                    namespace: connection.namespace.clone(),
                    contexts: connection.contexts.clone(),
                };
                tasks.replace_connection(connection);
                Some(event)
            }
            Some((context, outcome)) = beside.recv() => {
                Some(tasks.connected_beside(context, outcome))
            }
            Some(id) = ready.recv() => {
                tasks.sessions.mark_ready(id);
                None
            }
            _ = ticks.tick() => Some(Event::Tick(jiff::Timestamp::now())),
            () = std::future::ready(()), if tasks.sessions.has_output() => None,
            _ = tokio::time::sleep_until(hush_ends.unwrap_or_else(tokio::time::Instant::now)), if hush_ends.is_some() => None,
            _ = tokio::time::sleep(redraw_in), if dirty => None,
        };
        if let Some(Event::Key(key)) = &event
            && panic_key.is_some_and(|c| key.code == crossterm::event::KeyCode::Char(c))
        {
            if std::env::var_os("PODBAY_TEST_PANIC_IN_TASK").is_some() {
                tokio::spawn(async {
                    panic!("test-only panic in a task, asked for by PODBAY_TEST_PANIC_KEY")
                });
            } else {
                panic!("test-only panic, asked for by PODBAY_TEST_PANIC_KEY");
            }
        }
        // A key for a pane: until its echo is back, the other panes wait
        // (a pane without a tty echoes by itself: nothing to wait for).
        if matches!(event, Some(Event::Key(_) | Event::Paste(_)))
            && app.focus == crate::app::Focus::Workspace
            && let Some(pane) = app.workspace.focused_pane()
            && app
                .workspace
                .terminals
                .get(&pane.terminal)
                .is_none_or(|t| t.input() == crate::app::terminal::Input::Raw)
        {
            tasks.sessions.await_echo(pane.terminal);
        }
        let mut pending: Vec<Event> = Vec::new();
        if let Some(Event::Key(_)) = &event {
            let burst = burst.key(tokio::time::Instant::now());
            pending.extend(burst.map(Event::Burst));
        }
        pending.extend(event);
        // Coalesce a burst (a relist, a flood of events) into one frame.
        while pending.len() < 512 {
            match rx.try_recv() {
                Ok(tagged) => pending.extend(tasks.current(tagged)),
                Err(_) => break,
            }
        }
        while let Ok(id) = ready.try_recv() {
            tasks.sessions.mark_ready(id);
        }
        pending.extend(tasks.sessions.take_output(OUTPUT_BUDGET));
        if pending.is_empty() {
            continue;
        }
        dirty = true;
        if pending
            .iter()
            .any(|e| matches!(e, Event::Key(_) | Event::Paste(_)))
        {
            last_key = tokio::time::Instant::now();
        }
        if last_key.elapsed() < ECHO_WINDOW {
            let focused = app.workspace.focused_pane().map(|p| p.terminal);
            echo_due |= pending
                .iter()
                .any(|e| matches!(e, Event::SessionOutput { id, .. } if Some(*id) == focused));
        }
        let turn = turns::Turn::begin(&pending);
        quit |= apply(&mut app, &mut tasks, &mut screen, pending.into());
        if let Some(turn) = turn {
            turn.end();
        }
        if let Some(keeper) = &mut keeper {
            keeper.keep_if_due(&mut app, &tasks);
        }
    }
    tasks.stop_all();
    // The node debug pods podbay made go with it, as with their last pane.
    tasks.delete_now(app.owned_pods()).await;
    if let Some(keeper) = &mut keeper
        && app.keeps_workspace()
    {
        // Gone with podbay: their panes would only say so.
        app.forget_owned_panes();
        keeper.keep(&mut app, &tasks);
    }
    drop(screen);
    drop(guard);
    Ok(())
}

/// Keys closer together than anyone types: text pasted into a terminal
/// without bracketed paste, or keys a program sends, arrive as one read.
const BURST_GAP: Duration = Duration::from_millis(8);

/// Whether keys are arriving as a burst, told to the app when it changes.
#[derive(Default)]
struct Burst {
    last: Option<tokio::time::Instant>,
    on: bool,
}

impl Burst {
    /// A key arrived at `at`: `Some(on)` when that starts or ends a burst.
    fn key(&mut self, at: tokio::time::Instant) -> Option<bool> {
        let on = self
            .last
            .is_some_and(|last| at.saturating_duration_since(last) < BURST_GAP);
        self.last = Some(at);
        (on != self.on).then(|| {
            self.on = on;
            on
        })
    }
}

/// Keeps the workspace as it changes: at most once a second, so a crash
/// loses at most the last second.
struct Keeper {
    store: kept::Store,
    /// What was last written (its time aside), to write only changes.
    written: Option<crate::app::saved::SavedWorkspace>,
    next: tokio::time::Instant,
    /// A write failed once: said once, not every second.
    failed: bool,
}

impl Keeper {
    fn new(store: kept::Store, app: &App, tasks: &Tasks) -> Keeper {
        let (mut workspace, terminals) = app.saved();
        tasks.add_log_positions(&mut workspace, &terminals);
        Keeper {
            store,
            written: Some(workspace),
            next: tokio::time::Instant::now(),
            failed: false,
        }
    }

    fn keep_if_due(&mut self, app: &mut App, tasks: &Tasks) {
        if tokio::time::Instant::now() >= self.next && app.keeps_workspace() {
            self.next = tokio::time::Instant::now() + Duration::from_secs(1);
            self.keep(app, tasks);
        }
    }

    fn keep(&mut self, app: &mut App, tasks: &Tasks) {
        let (mut workspace, terminals) = app.saved();
        tasks.add_log_positions(&mut workspace, &terminals);
        let unchanged = self.written.as_ref().is_some_and(|w| {
            crate::app::saved::SavedWorkspace {
                saved_at: workspace.saved_at,
                ..w.clone()
            } == workspace
        });
        if unchanged {
            return;
        }
        match self.store.write(crate::app::saved::LAST, &workspace) {
            Ok(_) => self.written = Some(workspace),
            Err(sentence) if !self.failed => {
                self.failed = true;
                tracing::warn!("{sentence}");
                app.message = Some(crate::app::warning(format!(
                    "{sentence} Panes will not come back after a restart."
                )));
            }
            Err(_) => {}
        }
    }
}

/// Gives the app each event, and carries out the effects of each,
/// including the events they report at once. True once the app quits.
fn apply(
    app: &mut App,
    tasks: &mut Tasks,
    screen: &mut Screen<CrosstermBackend<std::io::BufWriter<std::io::Stdout>>>,
    mut pending: VecDeque<Event>,
) -> bool {
    let mut quit = false;
    while let Some(event) = pending.pop_front() {
        if let Event::SessionOutput { id, bytes } = &event {
            pending.extend(tasks.sessions.record(*id, bytes));
        }
        for effect in app.update(event) {
            match effect {
                Effect::Quit => quit = true,
                Effect::Copy(text) => {
                    if let Err(e) = copy_to_clipboard(screen.backend_mut(), &text) {
                        tracing::warn!("cannot write to the terminal: {e}");
                    }
                }
                effect => pending.extend(tasks.run(effect)),
            }
        }
    }
    quit
}

/// Debug builds only: the key on which to panic (in the UI loop, or in a
/// task with `PODBAY_TEST_PANIC_IN_TASK` set), so end-to-end tests can
/// check that a panic restores the user's terminal and ends podbay.
fn test_panic_key() -> Option<char> {
    if !cfg!(debug_assertions) {
        return None;
    }
    std::env::var("PODBAY_TEST_PANIC_KEY").ok()?.chars().next()
}

/// Asks the user's own terminal to put `text` on the clipboard (OSC 52).
/// Only ever done at the user's request, from copy mode.
fn copy_to_clipboard(out: &mut impl std::io::Write, text: &str) -> std::io::Result<()> {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    write!(out, "\x1b]52;c;{encoded}\x07")?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_starts_with_the_second_quick_key_and_ends_with_a_slow_one() {
        let start = tokio::time::Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut burst = Burst::default();
        assert_eq!(burst.key(at(0)), None, "one key is no burst");
        assert_eq!(burst.key(at(100)), None, "a person's pace");
        assert_eq!(burst.key(at(101)), Some(true));
        assert_eq!(burst.key(at(102)), None, "still on: said once");
        assert_eq!(burst.key(at(160)), Some(false));
        assert_eq!(burst.key(at(300)), None);
    }
}
