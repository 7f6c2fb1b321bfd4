//! SPDY/3.1 frame codec, for both ends of `pods/portforward` and `exec`:
//! the simulated kubelet serves it, podbay's forwards speak it.
//!
//! kubectl (client-go over moby/spdystream) speaks SPDY/3.1 to the kubelet,
//! either after a plain `Upgrade: SPDY/3.1` or as a byte stream carried in
//! WebSocket binary messages. This module only turns bytes into frames and
//! frames into bytes; streams, pairing and forwarding live with each end.
//!
//! Header blocks (SYN_STREAM, SYN_REPLY, HEADERS) are compressed as one zlib
//! stream per direction for the whole connection, so the [`Decoder`] and the
//! [`Encoder`] each keep state and must see every frame of their direction.

use bytes::{Buf, Bytes, BytesMut};
use flate2::{Decompress, FlushDecompress, Status};

/// Payload limit for one incoming frame. The wire allows 2^24-1; kubectl
/// sends DATA of at most 32 KiB and header blocks of a few dozen bytes.
pub const MAX_FRAME_PAYLOAD: usize = 1 << 20;
/// Limit for one inflated header block.
pub const MAX_HEADER_BLOCK: usize = 64 << 10;
/// Largest DATA payload the wire format can carry.
pub const MAX_DATA_LEN: usize = (1 << 24) - 1;

// RST_STREAM status codes.
pub const PROTOCOL_ERROR: u32 = 1;
pub const INVALID_STREAM: u32 = 2;
pub const REFUSED_STREAM: u32 = 3;
pub const UNSUPPORTED_VERSION: u32 = 4;
pub const CANCEL: u32 = 5;
pub const INTERNAL_ERROR: u32 = 6;
pub const FLOW_CONTROL_ERROR: u32 = 7;
pub const STREAM_IN_USE: u32 = 8;
pub const STREAM_ALREADY_CLOSED: u32 = 9;

// GOAWAY status codes.
pub const GOAWAY_OK: u32 = 0;
pub const GOAWAY_PROTOCOL_ERROR: u32 = 1;
pub const GOAWAY_INTERNAL_ERROR: u32 = 2;

const VERSION: u16 = 3;
const SYN_STREAM: u16 = 1;
const SYN_REPLY: u16 = 2;
const RST_STREAM: u16 = 3;
const SETTINGS: u16 = 4;
const PING: u16 = 6;
const GOAWAY: u16 = 7;
const HEADERS: u16 = 8;
const WINDOW_UPDATE: u16 = 9;

const FLAG_FIN: u8 = 0x01;
const FLAG_UNIDIRECTIONAL: u8 = 0x02;
const ID_MASK: u32 = 0x7fff_ffff;

/// The SPDY/3 header-compression dictionary (moby/spdystream
/// `spdy/dictionary.go`). kubectl's first header block starts
/// `78 F9 E3 C6 A7 C2`: FDICT set, and this dictionary's Adler-32.
pub const DICTIONARY: &[u8; 1423] = b"\
    \0\0\0\x07options\0\0\0\x04head\0\0\0\x04post\0\0\0\x03put\0\0\0\x06delete\
    \0\0\0\x05trace\0\0\0\x06accept\0\0\0\x0eaccept-charset\0\0\0\x0faccept-encoding\
    \0\0\0\x0faccept-language\0\0\0\x0daccept-ranges\0\0\0\x03age\0\0\0\x05allow\
    \0\0\0\x0dauthorization\0\0\0\x0dcache-control\0\0\0\x0aconnection\0\0\0\x0ccontent-base\
    \0\0\0\x10content-encoding\0\0\0\x10content-language\0\0\0\x0econtent-length\
    \0\0\0\x10content-location\0\0\0\x0bcontent-md5\0\0\0\x0dcontent-range\
    \0\0\0\x0ccontent-type\0\0\0\x04date\0\0\0\x04etag\0\0\0\x06expect\0\0\0\x07expires\
    \0\0\0\x04from\0\0\0\x04host\0\0\0\x08if-match\0\0\0\x11if-modified-since\
    \0\0\0\x0dif-none-match\0\0\0\x08if-range\0\0\0\x13if-unmodified-since\
    \0\0\0\x0dlast-modified\0\0\0\x08location\0\0\0\x0cmax-forwards\0\0\0\x06pragma\
    \0\0\0\x12proxy-authenticate\0\0\0\x13proxy-authorization\0\0\0\x05range\
    \0\0\0\x07referer\0\0\0\x0bretry-after\0\0\0\x06server\0\0\0\x02te\0\0\0\x07trailer\
    \0\0\0\x11transfer-encoding\0\0\0\x07upgrade\0\0\0\x0auser-agent\0\0\0\x04vary\
    \0\0\0\x03via\0\0\0\x07warning\0\0\0\x10www-authenticate\0\0\0\x06method\0\0\0\x03get\
    \0\0\0\x06status\0\0\0\x06200 OK\0\0\0\x07version\0\0\0\x08HTTP/1.1\0\0\0\x03url\
    \0\0\0\x06public\0\0\0\x0aset-cookie\0\0\0\x0akeep-alive\0\0\0\x06origin100101201202205\
    206300302303304305306307402405406407408409410411412413414415416417502504505203 Non-\
    Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 \
    Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 \
    Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, \
    Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,\
    application/xml,application/xhtml+xml,text/plain,text/javascript,\
    publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.";
