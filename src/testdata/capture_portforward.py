#!/usr/bin/env python3
"""Capture what kubectl 1.33 `port-forward` sends over a plain SPDY/3.1 upgrade.

kubectl-1.33-portforward-spdy.bin (beside this script) was made with

    python3 src/testdata/capture_portforward.py \
        --kubectl /usr/lib/google-cloud-sdk/bin/kubectl.1.33 \
        --out src/testdata/kubectl-1.33-portforward-spdy.bin

on loopback only. The script plays a fake apiserver+kubelet over plain HTTP
(kubeconfig `server: http://127.0.0.1:PORT`, no credentials):

- discovery (/api, /api/v1, /apis) and `GET .../pods/p`: a Running pod with
  containerPort 8080;
- the WebSocket tunnel attempt (`GET .../portforward`, `Upgrade: websocket`):
  400, so kubectl falls back to the plain upgrade;
- `POST .../portforward` with `Upgrade: SPDY/3.1`: 101 (with
  `X-Stream-Protocol-Version: portforward.k8s.io`, which client-go requires),
  then a minimal SPDY server. Every byte kubectl sends after the 101 is
  recorded, unchanged, into the .bin file: its SYN_STREAMs, DATA, PINGs and
  the GOAWAY it sends when stopped with SIGINT.

The server side answers each SYN_STREAM with a SYN_REPLY with an empty header
set, encoded exactly as podbay's `src/sim/spdy.rs` Encoder does (zlib header
`78 01` on the first, then per header block one stored deflate block and the
empty stored block a zlib sync flush ends with; never final). kubectl going on
to open the data stream and send DATA after that is the proof that Go's
spdystream accepts those bytes. On a data stream, once an HTTP request has arrived, it answers
with a small HTTP response, then DATA FIN on the error stream and on the data
stream (a kubelet's order on success). PINGs are echoed.

While the fake runs, `curl http://127.0.0.1:18080/` is run twice against
`kubectl port-forward pod/p 18080:8080`; 5.5 s later (so that kubectl's
5 s SPDY ping shows up) kubectl gets SIGINT.

`--check FILE` instead decodes FILE as a server->client SPDY byte stream
(e.g. the output of the Rust Encoder) with Python's zlib, the reference
zlib, set up as Go's `zlib.NewReaderDict` is (dictionary given when the
stream asks for it), and prints the frames.
"""

import argparse
import json
import os
import signal
import socket
import socketserver
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

# The SPDY/3 header dictionary (moby/spdystream spdy/dictionary.go).
SPDY_DICT = bytes.fromhex(
    "000000076f7074696f6e73000000046865616400000004706f7374000000037075740000000664656c65746500000005"
    "7472616365000000066163636570740000000e6163636570742d636861727365740000000f6163636570742d656e636f"
    "64696e670000000f6163636570742d6c616e67756167650000000d6163636570742d72616e6765730000000361676500"
    "000005616c6c6f770000000d617574686f72697a6174696f6e0000000d63616368652d636f6e74726f6c0000000a636f"
    "6e6e656374696f6e0000000c636f6e74656e742d6261736500000010636f6e74656e742d656e636f64696e6700000010"
    "636f6e74656e742d6c616e67756167650000000e636f6e74656e742d6c656e67746800000010636f6e74656e742d6c6f"
    "636174696f6e0000000b636f6e74656e742d6d64350000000d636f6e74656e742d72616e67650000000c636f6e74656e"
    "742d74797065000000046461746500000004657461670000000665787065637400000007657870697265730000000466"
    "726f6d00000004686f73740000000869662d6d617463680000001169662d6d6f6469666965642d73696e63650000000d"
    "69662d6e6f6e652d6d617463680000000869662d72616e67650000001369662d756e6d6f6469666965642d73696e6365"
    "0000000d6c6173742d6d6f646966696564000000086c6f636174696f6e0000000c6d61782d666f727761726473000000"
    "06707261676d610000001270726f78792d61757468656e7469636174650000001370726f78792d617574686f72697a61"
    "74696f6e0000000572616e676500000007726566657265720000000b72657472792d6166746572000000067365727665"
    "7200000002746500000007747261696c6572000000117472616e736665722d656e636f64696e67000000077570677261"
    "64650000000a757365722d6167656e74000000047661727900000003766961000000077761726e696e67000000107777"
    "772d61757468656e746963617465000000066d6574686f64000000036765740000000673746174757300000006323030"
    "204f4b0000000776657273696f6e00000008485454502f312e310000000375726c000000067075626c69630000000a73"
    "65742d636f6f6b69650000000a6b6565702d616c697665000000066f726967696e313030313031323031323032323035"
    "323036333030333032333033333034333035333036333037343032343035343036343037343038343039343130343131"
    "343132343133343134343135343136343137353032353034353035323033204e6f6e2d417574686f7269746174697665"
    "20496e666f726d6174696f6e323034204e6f20436f6e74656e74333031204d6f766564205065726d616e656e746c7934"
    "303020426164205265717565737434303120556e617574686f72697a656434303320466f7262696464656e343034204e"
    "6f7420466f756e6435303020496e7465726e616c20536572766572204572726f72353031204e6f7420496d706c656d65"
    "6e746564353033205365727669636520556e617661696c61626c654a616e20466562204d617220417072204d6179204a"
    "756e204a756c204175672053657074204f6374204e6f76204465632030303a30303a3030204d6f6e2c205475652c2057"
    "65642c205468752c204672692c205361742c2053756e2c20474d546368756e6b65642c746578742f68746d6c2c696d61"
    "67652f706e672c696d6167652f6a70672c696d6167652f6769662c6170706c69636174696f6e2f786d6c2c6170706c69"
    "636174696f6e2f7868746d6c2b786d6c2c746578742f706c61696e2c746578742f6a6176617363726970742c7075626c"
    "6963707269766174656d61782d6167653d677a69702c6465666c6174652c73646368636861727365743d7574662d3863"
    "6861727365743d69736f2d383835392d312c7574662d2c2a2c656e713d302e"
)
assert len(SPDY_DICT) == 1423 and zlib.adler32(SPDY_DICT) == 0xE3C6A7C2

