//! Packet captures as bytes: tcpdump's pcap stream cut into packets, and
//! pcapng written for several pods at once (one interface per pod, named
//! `namespace/pod`), their packets merged in time order.
//!
//! Formats: pcap as libpcap writes it (either byte order, microsecond or
//! nanosecond magic); pcapng as draft-ietf-opsawg-pcapng defines its
//! section header, interface description and enhanced packet blocks.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::{Buf as _, Bytes, BytesMut};

/// A pcap file's global header.
const FILE_HEADER: usize = 24;
/// A pcap record's header: seconds, fraction, captured and original length.
const RECORD_HEADER: usize = 16;
/// The most one record may hold. libpcap caps a snapshot at 256 KiB; a
/// larger length means the stream is not a capture (or is corrupt), and
/// is refused rather than buffered.
const LARGEST_RECORD: usize = 1 << 20;

/// What a pcap stream's header says of its packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    /// LINKTYPE_* (`-i any` on Linux: 276, LINUX_SLL2).
    pub linktype: u32,
    pub snaplen: u32,
    /// Timestamps in nanoseconds (else microseconds).
    pub nanos: bool,
    big_endian: bool,
}

/// One captured packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Since the epoch.
    pub ts_ns: u64,
    /// Its length on the wire (the data may be cut at the snapshot length).
    pub wire_len: u32,
    pub data: Bytes,
}

/// Cuts a pcap stream, as it arrives in chunks of any size, into packets.
#[derive(Debug, Default)]
pub struct Splitter {
    held: BytesMut,
    format: Option<Format>,
}

impl Splitter {
    pub fn new() -> Self {
        Self::default()
    }

    /// The stream's header, once it has arrived.
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// Bytes held of a packet not yet whole.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Takes `chunk`; every packet it completes goes to `each`, in order.
    /// A stream that is not pcap is refused in a sentence's end ("… is
    /// not a pcap stream: …").
    pub fn feed(&mut self, chunk: &[u8], mut each: impl FnMut(Packet)) -> Result<(), String> {
        self.held.extend_from_slice(chunk);
        let format = match self.format {
            Some(format) => format,
            None if self.held.len() < FILE_HEADER => return Ok(()),
            None => {
                let format = Format::read(&self.held.split_to(FILE_HEADER))?;
                *self.format.insert(format)
            }
        };
        while self.held.len() >= RECORD_HEADER {
            let field = |at: usize| format.u32(&self.held[at..at + 4]);
            let (seconds, fraction) = (field(0), field(4));
            let (captured, wire_len) = (field(8) as usize, field(12));
            if captured > LARGEST_RECORD {
                return Err(format!(
                    "a packet of {captured} bytes is past any snapshot length"
                ));
            }
            if self.held.len() < RECORD_HEADER + captured {
                break;
            }
            self.held.advance(RECORD_HEADER);
            let data = self.held.split_to(captured).freeze();
            let scale = if format.nanos { 1 } else { 1_000 };
            each(Packet {
                ts_ns: u64::from(seconds) * 1_000_000_000 + u64::from(fraction) * scale,
                wire_len,
                data,
            });
        }
        Ok(())
    }
}

impl Format {
    fn read(header: &[u8]) -> Result<Format, String> {
        let Some(magic) = header.get(..4) else {
            return Err("it ended before its header".into());
        };
        let (big_endian, nanos) = match magic {
            [0xd4, 0xc3, 0xb2, 0xa1] => (false, false),
            [0x4d, 0x3c, 0xb2, 0xa1] => (false, true),
            [0xa1, 0xb2, 0xc3, 0xd4] => (true, false),
            [0xa1, 0xb2, 0x3c, 0x4d] => (true, true),
            _ => {
                return Err(format!(
                    "it starts with {:02x?}, not a pcap header",
                    &header[..4]
                ));
            }
        };
        let mut format = Format {
            linktype: 0,
            snaplen: 0,
            nanos,
            big_endian,
        };
        format.snaplen = format.u32(&header[16..20]);
        // The top bits carry the FCS length, not the link type.
        format.linktype = format.u32(&header[20..24]) & 0x0fff_ffff;
        Ok(format)
    }