const DICTIONARY_ID: u32 = 0xE3C6_A7C2;

/// Header name/value pairs; names are lowercase. A value that arrived as
/// several `\0`-separated values is one pair per value, in order.
pub type Headers = Vec<(String, String)>;

/// The first value of header `name` (lowercase).
pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// One decoded frame. Stream ids have the reserved top bit cleared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    SynStream {
        stream_id: u32,
        associated: u32,
        fin: bool,
        unidirectional: bool,
        headers: Headers,
    },
    SynReply {
        stream_id: u32,
        fin: bool,
        headers: Headers,
    },
    Headers {
        stream_id: u32,
        fin: bool,
        headers: Headers,
    },
    Data {
        stream_id: u32,
        fin: bool,
        data: Bytes,
    },
    RstStream {
        stream_id: u32,
        status: u32,
    },
    /// (id, value) pairs; the per-setting flags are dropped.
    Settings(Vec<(u32, u32)>),
    Ping {
        id: u32,
    },
    GoAway {
        last_good: u32,
        status: u32,
    },
    WindowUpdate {
        stream_id: u32,
        delta: u32,
    },
    /// A control frame of a type SPDY/3.1 does not define (or CREDENTIAL);
    /// its payload is skipped.
    Unknown {
        kind: u16,
    },
}

/// Any error is fatal for the connection (answer GOAWAY PROTOCOL_ERROR and
/// close): the shared header stream may be out of step afterwards.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("SPDY frame payload of {0} bytes is over the {MAX_FRAME_PAYLOAD}-byte limit")]
    TooLarge(usize),
    #[error("unsupported SPDY version {0}")]
    Version(u16),
    #[error("malformed SPDY frame: {0}")]
    Malformed(&'static str),
    #[error("SPDY header block: {0}")]
    Compression(String),
    #[error("SPDY header block inflates past {MAX_HEADER_BLOCK} bytes")]
    HeadersTooLarge,
}

/// Turns the other end's byte stream into frames.
pub struct Decoder {
    buf: BytesMut,
    inflate: Decompress,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    pub fn new() -> Self {
        Decoder {
            buf: BytesMut::new(),
            inflate: Decompress::new(true),
        }
    }