TYPE_NAMES = {1: "SYN_STREAM", 2: "SYN_REPLY", 3: "RST_STREAM", 4: "SETTINGS",
              6: "PING", 7: "GOAWAY", 8: "HEADERS", 9: "WINDOW_UPDATE"}
LOCAL_PORT, REMOTE_PORT = 18080, 8080
HTTP_REPLY = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
              b"Content-Length: 6\r\nConnection: close\r\n\r\nhello\n")


# --- SPDY framing -----------------------------------------------------------

def split_frames(buf):
    """Split complete frames off the front of buf: (frames, rest)."""
    frames = []
    while len(buf) >= 8:
        length = int.from_bytes(buf[5:8], "big")
        if len(buf) < 8 + length:
            break
        frames.append(bytes(buf[:8 + length]))
        buf = buf[8 + length:]
    return frames, buf


class HeaderInflater:
    """One zlib stream per direction, dictionary supplied on demand (as Go)."""

    def __init__(self):
        self.z = zlib.decompressobj(zdict=SPDY_DICT)

    def block(self, data):
        raw = self.z.decompress(data)
        if self.z.unconsumed_tail or self.z.eof:
            raise ValueError("header block not fully consumed / stream ended")
        (count,) = struct.unpack(">I", raw[:4])
        pos, headers = 4, []
        for _ in range(count):
            (n,) = struct.unpack(">I", raw[pos:pos + 4])
            name = raw[pos + 4:pos + 4 + n].decode()
            pos += 4 + n
            (n,) = struct.unpack(">I", raw[pos:pos + 4])
            value = raw[pos + 4:pos + 4 + n].decode()
            pos += 4 + n
            headers.append((name, value))
        if pos != len(raw):
            raise ValueError("trailing bytes in header block")
        return headers


def describe(frame, inflater):
    """Decode one frame into (kind, dict) for logs and checks."""
    word, flags_len = struct.unpack(">II", frame[:8])
    flags, length, payload = flags_len >> 24, flags_len & 0xFFFFFF, frame[8:]
    if not word & 0x80000000:
        return "DATA", {"stream": word, "fin": bool(flags & 1), "len": length,
                        "data": payload}
    version, kind = (word >> 16) & 0x7FFF, word & 0xFFFF
    name = TYPE_NAMES.get(kind, f"TYPE_{kind}")
    info = {"version": version, "flags": flags, "len": length}
    if kind == 1:
        sid, assoc = struct.unpack(">II", payload[:8])
        info.update(stream=sid & 0x7FFFFFFF, assoc=assoc & 0x7FFFFFFF,
                    pri=payload[8] >> 5, slot=payload[9],
                    block=payload[10:].hex(),
                    headers=inflater.block(payload[10:]))
    elif kind in (2, 8):
        info.update(stream=struct.unpack(">I", payload[:4])[0] & 0x7FFFFFFF,
                    block=payload[4:].hex(), headers=inflater.block(payload[4:]))
    elif kind in (3, 7, 9):
        a, b = struct.unpack(">II", payload)
        info.update(a=a & 0x7FFFFFFF, b=b)
    elif kind == 6:
        info.update(id=struct.unpack(">I", payload)[0])
    elif kind == 4:
        info.update(payload=payload.hex())
    return name, info


