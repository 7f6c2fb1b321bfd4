//! What the simulator's programs answer on their ports, so a port-forward
//! reaches something real: payments-api, storefront and nginx speak
//! HTTP/1.1 (`/healthz`, `/metrics` in Prometheus text, `/slow`,
//! `/bytes/N` for transfers, a page), redis speaks the RESP commands
//! `redis-cli` sends. Plain threads: a pod's program serves a handful of
//! connections, and this runs in its own process.

use std::collections::HashMap;
use std::io::{self, BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::sandbox::net;

/// A service's declared ports, as its pod spec declares them:
/// (name, port).
pub fn ports_of(service: &str) -> &'static [(&'static str, u16)] {
    match service {
        "payments-api" | "storefront" => &[("http", 8080)],
        "nginx" => &[("http", 80)],
        "redis" => &[("redis", 6379)],
        _ => &[],
    }
}

/// Starts serving `service`'s ports in the background; says on stdout
/// what it listens on, or why it could not.
pub fn start(service: &'static str) {
    for &(_, port) in ports_of(service) {
        let listener = match net::listen(port) {
            Ok(listener) => listener,
            Err(e) => {
                log(service, "ERROR", &format!("cannot listen on :{port}: {e}"));
                continue;
            }
        };
        log(service, "INFO", &format!("listening on :{port}"));
        let serve: fn(&'static str, TcpStream) -> io::Result<()> = match service {
            "redis" => resp,
            _ => http,
        };
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    let _ = serve(service, stream);
                });
            }
        });
    }
}

/// A line as the workload's others read: `TIME LEVEL service: what`.
fn log(service: &str, level: &str, what: &str) {
    let now = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%SZ");
    let _ = writeln!(io::stdout().lock(), "{now} {level} {service}: {what}");
}

/// Requests served, by (path, status), for `/metrics`.
fn counters() -> &'static Mutex<HashMap<(String, u16), u64>> {
    static COUNTERS: OnceLock<Mutex<HashMap<(String, u16), u64>>> = OnceLock::new();
    COUNTERS.get_or_init(Default::default)
}

static BYTES_SENT: AtomicU64 = AtomicU64::new(0);

fn started() -> Instant {
    static STARTED: OnceLock<Instant> = OnceLock::new();
    *STARTED.get_or_init(Instant::now)
}

/// The largest `/bytes/N` answered (16 GiB).
const MAX_BYTES: u64 = 16 << 30;
/// The longest request head read.
const MAX_HEAD: usize = 16 << 10;

/// One HTTP/1.1 connection: requests until the client closes or asks to.
fn http(service: &'static str, stream: TcpStream) -> io::Result<()> {
    started();
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::with_capacity(MAX_HEAD, stream.try_clone()?);
    let mut writer = stream;
    loop {
        let Some(request) = read_head(&mut reader)? else {
            return Ok(());
        };
        // A body (an upload) is read and counted.
        let mut body = (&mut reader).take(request.content_length);
        let received = io::copy(&mut body, &mut io::sink())?;
        let begun = Instant::now();
        let status = answer(service, &request, received, &mut writer)?;
        let path = request
            .path
            .split('?')
            .next()
            .unwrap_or_default()
            .to_string();
        *crate::sim::lock(counters())
            .entry((path.clone(), status))
            .or_default() += 1;
        if path != "/healthz" {
            log(
                service,
                "INFO",
                &format!(
                    "{} {path} {status} in {:.1}ms",
                    request.method,
                    begun.elapsed().as_secs_f64() * 1e3
                ),
            );
        }
        if request.close {
            return Ok(());
        }
    }
}

struct Head {
    method: String,
    path: String,
    content_length: u64,
    close: bool,
}