    /// Appends bytes as they arrive, in pieces of any size (including none).
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes pushed but not yet returned as a frame. Non-zero at EOF means
    /// the peer stopped mid-frame.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The next complete frame, or `None` until more bytes are pushed.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, Error> {
        let Some(head) = self.buf.first_chunk::<8>().copied() else {
            return Ok(None);
        };
        let control = head[0] & 0x80 != 0;
        let version = u16::from_be_bytes([head[0] & 0x7f, head[1]]);
        if control && version != VERSION {
            return Err(Error::Version(version));
        }
        let flags = head[4];
        let len = u32::from_be_bytes([0, head[5], head[6], head[7]]) as usize;
        if len > MAX_FRAME_PAYLOAD {
            return Err(Error::TooLarge(len));
        }
        if self.buf.len() < 8 + len {
            return Ok(None);
        }
        self.buf.advance(8);
        let payload = self.buf.split_to(len).freeze();
        if !control {
            let stream_id = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
            let fin = flags & FLAG_FIN != 0;
            return Ok(Some(Frame::Data {
                stream_id,
                fin,
                data: payload,
            }));
        }
        let kind = u16::from_be_bytes([head[2], head[3]]);
        self.control(kind, flags, &payload).map(Some)
    }

    fn control(&mut self, kind: u16, flags: u8, p: &[u8]) -> Result<Frame, Error> {
        let fin = flags & FLAG_FIN != 0;
        Ok(match kind {
            SYN_STREAM => {
                if p.len() < 10 {
                    return Err(Error::Malformed("SYN_STREAM shorter than 10 bytes"));
                }
                Frame::SynStream {
                    stream_id: word(p, 0) & ID_MASK,
                    associated: word(p, 4) & ID_MASK,
                    fin,
                    unidirectional: flags & FLAG_UNIDIRECTIONAL != 0,
                    headers: self.headers(&p[10..])?,
                }
            }
            SYN_REPLY | HEADERS => {
                if p.len() < 4 {
                    return Err(Error::Malformed(
                        "SYN_REPLY or HEADERS shorter than 4 bytes",
                    ));
                }
                let (stream_id, headers) = (word(p, 0) & ID_MASK, self.headers(&p[4..])?);
                if kind == SYN_REPLY {
                    Frame::SynReply {
                        stream_id,
                        fin,
                        headers,
                    }
                } else {
                    Frame::Headers {
                        stream_id,
                        fin,
                        headers,
                    }
                }
            }
            RST_STREAM => {
                exact(p, 8, "RST_STREAM is not 8 bytes")?;
                Frame::RstStream {
                    stream_id: word(p, 0) & ID_MASK,
                    status: word(p, 4),
                }
            }
            SETTINGS => {
                let count = p.get(..4).map(|_| u64::from(word(p, 0)));
                if count.map(|n| 4 + 8 * n) != Some(p.len() as u64) {
                    return Err(Error::Malformed("SETTINGS length does not match its count"));
                }
                let entries = p[4..].chunks_exact(8);
                Frame::Settings(
                    entries
                        .map(|e| (word(e, 0) & 0xff_ffff, word(e, 4)))
                        .collect(),
                )
            }
            PING => {
                exact(p, 4, "PING is not 4 bytes")?;
                Frame::Ping { id: word(p, 0) }
            }
            GOAWAY => {
                exact(p, 8, "GOAWAY is not 8 bytes")?;
                Frame::GoAway {
                    last_good: word(p, 0) & ID_MASK,
                    status: word(p, 4),
                }
            }
            WINDOW_UPDATE => {
                exact(p, 8, "WINDOW_UPDATE is not 8 bytes")?;
                Frame::WindowUpdate {
                    stream_id: word(p, 0) & ID_MASK,
                    delta: word(p, 4) & ID_MASK,
                }
            }
            kind => Frame::Unknown { kind },
        })
    }

    fn headers(&mut self, block: &[u8]) -> Result<Headers, Error> {
        parse_header_block(&self.inflate_block(block)?)
    }

    /// Inflates one frame's share of the connection's zlib stream. The peer
    /// ends each block with a sync flush, so all of it is decodable now.
    fn inflate_block(&mut self, block: &[u8]) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(256);
        let mut pos = 0;
        loop {
            if out.len() == out.capacity() {
                out.reserve(out.capacity());
            }
            let (in_before, out_before) = (self.inflate.total_in(), out.len());
            let status =
                self.inflate
                    .decompress_vec(&block[pos..], &mut out, FlushDecompress::Sync);
            pos += (self.inflate.total_in() - in_before) as usize;
            match status {
                Ok(Status::StreamEnd) => {
                    return Err(Error::Compression("the zlib stream ended".into()));
                }
                Ok(_) => {}
                Err(e) if e.needs_dictionary() == Some(DICTIONARY_ID) => {
                    self.inflate
                        .set_dictionary(DICTIONARY)
                        .map_err(|e| Error::Compression(e.to_string()))?;
                    continue;
                }
                Err(e) => return Err(Error::Compression(e.to_string())),
            }
            if out.len() > MAX_HEADER_BLOCK {
                return Err(Error::HeadersTooLarge);
            }
            if pos == block.len() && out.len() < out.capacity() {
                return Ok(out);
            }
            if self.inflate.total_in() == in_before && out.len() == out_before {
                return Err(Error::Compression("inflate made no progress".into()));
            }
        }
    }
}

fn word(p: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
}

fn exact(p: &[u8], len: usize, what: &'static str) -> Result<(), Error> {
    if p.len() == len {
        Ok(())
    } else {
        Err(Error::Malformed(what))
    }
}

