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

/// Resolves when the process is asked to stop (SIGTERM, SIGHUP, SIGQUIT,
/// SIGINT outside raw mode), so the caller can unwind and restore the
/// terminal; [`stopped_by`] then says which signal it was. The handlers
/// are in place when this returns, before the future is first awaited: a
/// signal sent just after (the simulator has printed its kubeconfig) is
/// caught, not left to kill the process.
pub fn termination() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let kinds = [
        SignalKind::terminate(),
        SignalKind::hangup(),
        SignalKind::quit(),
        SignalKind::interrupt(),
    ];
    let waits: Vec<_> = kinds
        .into_iter()
        .filter_map(|kind| {
            let mut stream = signal(kind).ok()?;
            Some(Box::pin(async move {
                stream.recv().await;
                kind.as_raw_value()
            }))
        })
        .collect();
    async move {
        if waits.is_empty() {
            return std::future::pending().await;
        }
        let (number, _, _) = futures::future::select_all(waits).await;
        STOPPED_BY.store(number, Ordering::SeqCst);
    }
}

static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

/// The signal that stopped podbay, if one did: it exits with 128 + its
/// number, as a shell reports a process the signal killed.
pub fn stopped_by() -> Option<i32> {
    match STOPPED_BY.load(Ordering::SeqCst) {
        0 => None,
        n => Some(n),
    }
}