    fn u32(&self, bytes: &[u8]) -> u32 {
        let bytes = [bytes[0], bytes[1], bytes[2], bytes[3]];
        match self.big_endian {
            true => u32::from_be_bytes(bytes),
            false => u32::from_le_bytes(bytes),
        }
    }
}

/// pcapng's blocks, little-endian, every interface in nanoseconds.
pub mod pcapng {
    use super::Format;

    const SECTION_HEADER: u32 = 0x0a0d_0d0a;
    const INTERFACE: u32 = 1;
    const ENHANCED_PACKET: u32 = 6;
    const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;
    const OPT_END: u16 = 0;
    const SHB_USER_APPLICATION: u16 = 4;
    const IF_NAME: u16 = 2;
    const IF_TSRESOL: u16 = 9;

    /// The file's first block: a section of unknown length.
    pub fn section_header(out: &mut Vec<u8>) {
        block(out, SECTION_HEADER, |body| {
            put32(body, BYTE_ORDER_MAGIC);
            body.extend_from_slice(&1u16.to_le_bytes());
            body.extend_from_slice(&0u16.to_le_bytes());
            body.extend_from_slice(&(-1i64).to_le_bytes());
            option(body, SHB_USER_APPLICATION, b"podbay");
            option(body, OPT_END, b"");
        });
    }

    /// An interface: one pod's capture, `name` being `namespace/pod`.
    pub fn interface(out: &mut Vec<u8>, format: &Format, name: &str) {
        block(out, INTERFACE, |body| {
            body.extend_from_slice(&(format.linktype as u16).to_le_bytes());
            body.extend_from_slice(&0u16.to_le_bytes());
            put32(body, format.snaplen);
            option(body, IF_NAME, name.as_bytes());
            option(body, IF_TSRESOL, &[9]);
            option(body, OPT_END, b"");
        });
    }

    /// A packet of interface `interface` (counted from 0, in the order
    /// their descriptions were written).
    pub fn packet(out: &mut Vec<u8>, interface: u32, packet: &super::Packet) {
        block(out, ENHANCED_PACKET, |body| {
            put32(body, interface);
            put32(body, (packet.ts_ns >> 32) as u32);
            put32(body, packet.ts_ns as u32);
            put32(body, packet.data.len() as u32);
            put32(body, packet.wire_len);
            body.extend_from_slice(&packet.data);
            pad(body);
        });
    }

    fn block(out: &mut Vec<u8>, kind: u32, body: impl FnOnce(&mut Vec<u8>)) {
        let start = out.len();
        put32(out, kind);
        put32(out, 0);
        body(out);
        let length = (out.len() - start + 4) as u32;
        put32(out, length);
        out[start + 4..start + 8].copy_from_slice(&length.to_le_bytes());
    }

    fn option(out: &mut Vec<u8>, code: u16, value: &[u8]) {
        out.extend_from_slice(&code.to_le_bytes());
        out.extend_from_slice(&(value.len() as u16).to_le_bytes());
        out.extend_from_slice(value);
        pad(out);
    }

    fn pad(out: &mut Vec<u8>) {
        out.resize(out.len().next_multiple_of(4), 0);
    }

    fn put32(out: &mut Vec<u8>, value: u32) {
        out.extend_from_slice(&value.to_le_bytes());
    }
}

/// Several pods' packets into one stream in time order. Packets come
/// late from one pod and early from another, so each is held until every
/// pod still capturing has one queued (none of theirs can be earlier), or
/// for [`Merge::HOLD`] at most: a quiet pod does not hold the file back.
#[derive(Debug)]
pub struct Merge {
    queues: Vec<VecDeque<(Duration, Packet)>>,
    open: Vec<bool>,
    queued: usize,
}

impl Merge {
    /// The longest a packet waits for a quiet pod's.
    pub const HOLD: Duration = Duration::from_millis(500);
    /// The most packets held at once (memory stays bounded whatever the rate).
    pub const MOST_HELD: usize = 4096;