/// `u32 count`, then per entry `u32 len, name, u32 len, value` (SPDY/3
/// lengths are 32-bit, unlike SPDY/2's 16).
fn parse_header_block(mut raw: &[u8]) -> Result<Headers, Error> {
    fn take<'a>(raw: &mut &'a [u8]) -> Result<&'a [u8], Error> {
        let len = raw.get(..4).map(|b| word(b, 0) as usize);
        let Some(len) = len.filter(|&len| len <= raw.len() - 4) else {
            return Err(Error::Malformed("header block entry runs past its end"));
        };
        let (field, rest) = raw[4..].split_at(len);
        *raw = rest;
        Ok(field)
    }
    fn text(bytes: &[u8]) -> Result<&str, Error> {
        std::str::from_utf8(bytes).map_err(|_| Error::Malformed("header is not UTF-8"))
    }
    let count = raw.get(..4).map(|b| word(b, 0) as usize);
    let Some(count) = count.filter(|&count| count <= (raw.len() - 4) / 8) else {
        return Err(Error::Malformed(
            "header count does not fit the header block",
        ));
    };
    raw = &raw[4..];
    let mut headers = Vec::with_capacity(count);
    for _ in 0..count {
        let name = text(take(&mut raw)?)?.to_ascii_lowercase();
        for value in text(take(&mut raw)?)?.split('\0') {
            headers.push((name.clone(), value.to_owned()));
        }
    }
    if !raw.is_empty() {
        return Err(Error::Malformed("bytes after the last header"));
    }
    Ok(headers)
}

/// Writes the server's header blocks (SYN_REPLY), which share one zlib
/// stream per connection; the other frames are the plain functions below.
///
/// Header blocks are stored (uncompressed) deflate blocks after a `78 01`
/// zlib header on the first one: no FDICT, so no dictionary is involved,
/// and Go's `zlib.NewReaderDict` takes it as a plain stream. Each block ends
/// with the empty stored block of a zlib sync flush (`00 00 00 FF FF`):
/// without it Go's flate reader, after a stored block, reads on for the
/// next block header past the end of the frame, hits the frame's limit and
/// fails every later header block on the connection (kubectl then drops
/// the connection at its second SYN_REPLY).
#[derive(Debug, Default)]
pub struct Encoder {
    started: bool,
}

impl Encoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// `headers` names are sent lowercased; repeated names become one entry
    /// with the values joined by `\0`, as spdystream expects.
    pub fn syn_reply(&mut self, stream_id: u32, headers: &[(&str, &str)], fin: bool) -> Vec<u8> {
        let mut payload = (stream_id & ID_MASK).to_be_bytes().to_vec();
        self.header_block(headers, &mut payload);
        control(SYN_REPLY, if fin { FLAG_FIN } else { 0 }, &payload)
    }

    /// A client's SYN_STREAM (no associated stream, priority 0).
    pub fn syn_stream(&mut self, stream_id: u32, headers: &[(&str, &str)], fin: bool) -> Vec<u8> {
        let mut payload = (stream_id & ID_MASK).to_be_bytes().to_vec();
        payload.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        self.header_block(headers, &mut payload);
        control(SYN_STREAM, if fin { FLAG_FIN } else { 0 }, &payload)
    }

    fn header_block(&mut self, headers: &[(&str, &str)], out: &mut Vec<u8>) {
        let mut merged: Vec<(String, String)> = Vec::with_capacity(headers.len());
        for (name, value) in headers {
            let name = name.to_ascii_lowercase();
            match merged.iter_mut().find(|(n, _)| *n == name) {
                Some((_, values)) => {
                    values.push('\0');
                    values.push_str(value);
                }
                None => merged.push((name, (*value).to_owned())),
            }
        }
        let mut raw = (merged.len() as u32).to_be_bytes().to_vec();
        for field in merged.iter().flat_map(|(n, v)| [n, v]) {
            raw.extend_from_slice(&(field.len() as u32).to_be_bytes());
            raw.extend_from_slice(field.as_bytes());
        }
        if !std::mem::replace(&mut self.started, true) {
            out.extend_from_slice(&[0x78, 0x01]);
        }
        for chunk in raw.chunks(0xffff) {
            let len = chunk.len() as u16;
            out.push(0x00); // BFINAL 0, BTYPE 00 (stored)
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&(!len).to_le_bytes());
            out.extend_from_slice(chunk);
        }
        out.extend_from_slice(&[0x00, 0x00, 0x00, 0xff, 0xff]);
    }
}

