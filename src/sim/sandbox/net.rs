//! A pod's network: a network namespace of its own with only loopback up,
//! as a pod sees itself, and the way in that the kubelet's port-forward
//! takes (the CRI connects to `localhost:PORT` inside that namespace).
//!
//! The simulator cannot enter a pod's network namespace itself: `setns`
//! needs `CAP_SYS_ADMIN` in the simulator's own user namespace too, which an
//! unprivileged simulator lacks. The pod's pause process lives in it, so it
//! connects on the simulator's behalf: the runtime sends it a port on a
//! socket pair (its [`Doorway`]), it connects to `127.0.0.1:PORT` (then
//! `[::1]:PORT`) and sends back the connected socket (`SCM_RIGHTS`), or why
//! it could not.
//!
//! Where a pod cannot have its own network namespace, its programs listen
//! on free loopback ports of the host and write each one to a file named by
//! the port they were declared on ([`PORTS_DIR_ENV`]); the runtime connects
//! to what the file says.

use std::io::{self, IoSlice, IoSliceMut};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};
use std::sync::Mutex;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::socket::{
    AddressFamily, ControlMessage, ControlMessageOwned, MsgFlags, SockFlag, SockType, recvmsg,
    sendmsg, socketpair,
};

/// Where a program without its own network namespace records the host
/// port it listens on for each declared port (`DIR/8080` holds `41235`).
pub const PORTS_DIR_ENV: &str = "PODBAY_PORTS_DIR";

/// How long a connect inside the pod may take (a full backlog).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

const OK: u8 = 0;
const REFUSED: u8 = 1;

/// Sets `lo` up in this (new) network namespace: a new namespace has it down.
pub fn bring_up_loopback() -> nix::Result<()> {
    use nix::libc;
    // SAFETY: a datagram socket for the ioctls, closed by OwnedFd; the
    // ifreq is zeroed, named "lo", and only read back by the kernel.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(Errno::last());
        }
        let socket = OwnedFd::from_raw_fd(fd);
        let mut request: libc::ifreq = std::mem::zeroed();
        for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
            *slot = *byte as libc::c_char;
        }
        if libc::ioctl(socket.as_raw_fd(), libc::SIOCGIFFLAGS as _, &mut request) < 0 {
            return Err(Errno::last());
        }
        request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        if libc::ioctl(socket.as_raw_fd(), libc::SIOCSIFFLAGS as _, &request) < 0 {
            return Err(Errno::last());
        }
    }
    Ok(())
}

/// The two ends of a new doorway: the runtime keeps the first, the pause
/// process gets the second.
pub fn doorway_pair() -> io::Result<(Doorway, OwnedFd)> {
    let (ours, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )?;
    let timeout = nix::sys::time::TimeVal::new(5, 0);
    nix::sys::socket::setsockopt(&ours, nix::sys::socket::sockopt::ReceiveTimeout, &timeout)?;
    Ok((
        Doorway {
            socket: Mutex::new((ours, 0)),
        },
        theirs,
    ))
}

/// The runtime's end of a pod's doorway.
pub struct Doorway {
    socket: Mutex<(OwnedFd, u32)>,
}

/// A request: the port and a sequence number, little-endian.
const REQUEST_LEN: usize = 6;

impl Doorway {
    /// A socket connected to `localhost:port` inside the pod. Blocking:
    /// one request at a time per pod, each taking microseconds.
    pub fn connect(&self, port: u16) -> io::Result<TcpStream> {
        let mut guard = super::lock(&self.socket);
        let (socket, sequence) = &mut *guard;
        *sequence = sequence.wrapping_add(1);
        let fd = socket.as_raw_fd();
        let mut request = [0u8; REQUEST_LEN];
        request[..2].copy_from_slice(&port.to_le_bytes());
        request[2..].copy_from_slice(&sequence.to_le_bytes());
        retry(|| sendmsg::<()>(fd, &[IoSlice::new(&request)], &[], MsgFlags::empty(), None))?;
        // A reply to an earlier request that timed out may come first:
        // it is passed over (its socket closed).
        loop {
            let mut reply = [0u8; 256];
            let mut space = nix::cmsg_space!(RawFd);
            let (len, passed) = {
                let mut iov = [IoSliceMut::new(&mut reply)];
                let message = loop {
                    match recvmsg::<()>(fd, &mut iov, Some(&mut space), MsgFlags::MSG_CMSG_CLOEXEC)
                    {
                        Err(Errno::EINTR) => continue,
                        other => break other?,
                    }
                };
                let mut passed = None;
                for c in message.cmsgs()? {
                    if let ControlMessageOwned::ScmRights(fds) = c {
                        for fd in fds {
                            // SAFETY: the kernel just installed these for us.
                            let owned = unsafe { OwnedFd::from_raw_fd(fd) };
                            passed.get_or_insert(owned);
                        }
                    }
                }
                (message.bytes, passed)
            };
            let said = reply.get(..len).unwrap_or_default();
            if said.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the pod's sandbox is gone",
                ));
            }
            if said.len() < 5 || said[1..5] != sequence.to_le_bytes() {
                continue;
            }
            return match (said[0], passed) {
                (OK, Some(fd)) => Ok(TcpStream::from(fd)),
                (REFUSED, _) => Err(io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    String::from_utf8_lossy(&said[5..]).into_owned(),
                )),
                _ => Err(io::Error::other("the pod's sandbox answered nonsense")),
            };
        }
    }
}

/// `call` again while a signal interrupts it.
fn retry<T>(mut call: impl FnMut() -> nix::Result<T>) -> nix::Result<T> {
    loop {
        match call() {
            Err(Errno::EINTR) => continue,
            other => return other,
        }
    }
}

