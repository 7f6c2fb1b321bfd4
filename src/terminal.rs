//! The user's terminal: entering the TUI (raw mode, alternate screen,
//! bracketed paste, mouse) and leaving it on every exit path — normal
//! return, error, panic, SIGTERM, SIGHUP.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

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
pub struct TerminalGuard {
    _private: (),
}

impl TerminalGuard {
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
        Ok(TerminalGuard { _private: () })
    }
}

impl Drop for TerminalGuard {
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
        // Restore first, so the panic message lands on a usable screen.
        restore();
        previous(info);
    }));
}

/// Resolves when the process is asked to stop (SIGTERM, SIGHUP, SIGINT
/// outside raw mode), so the caller can unwind and restore the terminal.
pub async fn termination() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let mut hup = signal(SignalKind::hangup()).ok();
    let mut int = signal(SignalKind::interrupt()).ok();
    let next = |s: &mut Option<tokio::signal::unix::Signal>| {
        let s = s.take();
        async move {
            match s {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        }
    };
    tokio::select! {
        _ = next(&mut term) => {}
        _ = next(&mut hup) => {}
        _ = next(&mut int) => {}
    }
}
