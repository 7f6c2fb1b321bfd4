//! Pseudo-terminals: spawn a process on a fresh PTY and talk to its master
//! side asynchronously. Used by the simulator's kubelet (every container
//! process runs on a PTY) and by end-to-end tests that drive podbay itself.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::Path;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::pty::{Winsize, openpty};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::process::{Child, Command};

use crate::term::Size;

fn winsize(size: Size) -> Winsize {
    Winsize {
        ws_row: size.rows.max(1),
        ws_col: size.cols.max(1),
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

/// What to run on the PTY.
#[derive(Debug, Clone)]
pub struct Spawn<'a> {
    pub program: &'a OsStr,
    pub args: &'a [String],
    pub env: &'a [(String, String)],
    pub cwd: Option<&'a Path>,
    pub size: Size,
    /// A descriptor to hand the child as fd 3 (the simulator's shim
    /// reports on it).
    pub fd3: Option<std::os::fd::RawFd>,
}

/// The master side of a PTY, shared between a reader and any number of
/// writers (cloning shares the same file descriptor).
#[derive(Clone)]
pub struct PtyMaster {
    fd: Arc<AsyncFd<OwnedFd>>,
}

/// A process running on its own PTY as session leader with the PTY as its
/// controlling terminal.
pub struct PtyChild {
    pub master: PtyMaster,
    pub child: Child,
}

/// Spawns `spec` on a new PTY. The child gets a new session, the PTY slave
/// as stdin/stdout/stderr and controlling terminal, and `TERM=xterm-256color`
/// unless the caller's env sets TERM.
pub fn spawn(spec: &Spawn<'_>) -> io::Result<PtyChild> {
    let winsize = winsize(spec.size);
    let pty = openpty(Some(&winsize), None).map_err(io::Error::from)?;
    // openpty's descriptors are inherited by default: every later child
    // would hold this terminal open, so its hang-up would never come.
    for fd in [pty.master.as_fd(), pty.slave.as_fd()] {
        fcntl(fd, FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC)).map_err(io::Error::from)?;
    }
    let slave = pty.slave;
    let mut cmd = Command::new(spec.program);
    cmd.args(spec.args)
        .stdin(Stdio::from(slave.try_clone()?))
        .stdout(Stdio::from(slave.try_clone()?))
        .stderr(Stdio::from(slave))
        .kill_on_drop(true);
    if !spec.env.iter().any(|(k, _)| k == "TERM") {
        cmd.env("TERM", "xterm-256color");
    }
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    if let Some(cwd) = spec.cwd {
        cmd.current_dir(cwd);
    }
    let fd3 = spec.fd3;
    // SAFETY: only async-signal-safe calls (setsid, ioctl, dup2) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            nix::unistd::setsid().map_err(io::Error::from)?;
            if nix::libc::ioctl(0, nix::libc::TIOCSCTTY as _, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(fd) = fd3 {
                pass_as_fd3(fd)?;
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    let master = PtyMaster::new(pty.master)?;
    Ok(PtyChild { master, child })
}

/// Between fork and exec: `fd` becomes the child's fd 3, kept across exec.
pub fn pass_as_fd3(fd: std::os::fd::RawFd) -> io::Result<()> {
    use nix::libc::{F_SETFD, dup2, fcntl};
    // SAFETY: dup2 and fcntl are async-signal-safe; fd is open at fork.
    // dup2 onto itself would keep close-on-exec, so clear it then.
    let result = unsafe {
        if fd == 3 {
            fcntl(3, F_SETFD, 0)
        } else {
            dup2(fd, 3)
        }
    };
    if result < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl PtyMaster {
    fn new(fd: OwnedFd) -> io::Result<Self> {
        let flags = fcntl(fd.as_fd(), FcntlArg::F_GETFL).map_err(io::Error::from)?;
        let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
        fcntl(fd.as_fd(), FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
        // SAFETY: an `OwnedFd` is a valid descriptor that stays open, and
        // refers to the same file, for as long as the `AsyncFd` owns it.
        let fd = unsafe { AsyncFd::register(fd) }.map_err(io::Error::from)?;
        Ok(PtyMaster { fd: Arc::new(fd) })
    }

    /// Sets the terminal size; the kernel sends SIGWINCH to the foreground
    /// process group.
    pub fn resize(&self, size: Size) -> io::Result<()> {
        let ws = winsize(size);
        // SAFETY: TIOCSWINSZ reads one `winsize` from the pointer we pass.
        let rc = unsafe {
            nix::libc::ioctl(
                self.fd.get_ref().as_raw_fd(),
                nix::libc::TIOCSWINSZ as _,
                &ws,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// The current terminal size.
    pub fn size(&self) -> io::Result<Size> {
        let mut ws = winsize(Size::DEFAULT);
        // SAFETY: TIOCGWINSZ writes one `winsize` to the pointer we pass.
        let rc = unsafe {
            nix::libc::ioctl(
                self.fd.get_ref().as_raw_fd(),
                nix::libc::TIOCGWINSZ as _,
                &mut ws,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Size {
            cols: ws.ws_col,
            rows: ws.ws_row,
        })
    }

    /// Whether the terminal is in canonical ("cooked") mode with echo, as a
    /// shell leaves it; false while a full-screen program holds it raw.
    pub fn is_cooked(&self) -> io::Result<bool> {
        use nix::sys::termios::{LocalFlags, tcgetattr};
        let attrs = tcgetattr(self.fd.get_ref()).map_err(io::Error::from)?;
        Ok(attrs
            .local_flags
            .contains(LocalFlags::ICANON | LocalFlags::ECHO))
    }

    /// Reads what the process wrote. `Ok(0)` means the slave side is closed
    /// (Linux reports that as EIO, which is mapped to end of file here).
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut guard = self.fd.readable().await?;
            match guard.try_io(|fd| nix::unistd::read(fd.get_ref(), buf).map_err(io::Error::from)) {
                Ok(Err(e)) if e.raw_os_error() == Some(nix::libc::EIO) => return Ok(0),
                Ok(result) => return result,
                Err(_would_block) => continue,
            }
        }
    }

    /// Writes all of `data` to the process's terminal input.
    pub async fn write_all(&self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let mut guard = self.fd.writable().await?;
            match guard.try_io(|fd| nix::unistd::write(fd.get_ref(), data).map_err(io::Error::from))
            {
                Ok(Ok(n)) => data = &data[n..],
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => continue,
            }
        }
        Ok(())
    }

    fn poll_read_priv(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            match guard
                .try_io(|fd| nix::unistd::read(fd.get_ref(), unfilled).map_err(io::Error::from))
            {
                Ok(Ok(n)) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) if e.raw_os_error() == Some(nix::libc::EIO) => {
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_write_priv(&self, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.fd.poll_write_ready(cx))?;
            match guard.try_io(|fd| nix::unistd::write(fd.get_ref(), data).map_err(io::Error::from))
            {
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsyncRead for PtyMaster {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.poll_read_priv(cx, buf)
    }
}

impl AsyncWrite for PtyMaster {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_priv(cx, data)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sh -c script` on a new PTY of `size`.
    fn sh(script: &str, size: Size) -> PtyChild {
        let args = vec!["-c".to_string(), script.to_string()];
        let spec = Spawn {
            program: OsStr::new("/bin/sh"),
            args: &args,
            env: &[],
            cwd: None,
            size,
            fd3: None,
        };
        spawn(&spec).unwrap()
    }

    async fn read_until(master: &PtyMaster, needle: &str) -> String {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        while !String::from_utf8_lossy(&out).contains(needle) {
            let n = tokio::time::timeout_at(deadline, master.read(&mut buf))
                .await
                .expect("timed out waiting for pty output")
                .unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    #[tokio::test]
    async fn child_sees_the_requested_size_and_a_controlling_tty() {
        let mut pty = sh(
            "stty size; tty >/dev/null && echo has-tty",
            Size {
                cols: 132,
                rows: 43,
            },
        );
        let out = read_until(&pty.master, "has-tty").await;
        assert!(out.contains("43 132"), "got {out:?}");
        assert!(pty.child.wait().await.unwrap().success());
    }

    #[tokio::test]
    async fn resize_reaches_the_child_and_input_is_echoed() {
        let mut pty = sh("read line; stty size; echo got:$line", Size::DEFAULT);
        pty.master
            .resize(Size {
                cols: 100,
                rows: 30,
            })
            .unwrap();
        assert_eq!(
            pty.master.size().unwrap(),
            Size {
                cols: 100,
                rows: 30
            }
        );
        pty.master.write_all(b"hello\r").await.unwrap();
        let out = read_until(&pty.master, "got:hello").await;
        assert!(out.contains("30 100"), "got {out:?}");
        let status = pty.child.wait().await.unwrap();
        assert_eq!(status.code(), Some(0));
    }

    #[tokio::test]
    async fn read_returns_zero_when_the_child_is_gone() {
        let mut pty = sh("exit 7", Size::DEFAULT);
        let status = pty.child.wait().await.unwrap();
        assert_eq!(status.code(), Some(7));
        let mut buf = [0u8; 64];
        let n = tokio::time::timeout(std::time::Duration::from_secs(5), pty.master.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(n, 0);
    }
}