def control(kind, flags, payload):
    return struct.pack(">HHI", 0x8003, kind, flags << 24 | len(payload)) + payload


def data_frame(sid, fin, payload):
    return struct.pack(">II", sid, (1 if fin else 0) << 24 | len(payload)) + payload


class ReplyEncoder:
    """SYN_REPLY with an empty header set, byte for byte as spdy.rs writes it."""

    def __init__(self):
        self.started = False

    def syn_reply(self, sid):
        block = b"" if self.started else b"\x78\x01"
        self.started = True
        raw = b"\x00\x00\x00\x00"  # zero headers
        block += b"\x00" + struct.pack("<HH", len(raw), len(raw) ^ 0xFFFF) + raw
        # Empty stored block, as zlib's Z_SYNC_FLUSH ends: without it Go's
        # flate reader goes looking for the next block past the frame, fails,
        # and every later header block on the connection fails with it.
        block += b"\x00\x00\x00\xff\xff"
        return control(2, 0, struct.pack(">I", sid) + block)


# --- the SPDY session -------------------------------------------------------

class SpdySession:
    def __init__(self, sock, leftover):
        self.sock = sock
        self.buf = bytearray(leftover)
        self.recorded = bytearray(leftover)
        self.inflater = HeaderInflater()
        self.encoder = ReplyEncoder()
        self.streams = {}  # sid -> headers dict
        self.pending = {}  # data sid -> request bytes so far
        self.answered = set()
        self.log = []

    def send(self, frame):
        self.sock.sendall(frame)  # one write per frame

    def run(self):
        self.sock.settimeout(0.2)
        while True:
            frames, self.buf = split_frames(self.buf)
            for frame in frames:
                if not self.handle(frame):
                    return
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            if not chunk:
                return
            self.recorded += chunk
            self.buf += chunk

    def handle(self, frame):
        kind, info = describe(frame, self.inflater)
        self.log.append((time.monotonic(), kind, info))
        if kind == "SYN_STREAM":
            self.streams[info["stream"]] = dict(info["headers"])
            self.send(self.encoder.syn_reply(info["stream"]))
        elif kind == "PING":
            self.send(frame)
        elif kind == "GOAWAY":
            return False
        elif kind == "DATA":
            headers = self.streams.get(info["stream"], {})
            if headers.get("streamtype") == "data" and info["stream"] not in self.answered:
                req = self.pending.get(info["stream"], b"") + info["data"]
                self.pending[info["stream"]] = req
                if b"\r\n\r\n" in req:
                    self.answered.add(info["stream"])
                    error_sid = next(s for s, h in self.streams.items()
                                     if h.get("streamtype") == "error"
                                     and h.get("requestid") == headers.get("requestid"))
                    self.send(data_frame(info["stream"], False, HTTP_REPLY))
                    self.send(data_frame(error_sid, True, b""))
                    self.send(data_frame(info["stream"], True, b""))
        return True


# --- the fake apiserver -----------------------------------------------------

POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "uid": "00000000-0000-0000-0000-000000000001"},
    "spec": {"nodeName": "node-1",
             "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": REMOTE_PORT}]}]},
    "status": {"phase": "Running"},
}
DISCOVERY = {
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
         "verbs": ["get", "list"], "shortNames": ["po"]},
        {"name": "pods/portforward", "singularName": "", "namespaced": True, "kind": "PodPortForwardOptions",
         "verbs": ["create", "get"]}]},
    "/api/v1/namespaces/default/pods/p": POD,
}
PF_PATH = "/api/v1/namespaces/default/pods/p/portforward"


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        sock, buf = self.request, b""
        while True:
            while b"\r\n\r\n" not in buf:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                buf += chunk
            head, buf = buf.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, v in
                       (line.split(":", 1) for line in lines[1:])}
            body_len = int(headers.get("content-length", "0"))
            while len(buf) < body_len:
                buf += sock.recv(65536)
            buf = buf[body_len:]
            path = target.split("?", 1)[0]
            upgrade = headers.get("upgrade", "").lower()
            self.server.requests.append(f"{method} {target} upgrade={upgrade or '-'}")
            if path == PF_PATH and upgrade == "websocket":
                self.reply(400, b"websocket tunnelling disabled in this fake\n", "text/plain")
            elif path == PF_PATH and method == "POST" and upgrade == "spdy/3.1":
                sock.sendall(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
                             b"Upgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io\r\n\r\n")
                session = SpdySession(sock, buf)
                self.server.sessions.append(session)
                session.run()
                return
            elif path in DISCOVERY:
                self.reply(200, json.dumps(DISCOVERY[path]).encode(), "application/json")
            else:
                self.reply(404, json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                            "reason": "NotFound", "code": 404}).encode(), "application/json")

    def reply(self, code, body, ctype):
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[code]
        self.request.sendall(f"HTTP/1.1 {code} {reason}\r\nContent-Type: {ctype}\r\n"
                             f"Content-Length: {len(body)}\r\n\r\n".encode() + body)


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests, self.sessions = [], []


def print_frames(log, t0):
    for t, kind, info in log:
        shown = {k: v for k, v in info.items() if k not in ("block", "data")}
        if kind == "DATA":
            shown["data"] = info["data"][:60]
        print(f"  +{t - t0:6.3f}s {kind:11} {shown}")


def capture(kubectl, out):
    server = Server()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = os.path.join(tmp, "kubeconfig")
        with open(kubeconfig, "w") as f:
            f.write(f"""apiVersion: v1
kind: Config
clusters: [{{name: fake, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: u, user: {{}}}}]
contexts: [{{name: c, context: {{cluster: fake, user: u, namespace: default}}}}]
current-context: c
""")
        env = dict(os.environ, HOME=tmp)
        env.pop("KUBECTL_PORT_FORWARD_WEBSOCKETS", None)  # default: try the tunnel first
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [kubectl, "--kubeconfig", kubeconfig, "--cache-dir", os.path.join(tmp, "cache"),
             "port-forward", "pod/p", f"{LOCAL_PORT}:{REMOTE_PORT}"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        output = []
        threading.Thread(target=lambda: output.extend(proc.stdout), daemon=True).start()
        deadline = time.monotonic() + 20
        while not any("Forwarding from 127.0.0.1" in line for line in output):
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                sys.exit(f"kubectl did not start forwarding: {''.join(output)}")
            time.sleep(0.05)
        for _ in range(2):
            res = subprocess.run(["curl", "-sS", "-m", "5", f"http://127.0.0.1:{LOCAL_PORT}/"],
                                 capture_output=True, text=True)
            print(f"curl: rc={res.returncode} out={res.stdout!r} err={res.stderr.strip()!r}")
            ok = res.stdout == "hello\n"
            if not ok:
                break
        if ok:
            time.sleep(5.5)  # past kubectl's 5 s SPDY ping period
        proc.send_signal(signal.SIGINT)
        proc.wait(10)
        time.sleep(1)  # let the session thread drain what kubectl sent last
    print("kubectl output:\n  " + "  ".join(output))
    print("requests:\n  " + "\n  ".join(server.requests))
    for session in server.sessions:
        print(f"recorded {len(session.recorded)} bytes, {len(session.log)} frames:")
        print_frames(session.log, t0)
    if not ok:
        sys.exit("curl did not get the fake response")
    if len(server.sessions) != 1:
        sys.exit(f"expected one SPDY session, got {len(server.sessions)}")
    session = server.sessions[0]
    with open(out, "wb") as f:
        f.write(session.recorded)
    server.shutdown()


def check(path):
    buf = open(path, "rb").read()
    frames, rest = split_frames(buf)
    if rest:
        sys.exit(f"{len(rest)} trailing bytes")
    inflater = HeaderInflater()
    for frame in frames:
        kind, info = describe(frame, inflater)
        print(f"{kind:11} {info}")
    print(f"ok: {len(frames)} frames")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kubectl", default="/usr/lib/google-cloud-sdk/bin/kubectl.1.33")
    ap.add_argument("--out", default="kubectl-1.33-portforward-spdy.bin")
    ap.add_argument("--check", metavar="FILE", help="decode a server->client byte stream and exit")
    args = ap.parse_args()
    if args.check:
        check(args.check)
    else:
        capture(args.kubectl, args.out)