/// The pause process's side: answers connect requests until the runtime's
/// end closes. Runs inside the pod's network namespace.
pub fn serve_doorway(socket: OwnedFd) {
    let fd = socket.as_raw_fd();
    loop {
        let mut request = [0u8; REQUEST_LEN];
        let received = {
            let mut iov = [IoSliceMut::new(&mut request)];
            recvmsg::<()>(fd, &mut iov, None, MsgFlags::empty()).map(|m| m.bytes)
        };
        match received {
            Ok(REQUEST_LEN) => {}
            Ok(0) => return,
            Ok(_) | Err(Errno::EINTR) => continue,
            Err(_) => return,
        }
        let port = u16::from_le_bytes([request[0], request[1]]);
        let sequence = &request[2..];
        let _ = match connect_inside(port) {
            Ok(stream) => {
                let fds = [stream.as_raw_fd()];
                let mut reply = vec![OK];
                reply.extend_from_slice(sequence);
                sendmsg::<()>(
                    fd,
                    &[IoSlice::new(&reply)],
                    &[ControlMessage::ScmRights(&fds)],
                    MsgFlags::empty(),
                    None,
                )
            }
            Err(text) => {
                let mut reply = vec![REFUSED];
                reply.extend_from_slice(sequence);
                reply.extend_from_slice(text.as_bytes());
                reply.truncate(256);
                sendmsg::<()>(fd, &[IoSlice::new(&reply)], &[], MsgFlags::empty(), None)
            }
        };
    }
}

/// Connects as containerd does, IPv4 then IPv6, and fails with its words.
fn connect_inside(port: u16) -> Result<TcpStream, String> {
    let v4 = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let v6 = SocketAddr::from((Ipv6Addr::LOCALHOST, port));
    let e4 = match TcpStream::connect_timeout(&v4, CONNECT_TIMEOUT) {
        Ok(stream) => return Ok(stream),
        Err(e) => e,
    };
    let e6 = match TcpStream::connect_timeout(&v6, CONNECT_TIMEOUT) {
        Ok(stream) => return Ok(stream),
        Err(e) => e,
    };
    Err(format!(
        "IPv4: dial tcp4 {v4}: connect: {} IPv6 dial tcp6 {v6}: connect: {} ",
        go_error(&e4),
        go_error(&e6)
    ))
}

/// An error as Go prints a syscall's (`connection refused`).
pub fn go_error(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => {
            let text = Errno::from_raw(code).desc();
            let mut chars = text.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_lowercase().chain(chars).collect::<String>()
            })
        }
        None if e.kind() == io::ErrorKind::TimedOut => "i/o timeout".into(),
        None => e.to_string(),
    }
}

/// Where containers have the host's network: the host port a program of
/// the pod recorded for `port` in `dir`.
pub fn connect_recorded(dir: &std::path::Path, port: u16) -> io::Result<TcpStream> {
    let recorded = std::fs::read_to_string(dir.join(port.to_string()))
        .ok()
        .and_then(|text| text.trim().parse::<u16>().ok());
    let Some(host_port) = recorded else {
        let v4 = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        return Err(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            format!("IPv4: dial tcp4 {v4}: connect: connection refused "),
        ));
    };
    TcpStream::connect_timeout(
        &SocketAddr::from((Ipv4Addr::LOCALHOST, host_port)),
        CONNECT_TIMEOUT,
    )
}

/// A program's listener on a declared port: inside its own network
/// namespace, the port itself on every address; on the host's network, a
/// free loopback port, recorded for the runtime.
pub fn listen(port: u16) -> io::Result<std::net::TcpListener> {
    match std::env::var_os(PORTS_DIR_ENV) {
        None => std::net::TcpListener::bind((Ipv4Addr::UNSPECIFIED, port)),
        Some(dir) => {
            let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
            let dir = std::path::Path::new(&dir);
            std::fs::create_dir_all(dir)?;
            let record = dir.join(port.to_string());
            let partial = dir.join(format!(".{port}.partial"));
            std::fs::write(&partial, listener.local_addr()?.port().to_string())?;
            std::fs::rename(partial, record)?;
            Ok(listener)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_as_go_prints_them() {
        let refused = io::Error::from_raw_os_error(Errno::ECONNREFUSED as i32);
        assert_eq!(go_error(&refused), "connection refused");
    }

    #[test]
    fn a_doorway_passes_a_connected_socket_or_the_reason() {
        let (doorway, theirs) = doorway_pair().unwrap();
        let server = std::thread::spawn(move || serve_doorway(theirs));
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut stream = doorway.connect(port).unwrap();
        let (mut accepted, _) = listener.accept().unwrap();
        use std::io::{Read as _, Write as _};
        stream.write_all(b"ping").unwrap();
        let mut got = [0u8; 4];
        accepted.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"ping");
        drop(listener);
        let refused = doorway.connect(port).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::ConnectionRefused);
        assert!(
            refused.to_string().contains(&format!(
                "dial tcp4 127.0.0.1:{port}: connect: connection refused"
            )),
            "{refused}"
        );
        drop(doorway);
        server.join().unwrap();
    }

    #[test]
    fn without_a_network_namespace_the_recorded_port_is_used() {
        let dir = tempfile::tempdir().unwrap();
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let host_port = listener.local_addr().unwrap().port();
        std::fs::write(dir.path().join("6379"), host_port.to_string()).unwrap();
        let stream = connect_recorded(dir.path(), 6379).unwrap();
        assert_eq!(stream.peer_addr().unwrap().port(), host_port);
        let missing = connect_recorded(dir.path(), 8080).unwrap_err();
        assert!(missing.to_string().contains("127.0.0.1:8080"), "{missing}");
    }
}