fn read_head(reader: &mut BufReader<TcpStream>) -> io::Result<Option<Head>> {
    let mut line = String::new();
    let mut read = 0;
    let mut lines = Vec::new();
    loop {
        line.clear();
        let n = (&mut *reader)
            .take((MAX_HEAD + 1 - read.min(MAX_HEAD)) as u64)
            .read_line(&mut line)?;
        read += n;
        if n == 0 {
            return Ok(None);
        }
        if read > MAX_HEAD {
            return Err(io::Error::other("request head too long"));
        }
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            if lines.is_empty() {
                continue;
            }
            break;
        }
        lines.push(trimmed.to_string());
    }
    let mut first = lines[0].split(' ');
    let method = first.next().unwrap_or_default().to_string();
    let path = first.next().unwrap_or("/").to_string();
    let http10 = first.next() == Some("HTTP/1.0");
    let header = |name: &str| {
        lines[1..].iter().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    let close = match header("connection") {
        Some(v) if v.eq_ignore_ascii_case("close") => true,
        Some(v) if v.eq_ignore_ascii_case("keep-alive") => false,
        _ => http10,
    };
    Ok(Some(Head {
        method,
        path,
        content_length: header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        close,
    }))
}

/// Writes the response; returns its status.
fn answer(service: &str, request: &Head, received: u64, out: &mut TcpStream) -> io::Result<u16> {
    let (path, query) = request.path.split_once('?').unwrap_or((&request.path, ""));
    let respond = |out: &mut TcpStream, status: u16, kind: &str, body: &[u8]| {
        let reason = match status {
            200 => "OK",
            404 => "Not Found",
            _ => "Error",
        };
        let mut head = format!(
            "HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nServer: {service}\r\n",
            body.len()
        );
        if request.close {
            head.push_str("Connection: close\r\n");
        }
        head.push_str("\r\n");
        out.write_all(head.as_bytes())?;
        if request.method != "HEAD" {
            out.write_all(body)?;
        }
        out.flush().map(|()| status)
    };
    match path {
        "/healthz" | "/readyz" => respond(out, 200, "text/plain", b"ok\n"),
        "/metrics" => respond(
            out,
            200,
            "text/plain; version=0.0.4; charset=utf-8",
            metrics(service).as_bytes(),
        ),
        "/slow" => {
            let millis = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("ms="))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(2000)
                .min(60_000);
            std::thread::sleep(Duration::from_millis(millis));
            respond(
                out,
                200,
                "text/plain",
                format!("slept {millis}ms\n").as_bytes(),
            )
        }
        "/upload" => respond(
            out,
            200,
            "text/plain",
            format!("received {received} bytes\n").as_bytes(),
        ),
        _ if path.starts_with("/bytes/") => {
            let Some(n) = path["/bytes/".len()..]
                .parse::<u64>()
                .ok()
                .filter(|n| *n <= MAX_BYTES)
            else {
                return respond(out, 404, "text/plain", b"bad size\n");
            };
            send_bytes(request, n, out).map(|()| 200)
        }
        "/" => {
            let page = match service {
                "payments-api" => {
                    format!("{{\"service\":\"{service}\",\"version\":\"3.2.0\"}}\n").into_bytes()
                }
                _ => format!(
                    "<!DOCTYPE html>\n<html><head><title>{service}</title></head>\n<body><h1>Welcome to {service}!</h1></body></html>\n"
                )
                .into_bytes(),
            };
            let kind = match service {
                "payments-api" => "application/json",
                _ => "text/html",
            };
            respond(out, 200, kind, &page)
        }
        _ => respond(out, 404, "text/plain", b"404 page not found\n"),
    }
}

/// `n` bytes of a fixed random block, repeated.
fn send_bytes(request: &Head, n: u64, out: &mut TcpStream) -> io::Result<()> {
    static BLOCK: OnceLock<Vec<u8>> = OnceLock::new();
    let block = BLOCK.get_or_init(|| {
        let mut block = vec![0u8; 256 << 10];
        fastrand::Rng::with_seed(7).fill(&mut block);
        block
    });
    write!(
        out,
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {n}\r\n{}\r\n",
        if request.close {
            "Connection: close\r\n"
        } else {
            ""
        }
    )?;
    if request.method == "HEAD" {
        return Ok(());
    }
    let mut left = n;
    while left > 0 {
        let take = left.min(block.len() as u64) as usize;
        out.write_all(&block[..take])?;
        left -= take as u64;
        BYTES_SENT.fetch_add(take as u64, Ordering::Relaxed);
    }
    out.flush()
}