    pub fn new(streams: usize) -> Self {
        Merge {
            queues: vec![VecDeque::new(); streams],
            open: vec![true; streams],
            queued: 0,
        }
    }

    /// A packet of `stream`, arrived at `now` (any clock, the same for all).
    pub fn push(&mut self, stream: usize, packet: Packet, now: Duration) {
        self.queues[stream].push_back((now, packet));
        self.queued += 1;
    }

    /// `stream` will send no more.
    pub fn close(&mut self, stream: usize) {
        self.open[stream] = false;
    }

    /// The packets that may go out at `now`, earliest first; with `all`,
    /// every packet held (the capture is over).
    pub fn ready(&mut self, now: Duration, all: bool) -> Vec<(usize, Packet)> {
        let mut out = Vec::new();
        while let Some(stream) = self.earliest() {
            let every_open_has_one = self
                .queues
                .iter()
                .zip(&self.open)
                .all(|(queue, open)| !open || !queue.is_empty());
            let (arrived, _) = self.queues[stream][0];
            let waited = now.saturating_sub(arrived) >= Self::HOLD;
            if !(all || every_open_has_one || waited || self.queued > Self::MOST_HELD) {
                break;
            }
            if let Some((_, packet)) = self.queues[stream].pop_front() {
                self.queued -= 1;
                out.push((stream, packet));
            }
        }
        out
    }