/// One DATA frame; callers split payloads over [`MAX_DATA_LEN`].
pub fn data(stream_id: u32, fin: bool, payload: &[u8]) -> Vec<u8> {
    assert!(
        payload.len() <= MAX_DATA_LEN,
        "DATA payload of {} bytes",
        payload.len()
    );
    let mut frame = Vec::with_capacity(8 + payload.len());
    frame.extend_from_slice(&(stream_id & ID_MASK).to_be_bytes());
    frame.push(if fin { FLAG_FIN } else { 0 });
    frame.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
    frame.extend_from_slice(payload);
    frame
}

pub fn rst_stream(stream_id: u32, status: u32) -> Vec<u8> {
    control(RST_STREAM, 0, &pair(stream_id & ID_MASK, status))
}

pub fn ping(id: u32) -> Vec<u8> {
    control(PING, 0, &id.to_be_bytes())
}

pub fn goaway(last_good: u32, status: u32) -> Vec<u8> {
    control(GOAWAY, 0, &pair(last_good & ID_MASK, status))
}

fn pair(a: u32, b: u32) -> [u8; 8] {
    let mut bytes = [0; 8];
    bytes[..4].copy_from_slice(&a.to_be_bytes());
    bytes[4..].copy_from_slice(&b.to_be_bytes());
    bytes
}