/// Prometheus text exposition (format 0.0.4).
fn metrics(service: &str) -> String {
    let mut text = String::from(
        "# HELP http_requests_total Requests served, by path and status.\n# TYPE http_requests_total counter\n",
    );
    let mut served: Vec<_> = crate::sim::lock(counters())
        .iter()
        .map(|((path, code), n)| (path.clone(), *code, *n))
        .collect();
    served.sort();
    for (path, code, n) in served {
        let path = path.replace('\\', "\\\\").replace('"', "\\\"");
        text.push_str(&format!(
            "http_requests_total{{service=\"{service}\",path=\"{path}\",code=\"{code}\"}} {n}\n"
        ));
    }
    text.push_str(&format!(
        "# HELP http_response_bytes_total Bytes sent by /bytes.\n# TYPE http_response_bytes_total counter\nhttp_response_bytes_total {}\n",
        BYTES_SENT.load(Ordering::Relaxed)
    ));
    text.push_str(&format!(
        "# HELP process_uptime_seconds Seconds since the server started.\n# TYPE process_uptime_seconds gauge\nprocess_uptime_seconds {:.3}\n",
        started().elapsed().as_secs_f64()
    ));
    text
}

/// One RESP connection: the commands `redis-cli` sends (PING, ECHO, INFO,
/// GET, SET, DEL, DBSIZE, SELECT, COMMAND, CLIENT, QUIT).
fn resp(_service: &'static str, stream: TcpStream) -> io::Result<()> {
    static DATA: OnceLock<Mutex<HashMap<Vec<u8>, Vec<u8>>>> = OnceLock::new();
    let data = DATA.get_or_init(Default::default);
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut out = stream;
    while let Some(command) = read_command(&mut reader)? {
        let Some((name, args)) = command.split_first() else {
            continue;
        };
        let name = String::from_utf8_lossy(name).to_ascii_uppercase();
        let reply: Vec<u8> = match (name.as_str(), args) {
            ("PING", []) => b"+PONG\r\n".to_vec(),
            ("PING" | "ECHO", [message]) => bulk(message),
            ("INFO", _) => bulk(info(crate::sim::lock(data).len()).as_bytes()),
            ("GET", [key]) => match crate::sim::lock(data).get(key.as_slice()) {
                Some(value) => bulk(value),
                None => b"$-1\r\n".to_vec(),
            },
            ("SET", [key, value, ..]) => {
                crate::sim::lock(data).insert(key.clone(), value.clone());
                b"+OK\r\n".to_vec()
            }
            ("DEL", keys) if !keys.is_empty() => {
                let mut data = crate::sim::lock(data);
                let gone = keys.iter().filter(|k| data.remove(*k).is_some()).count();
                format!(":{gone}\r\n").into_bytes()
            }
            ("DBSIZE", []) => format!(":{}\r\n", crate::sim::lock(data).len()).into_bytes(),
            ("SELECT", [_]) | ("CLIENT", _) => b"+OK\r\n".to_vec(),
            ("COMMAND", _) => b"*0\r\n".to_vec(),
            ("QUIT", _) => {
                out.write_all(b"+OK\r\n")?;
                return Ok(());
            }
            ("PING" | "ECHO" | "GET" | "SET" | "DEL" | "DBSIZE" | "SELECT", _) => format!(
                "-ERR wrong number of arguments for '{}' command\r\n",
                name.to_lowercase()
            )
            .into_bytes(),
            _ => format!(
                "-ERR unknown command '{}', with args beginning with: \r\n",
                String::from_utf8_lossy(&command[0])
            )
            .into_bytes(),
        };
        out.write_all(&reply)?;
    }
    Ok(())
}