    /// The stream whose first packet is earliest.
    fn earliest(&self) -> Option<usize> {
        self.queues
            .iter()
            .enumerate()
            .filter_map(|(i, q)| q.front().map(|(_, p)| (p.ts_ns, i)))
            .min()
            .map(|(_, i)| i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pcap stream as libpcap writes one (little-endian, microseconds).
    fn pcap(linktype: u32, packets: &[(u32, u32, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        out.extend_from_slice(&2u16.to_le_bytes());
        out.extend_from_slice(&4u16.to_le_bytes());
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&262_144u32.to_le_bytes());
        out.extend_from_slice(&linktype.to_le_bytes());
        for (seconds, micros, data) in packets {
            for word in [*seconds, *micros, data.len() as u32, data.len() as u32 + 10] {
                out.extend_from_slice(&word.to_le_bytes());
            }
            out.extend_from_slice(data);
        }
        out
    }

    #[test]
    fn a_stream_cut_anywhere_gives_the_same_packets() {
        let stream = pcap(
            276,
            &[(10, 5, b"first"), (11, 0, b""), (12, 999_999, b"third!")],
        );
        for cut in 1..stream.len() {
            let mut splitter = Splitter::new();
            let mut got = Vec::new();
            for piece in stream.chunks(cut) {
                splitter.feed(piece, |p| got.push(p)).unwrap();
            }
            assert_eq!(got.len(), 3, "cut every {cut} bytes");
            assert_eq!(got[0].ts_ns, 10_000_005_000);
            assert_eq!(&got[0].data[..], b"first");
            assert_eq!(got[0].wire_len, 15);
            assert_eq!(got[2].ts_ns, 12_999_999_000);
            assert_eq!(splitter.held(), 0);
            assert_eq!(splitter.format().unwrap().linktype, 276);
        }
    }

    #[test]
    fn nanosecond_and_big_endian_streams_are_read() {
        let mut stream = Vec::new();
        stream.extend_from_slice(&[0xa1, 0xb2, 0x3c, 0x4d, 0, 2, 0, 4]);
        stream.extend_from_slice(&[0; 8]);
        stream.extend_from_slice(&65_535u32.to_be_bytes());
        stream.extend_from_slice(&(1u32 | 0x1000_0000).to_be_bytes());
        for word in [7u32, 42, 2, 60] {
            stream.extend_from_slice(&word.to_be_bytes());
        }
        stream.extend_from_slice(b"hi");
        let mut got = Vec::new();
        let mut splitter = Splitter::new();
        splitter.feed(&stream, |p| got.push(p)).unwrap();
        let format = splitter.format().unwrap();
        assert_eq!(
            (format.linktype, format.snaplen, format.nanos),
            (1, 65_535, true)
        );
        assert_eq!(got[0].ts_ns, 7_000_000_042);
        assert_eq!(got[0].wire_len, 60);
    }

    #[test]
    fn what_is_not_pcap_is_refused_not_buffered() {
        let mut splitter = Splitter::new();
        let why = splitter
            .feed(b"tcpdump: syntax error in filter\n", |_| {})
            .unwrap_err();
        assert!(why.contains("not a pcap header"), "{why}");
        let mut huge = pcap(1, &[]);
        for word in [1u32, 0, 64 << 20, 64 << 20] {
            huge.extend_from_slice(&word.to_le_bytes());
        }
        let why = Splitter::new().feed(&huge, |_| {}).unwrap_err();
        assert!(why.contains("past any snapshot length"), "{why}");
    }

    fn packet(ts_ns: u64) -> Packet {
        Packet {
            ts_ns,
            wire_len: 1,
            data: Bytes::from_static(b"x"),
        }
    }

    #[test]
    fn packets_wait_for_every_open_stream_then_go_in_time_order() {
        let mut merge = Merge::new(2);
        let at = Duration::from_millis;
        merge.push(0, packet(30), at(0));
        merge.push(0, packet(10), at(0));
        assert!(
            merge.ready(at(100), false).is_empty(),
            "stream 1 may send earlier"
        );
        merge.push(1, packet(20), at(100));
        let out: Vec<_> = merge.ready(at(100), false);
        // 30 first in its own stream (tcpdump's order is kept within a
        // pod), 20 from the other: 20 waits for 30 no longer than the rule.
        assert_eq!(
            out.iter().map(|(s, p)| (*s, p.ts_ns)).collect::<Vec<_>>(),
            [(1, 20)]
        );
        merge.close(1);
        let rest: Vec<_> = merge.ready(at(100), false);
        assert_eq!(
            rest.iter().map(|(_, p)| p.ts_ns).collect::<Vec<_>>(),
            [30, 10]
        );
    }

    #[test]
    fn a_quiet_stream_holds_the_others_for_the_hold_at_most() {
        let mut merge = Merge::new(3);
        let at = Duration::from_millis;
        merge.push(0, packet(5), at(0));
        merge.push(1, packet(6), at(10));
        assert!(merge.ready(at(499), false).is_empty());
        let out = merge.ready(at(500), false);
        assert_eq!(out.iter().map(|(_, p)| p.ts_ns).collect::<Vec<_>>(), [5]);
        let out = merge.ready(at(600), true);
        assert_eq!(out.iter().map(|(_, p)| p.ts_ns).collect::<Vec<_>>(), [6]);
    }

    #[test]
    fn pcapng_blocks_are_whole_and_aligned() {
        let format = Format {
            linktype: 276,
            snaplen: 262_144,
            nanos: false,
            big_endian: false,
        };
        let mut out = Vec::new();
        pcapng::section_header(&mut out);
        pcapng::interface(&mut out, &format, "shop/web-1");
        pcapng::packet(&mut out, 0, &packet(0x1_0000_0002));
        // Walk the blocks: each starts and ends with its length.
        let mut at = 0;
        let mut kinds = Vec::new();
        while at < out.len() {
            let word = |i: usize| u32::from_le_bytes(out[i..i + 4].try_into().unwrap());
            let length = word(at + 4) as usize;
            assert_eq!(length % 4, 0);
            assert_eq!(word(at + length - 4) as usize, length);
            kinds.push(word(at));
            if word(at) == 6 {
                assert_eq!(
                    (word(at + 12), word(at + 16)),
                    (1, 2),
                    "timestamp high, low"
                );
            }
            at += length;
        }
        assert_eq!(kinds, [0x0a0d_0d0a, 1, 6]);
        let name = b"shop/web-1";
        assert!(out.windows(name.len()).any(|w| w == name));
    }
}