fn control(kind: u16, flags: u8, payload: &[u8]) -> Vec<u8> {
    assert!(
        payload.len() <= MAX_DATA_LEN,
        "control frame payload of {} bytes",
        payload.len()
    );
    let mut frame = Vec::with_capacity(8 + payload.len());
    frame.extend_from_slice(&(0x8000 | VERSION).to_be_bytes());
    frame.extend_from_slice(&kind.to_be_bytes());
    frame.push(flags);
    frame.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
    frame.extend_from_slice(payload);
    frame
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{Compress, Compression, FlushCompress};

    /// Everything kubectl 1.33 sent after the 101 in one `port-forward`
    /// session, two curls through it (testdata/capture_portforward.py).
    const KUBECTL: &[u8] = include_bytes!("testdata/kubectl-1.33-portforward-spdy.bin");

    fn hex(s: &str) -> Vec<u8> {
        let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        let nibble = |d: u8| (d as char).to_digit(16).unwrap() as u8;
        digits
            .chunks(2)
            .map(|p| nibble(p[0]) << 4 | nibble(p[1]))
            .collect()
    }

    fn decode_in_pieces(bytes: &[u8], piece: usize) -> Vec<Frame> {
        let mut decoder = Decoder::new();
        let mut frames = Vec::new();
        for chunk in bytes.chunks(piece) {
            decoder.push(&[]);
            assert_eq!(decoder.next_frame().unwrap(), None);
            decoder.push(chunk);
            while let Some(frame) = decoder.next_frame().unwrap() {
                frames.push(frame);
            }
        }
        assert_eq!(decoder.buffered(), 0, "bytes left over");
        frames
    }

    fn sorted(headers: &Headers) -> Vec<(&str, &str)> {
        let mut pairs: Vec<_> = headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        pairs.sort();
        pairs
    }

    fn syn_stream(stream_id: u32, block: &[u8]) -> Vec<u8> {
        let mut payload = pair(stream_id, 0).to_vec();
        payload.extend_from_slice(&[0, 0]);
        payload.extend_from_slice(block);
        control(SYN_STREAM, 0, &payload)
    }

    fn decode_one(bytes: &[u8]) -> Result<Option<Frame>, Error> {
        let mut decoder = Decoder::new();
        decoder.push(bytes);
        decoder.next_frame()
    }

    #[test]
    fn dictionary_is_the_spdy3_one() {
        let (mut a, mut b) = (1u32, 0u32);
        for &byte in DICTIONARY {
            a = (a + u32::from(byte)) % 65521;
            b = (b + a) % 65521;
        }
        assert_eq!(DICTIONARY.len(), 1423);
        assert_eq!(b << 16 | a, DICTIONARY_ID);
    }

    fn expect_syn(frame: &Frame, id: u32, kind: &str, request: &str) {
        match frame {
            Frame::SynStream {
                stream_id,
                associated: 0,
                fin: false,
                unidirectional: false,
                headers,
            } if *stream_id == id => {
                assert_eq!(
                    sorted(headers),
                    [
                        ("port", "8080"),
                        ("requestid", request),
                        ("streamtype", kind)
                    ]
                );
            }
            other => panic!("expected SYN_STREAM {id}, got {other:?}"),
        }
    }

    #[test]
    fn kubectl_capture_decodes_fed_in_any_pieces() {
        // kubectl's first header block asks for the dictionary by its id.
        assert_eq!(KUBECTL[18..24], [0x78, 0xf9, 0xe3, 0xc6, 0xa7, 0xc2]);
        let frames = decode_in_pieces(KUBECTL, KUBECTL.len());
        for piece in [1, 7, 13] {
            assert_eq!(
                decode_in_pieces(KUBECTL, piece),
                frames,
                "in {piece}-byte pieces"
            );
        }

        let mut frames = frames.iter();
        let mut next = || frames.next().expect("frame missing");
        // Per curl connection: error stream, its client half-close at once,
        // data stream, curl's request, curl's close. Ids are odd, from 1.
        for (request, error, data) in [("0", 1, 3), ("1", 5, 7)] {
            expect_syn(next(), error, "error", request);
            let fin = Frame::Data {
                stream_id: error,
                fin: true,
                data: Bytes::new(),
            };
            assert_eq!(*next(), fin);
            expect_syn(next(), data, "data", request);
            match next() {
                Frame::Data {
                    stream_id,
                    fin: false,
                    data: request,
                } if *stream_id == data => {
                    assert!(request.starts_with(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:18080\r\n"));
                    assert!(request.ends_with(b"\r\n\r\n"));
                }
                other => panic!("expected curl's request on {data}, got {other:?}"),
            }
            assert_eq!(
                *next(),
                Frame::Data {
                    stream_id: data,
                    fin: true,
                    data: Bytes::new()
                }
            );
        }
        // The 5 s keep-alive ping (odd: client side), then SIGINT's GOAWAY.
        assert_eq!(*next(), Frame::Ping { id: 1 });
        assert_eq!(
            *next(),
            Frame::GoAway {
                last_good: 0,
                status: GOAWAY_OK
            }
        );
        assert_eq!(frames.next(), None);
    }

    /// Made with Python's zlib (`compressobj(9, zdict=DICTIONARY)`, sync
    /// flush per block): another compressor than Go's, same stream format.
    #[test]
    fn decodes_reference_zlib_blocks_sharing_one_stream() {
        let first = hex(
            "78f9e3c6a7c202253a703a2b294a4dcc851625aca9a0808614cb45e01c6061606100a4398b20d198094ade8c0600000000ffff",
        );
        let second = hex("c2aa19540e2512d60b000000ffff");
        let mut decoder = Decoder::new();
        decoder.push(&syn_stream(1, &first));
        decoder.push(&syn_stream(3, &second));
        for (id, kind) in [(1, "error"), (3, "data")] {
            let Some(Frame::SynStream {
                stream_id, headers, ..
            }) = decoder.next_frame().unwrap()
            else {
                panic!("expected SYN_STREAM {id}");
            };
            assert_eq!(stream_id, id);
            let expected = [("streamtype", kind), ("port", "8080"), ("requestid", "0")];
            assert_eq!(
                headers
                    .iter()
                    .map(|(n, v)| (n.as_str(), v.as_str()))
                    .collect::<Vec<_>>(),
                expected
            );
            assert_eq!(header(&headers, "port"), Some("8080"));
        }
    }

    /// These exact bytes went to kubectl 1.33 in the capture, which went on
    /// to use the streams. Python's zlib decodes them too
    /// (capture_portforward.py --check), and so did spdystream's Framer
    /// (Go 1.19) when this was written.
    #[test]
    fn encoder_writes_the_bytes_kubectl_accepted() {
        let mut encoder = Encoder::new();
        let first = "80030002 00000014 00000001  7801 00 0400 fbff 00000000 00 0000 ffff";
        assert_eq!(encoder.syn_reply(1, &[], false), hex(first));
        let later = "80030002 00000012 00000003  00 0400 fbff 00000000 00 0000 ffff";
        assert_eq!(encoder.syn_reply(3, &[], false), hex(later));
        assert_eq!(data(1, true, b""), hex("00000001 01 000000"));
        assert_eq!(data(3, false, b"hi"), hex("00000003 00 000002 6869"));
        assert_eq!(
            rst_stream(3, CANCEL),
            hex("80030003 00000008 00000003 00000005")
        );
        assert_eq!(ping(1), hex("80030006 00000004 00000001"));
        assert_eq!(
            goaway(7, GOAWAY_OK),
            hex("80030007 00000008 00000007 00000000")
        );
    }

    /// As Go's reader does: one inflater for the connection, given the
    /// dictionary only if the stream asks for it.
    #[test]
    fn encoder_header_blocks_form_one_zlib_stream() {
        let big = "v".repeat(70_000); // more than one stored block
        let sets: [&[(&str, &str)]; 3] = [
            &[],
            &[
                ("X-Stream-Protocol-Version", "portforward.k8s.io"),
                ("a", "1"),
                ("A", "2"),
            ],
            &[("big", &big)],
        ];
        let expected: [Headers; 3] = [
            vec![],
            vec![
                (
                    "x-stream-protocol-version".into(),
                    "portforward.k8s.io".into(),
                ),
                ("a".into(), "1".into()),
                ("a".into(), "2".into()),
            ],
            vec![("big".into(), big.clone())],
        ];
        let mut encoder = Encoder::new();
        let mut inflate = Decompress::new(true);
        for (i, (set, expected)) in sets.iter().zip(expected).enumerate() {
            let frame = encoder.syn_reply(2 * i as u32 + 1, set, i == 2);
            assert_eq!(frame[..4], [0x80, 0x03, 0x00, 0x02]);
            assert_eq!(frame[4], if i == 2 { FLAG_FIN } else { 0 });
            assert_eq!(word(&frame, 4) as usize & 0xff_ffff, frame.len() - 8);
            assert_eq!(word(&frame, 8), 2 * i as u32 + 1);
            let block = &frame[12..];
            // Stored blocks: the output is never longer than the input.
            let mut out = Vec::with_capacity(block.len());
            let mut pos = 0;
            while pos < block.len() {
                let before = inflate.total_in();
                match inflate.decompress_vec(&block[pos..], &mut out, FlushDecompress::Sync) {
                    Ok(Status::Ok) => {}
                    Err(e) if e.needs_dictionary() == Some(DICTIONARY_ID) => {
                        inflate.set_dictionary(DICTIONARY).unwrap();
                    }
                    other => panic!("block {i}: {other:?}"),
                }
                pos += (inflate.total_in() - before) as usize;
            }
            assert_eq!(parse_header_block(&out).unwrap(), expected, "block {i}");
        }
    }

    #[test]
    fn decoder_reads_what_the_encoder_writes() {
        let mut encoder = Encoder::new();
        let value = "x".repeat(60_000);
        let mut decoder = Decoder::new();
        decoder.push(&encoder.syn_reply(1, &[], false));
        let mut headers_frame = 1u32.to_be_bytes().to_vec();
        encoder.header_block(&[("Port", "8080")], &mut headers_frame);
        decoder.push(&control(HEADERS, FLAG_FIN, &headers_frame));
        decoder.push(&encoder.syn_reply(3, &[("k", &value)], true));
        decoder.push(&data(3, true, b"payload"));
        let frames: Vec<_> = std::iter::from_fn(|| decoder.next_frame().unwrap()).collect();
        let expected = [
            Frame::SynReply {
                stream_id: 1,
                fin: false,
                headers: vec![],
            },
            Frame::Headers {
                stream_id: 1,
                fin: true,
                headers: vec![("port".into(), "8080".into())],
            },
            Frame::SynReply {
                stream_id: 3,
                fin: true,
                headers: vec![("k".into(), value.clone())],
            },
            Frame::Data {
                stream_id: 3,
                fin: true,
                data: Bytes::from_static(b"payload"),
            },
        ];
        assert_eq!(frames, expected);
    }

    #[test]
    fn other_control_frames() {
        let mut bytes = control(SETTINGS, 0, &hex("00000001 01000007 00010000"));
        bytes.extend(control(WINDOW_UPDATE, 0, &pair(5, 1024)));
        bytes.extend(control(10, 0, b"credential")); // SPDY/3 CREDENTIAL: skipped
        bytes.extend(rst_stream(5, REFUSED_STREAM));
        let frames = decode_in_pieces(&bytes, 3);
        let expected = [
            Frame::Settings(vec![(7, 65536)]),
            Frame::WindowUpdate {
                stream_id: 5,
                delta: 1024,
            },
            Frame::Unknown { kind: 10 },
            Frame::RstStream {
                stream_id: 5,
                status: REFUSED_STREAM,
            },
        ];
        assert_eq!(frames, expected);
    }

    #[test]
    fn a_partial_frame_is_not_an_error() {
        let first_frame = &KUBECTL[..8 + (word(KUBECTL, 4) & 0xff_ffff) as usize];
        let mut decoder = Decoder::new();
        for &byte in &first_frame[..first_frame.len() - 1] {
            decoder.push(&[byte]);
            assert_eq!(decoder.next_frame().unwrap(), None);
        }
        decoder.push(&first_frame[first_frame.len() - 1..]);
        assert!(matches!(
            decoder.next_frame(),
            Ok(Some(Frame::SynStream { stream_id: 1, .. }))
        ));
        assert_eq!(decoder.next_frame().unwrap(), None);
    }

    #[test]
    fn an_oversized_length_fails_before_its_payload_arrives() {
        assert!(matches!(
            decode_one(&hex("00000001 00 100001")),
            Err(Error::TooLarge(0x10_0001))
        ));
        assert!(matches!(
            decode_one(&hex("80030000 00 ffffff")),
            Err(Error::TooLarge(0xff_ffff))
        ));
        // An HTTP request sent to the SPDY side: "GET / HTTP/1.1" reads as a
        // DATA frame of 0x204854 bytes.
        assert!(matches!(
            decode_one(b"GET / HTTP/1.1\r\n"),
            Err(Error::TooLarge(_))
        ));
        assert!(matches!(decode_one(&hex("00000001 00 100000")), Ok(None)));
    }

    #[test]
    fn a_control_frame_of_another_version_fails() {
        assert!(matches!(
            decode_one(&hex("80020001 00000000")),
            Err(Error::Version(2))
        ));
        assert!(matches!(
            decode_one(&hex("ffff0006 00000004")),
            Err(Error::Version(0x7fff))
        ));
    }

    #[test]
    fn malformed_frames_fail() {
        let short_rst = control(RST_STREAM, 0, &[0, 0, 0, 1]);
        assert!(matches!(decode_one(&short_rst), Err(Error::Malformed(_))));
        let settings_count_lies = control(SETTINGS, 0, &hex("00000002 01000007 00010000"));
        assert!(matches!(
            decode_one(&settings_count_lies),
            Err(Error::Malformed(_))
        ));
        let short_syn = control(SYN_STREAM, 0, &[0; 9]);
        assert!(matches!(decode_one(&short_syn), Err(Error::Malformed(_))));
        // A header block claiming 5 headers, holding none.
        let count_lies = syn_stream(1, &hex("7801 00 0400 fbff 00000005 00 0000 ffff"));
        assert!(matches!(decode_one(&count_lies), Err(Error::Malformed(_))));
        // A name length running past the block.
        let name_too_long = syn_stream(
            1,
            &hex("7801 00 0c00 f3ff 00000001 00000009 6e616d65 00 0000 ffff"),
        );
        assert!(matches!(
            decode_one(&name_too_long),
            Err(Error::Malformed(_))
        ));
    }

    #[test]
    fn a_header_block_that_is_not_zlib_fails() {
        let garbage = syn_stream(1, b"\x00\x01garbage");
        assert!(matches!(decode_one(&garbage), Err(Error::Compression(_))));
        // FDICT with a dictionary id other than SPDY/3's.
        let other_dict = syn_stream(1, &hex("78f9 00000001 0000 ffff"));
        assert!(matches!(
            decode_one(&other_dict),
            Err(Error::Compression(_))
        ));
        // A block that ends the zlib stream (BFINAL): the next one could not follow.
        let mut ended = Compress::new(Compression::best(), true);
        let mut block = Vec::with_capacity(64);
        ended
            .compress_vec(&[0, 0, 0, 0], &mut block, FlushCompress::Finish)
            .unwrap();
        assert!(matches!(
            decode_one(&syn_stream(1, &block)),
            Err(Error::Compression(_))
        ));
    }

    #[test]
    fn a_header_block_inflating_past_the_limit_fails() {
        let mut raw = hex("00000001 00000001 61");
        raw.extend_from_slice(&(MAX_HEADER_BLOCK as u32).to_be_bytes());
        raw.resize(raw.len() + MAX_HEADER_BLOCK, b'a');
        let mut deflate = Compress::new(Compression::best(), true);
        deflate.set_dictionary(DICTIONARY).unwrap();
        let mut block = Vec::with_capacity(MAX_HEADER_BLOCK);
        deflate
            .compress_vec(&raw, &mut block, FlushCompress::Sync)
            .unwrap();
        assert!(block.len() < 1024, "{} bytes", block.len());
        assert!(matches!(
            decode_one(&syn_stream(1, &block)),
            Err(Error::HeadersTooLarge)
        ));
    }
}
