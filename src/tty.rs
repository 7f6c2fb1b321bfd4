//! The user's terminal: entering the TUI (raw mode, alternate screen,
//! bracketed paste, mouse) and leaving it on every exit path — normal
//! return, error, panic, SIGTERM, SIGHUP, SIGQUIT.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};

/// Whether the terminal is currently in TUI mode, so restoring twice (from
/// the guard and the panic hook) is harmless.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Puts the terminal in TUI mode; restores it when dropped.
pub struct TtyGuard {
    _private: (),
}

impl TtyGuard {
    pub fn enter() -> io::Result<Self> {
        install_panic_hook();
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut out = io::stdout();
        // Clearing here, instead of ratatui's Terminal::clear, avoids asking
        // the terminal for the cursor position and waiting up to 2 s for an
        // answer some terminals never give.
        if let Err(e) = execute!(
            out,
            EnterAlternateScreen,
            crossterm::terminal::Clear(crossterm::terminal::ClearType::All),
            EnableBracketedPaste,
            EnableMouseCapture,
            cursor::Hide
        ) {
            restore();
            return Err(e);
        }
        Ok(TtyGuard { _private: () })
    }
}

impl Drop for TtyGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Leaves TUI mode: mouse reporting off, bracketed paste off, main screen,
/// cursor shown, raw mode off. Safe to call at any time, any number of times.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    let _ = execute!(
        out,
        DisableMouseCapture,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // Stdout is held from here on: a panic in a task ends the process
        // (the hook this one wraps exits), and the UI thread, still
        // drawing, must not write a frame over the restored terminal.
        let held = io::stdout().lock();
        // Restore first, so the panic message lands on a usable screen.
        restore();
        previous(info);
        drop(held);
    }));
}

/// Resolves once the process has been asked to stop (SIGTERM, SIGHUP,
/// SIGQUIT, SIGINT outside raw mode), at any time since the first call
/// (then too, if it already was), so the caller can unwind and restore
/// the terminal; [`stopped_by`] then says which signal it was. The handlers
/// are in place when this returns, before the future is first awaited: a
/// signal sent just after (the simulator has printed its kubeconfig) is
/// caught, not left to kill the process. Every signal is counted by one
/// listener for the process's life, so none is lost between two steps that
/// each wait for one.
pub fn termination() -> impl std::future::Future<Output = ()> {
    signals_at_least(1)
}

/// Resolves once another signal comes than those already here: clean-up
/// (after the first, or at the end of the work) gives way to it.
pub fn next_termination() -> impl std::future::Future<Output = ()> {
    let now = *signals().borrow();
    signals_at_least(now + 1)
}

/// Each stop signal as it comes, from the one listener, for a run that
/// answers each in turn (many pods: a first ctrl-c stops launching, a
/// second leaves). None is missed between two waits.
pub struct Stops {
    received: tokio::sync::watch::Receiver<u32>,
    seen: u32,
}

/// The stop signals from now on (the listener is in place when this returns).
pub fn stops() -> Stops {
    let received = signals();
    let seen = *received.borrow();
    Stops { received, seen }
}

impl Stops {
    /// The next signal's number; never, if none can be listened to. A
    /// wait dropped before it ends loses nothing.
    pub async fn next(&mut self) -> i32 {
        let seen = self.seen;
        if self.received.wait_for(|n| *n > seen).await.is_err() {
            std::future::pending::<()>().await;
        }
        self.seen += 1;
        LAST.load(Ordering::SeqCst)
    }
}

fn signals_at_least(count: u32) -> impl std::future::Future<Output = ()> {
    let mut received = signals();
    async move {
        if received.wait_for(|n| *n >= count).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// How many stop signals have come, from the one listener (started by the
/// first call, inside the runtime).
fn signals() -> tokio::sync::watch::Receiver<u32> {
    use tokio::signal::unix::{SignalKind, signal};
    static RECEIVED: std::sync::OnceLock<tokio::sync::watch::Sender<u32>> =
        std::sync::OnceLock::new();
    RECEIVED
        .get_or_init(|| {
            let (count, _) = tokio::sync::watch::channel(0u32);
            let kinds = [
                SignalKind::terminate(),
                SignalKind::hangup(),
                SignalKind::quit(),
                SignalKind::interrupt(),
            ];
            let streams: Vec<_> = kinds
                .into_iter()
                .filter_map(|kind| Some((kind.as_raw_value(), signal(kind).ok()?)))
                .collect();
            let counter = count.clone();
            tokio::spawn(async move {
                let mut streams = streams;
                if streams.is_empty() {
                    return;
                }
                loop {
                    let waits = streams.iter_mut().map(|(number, stream)| {
                        let number = *number;
                        Box::pin(async move {
                            stream.recv().await;
                            number
                        })
                    });
                    let (number, _, _) = futures::future::select_all(waits).await;
                    let _ =
                        STOPPED_BY.compare_exchange(0, number, Ordering::SeqCst, Ordering::SeqCst);
                    LAST.store(number, Ordering::SeqCst);
                    counter.send_modify(|n| *n += 1);
                }
            });
            count
        })
        .subscribe()
}

static STOPPED_BY: AtomicI32 = AtomicI32::new(0);
/// The latest stop signal, for [`Stops::next`].
static LAST: AtomicI32 = AtomicI32::new(0);

/// The signal that stopped podbay, if one did: it exits with 128 + its
/// number, as a shell reports a process the signal killed.
pub fn stopped_by() -> Option<i32> {
    match STOPPED_BY.load(Ordering::SeqCst) {
        0 => None,
        n => Some(n),
    }
}