fn bulk(bytes: &[u8]) -> Vec<u8> {
    let mut reply = format!("${}\r\n", bytes.len()).into_bytes();
    reply.extend_from_slice(bytes);
    reply.extend_from_slice(b"\r\n");
    reply
}

fn info(keys: usize) -> String {
    format!(
        "# Server\r\nredis_version:7.4.1\r\nredis_mode:standalone\r\nos:Linux\r\ntcp_port:6379\r\nuptime_in_seconds:{}\r\n\r\n# Clients\r\nconnected_clients:1\r\n\r\n# Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\n\r\n# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:0\r\n\r\n# Keyspace\r\ndb0:keys={keys},expires=0,avg_ttl=0\r\n",
        started().elapsed().as_secs()
    )
}

/// A command: a RESP array of bulk strings, or an inline line. `None` at
/// the end of the connection.
fn read_command(reader: &mut BufReader<TcpStream>) -> io::Result<Option<Vec<Vec<u8>>>> {
    let mut line = Vec::new();
    if (&mut *reader).take(64 << 10).read_until(b'\n', &mut line)? == 0 {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&line).trim_end().to_string();
    let Some(count) = text.strip_prefix('*') else {
        return Ok(Some(
            text.split_whitespace()
                .map(|w| w.as_bytes().to_vec())
                .collect(),
        ));
    };
    let count: usize = count.parse().map_err(|_| bad("bad array length"))?;
    if count > 1024 {
        return Err(bad("too many arguments"));
    }
    let mut args = Vec::with_capacity(count);
    for _ in 0..count {
        line.clear();
        (&mut *reader).take(64).read_until(b'\n', &mut line)?;
        let len: usize = String::from_utf8_lossy(&line)
            .trim_end()
            .strip_prefix('$')
            .and_then(|n| n.parse().ok())
            .filter(|n| *n <= 64 << 20)
            .ok_or_else(|| bad("bad bulk string"))?;
        let mut arg = vec![0u8; len + 2];
        reader.read_exact(&mut arg)?;
        arg.truncate(len);
        args.push(arg);
    }
    Ok(Some(args))
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn serving(serve: fn(&'static str, TcpStream) -> io::Result<()>) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || serve("payments-api", stream));
            }
        });
        addr
    }

    fn exchange(addr: std::net::SocketAddr, request: &[u8]) -> Vec<u8> {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(request).unwrap();
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).unwrap();
        reply
    }

    #[test]
    fn http_answers_metrics_bytes_and_uploads_then_closes_on_a_half_close() {
        let addr = serving(http);
        let metrics = exchange(
            addr,
            b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
        );
        let text = String::from_utf8_lossy(&metrics);
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(
            text.contains(
                "http_requests_total{service=\"payments-api\",path=\"/healthz\",code=\"200\"}"
            ),
            "{text}"
        );
        let bytes = exchange(
            addr,
            b"GET /bytes/300000 HTTP/1.1\r\nConnection: close\r\n\r\n",
        );
        let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        assert_eq!(bytes.len() - split, 300_000);
        let upload = exchange(
            addr,
            b"POST /upload HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
        );
        assert!(String::from_utf8_lossy(&upload).ends_with("received 5 bytes\n"));
        let missing = exchange(addr, b"GET /nope HTTP/1.0\r\n\r\n");
        assert!(missing.starts_with(b"HTTP/1.1 404"));
    }

    #[test]
    fn resp_answers_what_redis_cli_sends() {
        let addr = serving(resp);
        let reply = exchange(
            addr,
            b"*1\r\n$4\r\nPING\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nv1\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING hi\r\n*1\r\n$4\r\nNOPE\r\n",
        );
        assert_eq!(
            String::from_utf8_lossy(&reply),
            "+PONG\r\n+OK\r\n$2\r\nv1\r\n$2\r\nhi\r\n-ERR unknown command 'NOPE', with args beginning with: \r\n"
        );
        let info = exchange(addr, b"INFO\r\n");
        assert!(String::from_utf8_lossy(&info).contains("redis_version:7.4.1"));
    }
}
