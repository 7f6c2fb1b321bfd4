//! The one writer of a capture: every pod's stream, through a bounded
//! channel, into one file (or stdout) as it comes.

use std::io::{self, Write};
use std::sync::atomic::Ordering;
use std::time::Instant;

use tokio::sync::mpsc;

use super::{Chunk, Tally};
use crate::model::pcap::{Merge, Packet, Splitter, pcapng};

/// What the writer tells the capture as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Pod `n`'s tcpdump is listening: its stream's header is here.
    Listening(usize),
    /// Pod `n`'s stream ended before tcpdump listened (it failed).
    Silent(usize),
    /// `--count` packets are written: the capture should stop.
    LimitReached,
}

/// How the written file ended.
#[derive(Debug, Default)]
pub struct Written {
    /// A pod whose stream was not pcap: its name and why.
    pub corrupt: Vec<(usize, String)>,
    /// `--count` was reached (the capture should stop).
    pub limit_reached: bool,
}

/// Writes what arrives on `chunks` into `into` until every stream has
/// ended: tcpdump's bytes as they are for one pod, pcapng for several
/// (`names`, one interface each, packets merged in time order). Each pod
/// listening is told to `events`, and so is reaching `limit` packets,
/// past which none is written. Flushed whenever nothing more is waiting, so the file is
/// readable as the capture runs. Runs on a thread of its own (`runtime`
/// times its waits): `into` may be a pipe that a reader drains slowly.
pub fn write(
    into: &mut dyn Write,
    names: &[String],
    mut chunks: mpsc::Receiver<Chunk>,
    tallies: &[Tally],
    limit: Option<u64>,
    events: &dyn Fn(Event),
    runtime: &tokio::runtime::Handle,
) -> io::Result<Written> {
    let several = names.len() > 1;
    let mut splitters: Vec<Splitter> = names.iter().map(|_| Splitter::new()).collect();
    let mut broken = vec![false; names.len()];
    let mut interfaces: Vec<Option<u32>> = vec![None; names.len()];
    let mut next_interface = 0;
    let mut merge = Merge::new(names.len());
    let mut open = names.len();
    let mut written = Written::default();
    let mut total = 0u64;
    let started = Instant::now();
    let mut out = Vec::with_capacity(64 * 1024);
    if several {
        pcapng::section_header(&mut out);
    }
    let mut ended = false;
    while !ended {
        let chunk = match chunks.try_recv() {
            Ok(chunk) => Some(chunk),
            Err(mpsc::error::TryRecvError::Empty) if open > 0 => {
                into.write_all(&out)?;
                into.flush()?;
                out.clear();
                wait_for(&mut chunks, several, runtime)
            }
            Err(_) => {
                ended = true;
                None
            }
        };
        let mut packets = Vec::new();
        match chunk {
            Some(Chunk::Data(stream, _)) if broken[stream] => {}
            Some(Chunk::Data(stream, data)) => {
                let known = splitters[stream].format().is_some();
                let fed = splitters[stream].feed(&data, |p| packets.push((stream, p)));
                if !known && splitters[stream].format().is_some() {
                    events(Event::Listening(stream));
                }
                match fed {
                    Err(why) => {
                        written.corrupt.push((stream, why));
                        broken[stream] = true;
                        merge.close(stream);
                        packets.clear();
                    }
                    Ok(()) if !several => out.extend_from_slice(&data),
                    // Each pod's interface as soon as its header is here:
                    // a pod that sends nothing is still in the file.
                    Ok(()) => {
                        if let (None, Some(format)) =
                            (interfaces[stream], splitters[stream].format())
                        {
                            pcapng::interface(&mut out, &format, &names[stream]);
                            interfaces[stream] = Some(next_interface);
                            next_interface += 1;
                        }
                    }
                }
            }
            Some(Chunk::End(stream)) => {
                if splitters[stream].format().is_none() {
                    events(Event::Silent(stream));
                }
                merge.close(stream);
                open = open.saturating_sub(1);
            }
            None => {}
        }
        let limited = |total: u64| limit.is_some_and(|most| total >= most);
        if several {
            let now = started.elapsed();
            for (stream, packet) in packets.drain(..) {
                merge.push(stream, packet, now);
            }
            packets = merge.ready(now, ended || open == 0);
        }
        for (stream, packet) in packets {
            if limited(total) {
                break;
            }
            if let (true, Some(interface)) = (several, interfaces[stream]) {
                pcapng::packet(&mut out, interface, &packet);
            }
            count(&tallies[stream], &packet);
            total += 1;
        }
        if limited(total) && !written.limit_reached {
            written.limit_reached = true;
            events(Event::LimitReached);
        }
        if out.len() >= 64 * 1024 {
            into.write_all(&out)?;
            out.clear();
        }
    }
    into.write_all(&out)?;
    into.flush()?;
    Ok(written)
}

fn count(tally: &Tally, packet: &Packet) {
    tally.packets.fetch_add(1, Ordering::Relaxed);
    tally
        .bytes
        .fetch_add(packet.data.len() as u64, Ordering::Relaxed);
}

/// The next chunk; with several pods, `None` after a short wait too, so
/// packets held for a quiet pod go out in time.
fn wait_for(
    chunks: &mut mpsc::Receiver<Chunk>,
    several: bool,
    runtime: &tokio::runtime::Handle,
) -> Option<Chunk> {
    if !several {
        return chunks.blocking_recv();
    }
    let tick = Merge::HOLD / 5;
    runtime.block_on(async { tokio::time::timeout(tick, chunks.recv()).await.ok()? })
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;

    /// A little-endian microsecond pcap stream of `packets` (seconds, data).
    fn pcap(packets: &[(u32, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
        out.extend_from_slice(&[2, 0, 4, 0]);
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&65_535u32.to_le_bytes());
        out.extend_from_slice(&276u32.to_le_bytes());
        for (seconds, data) in packets {
            for word in [*seconds, 0, data.len() as u32, data.len() as u32] {
                out.extend_from_slice(&word.to_le_bytes());
            }
            out.extend_from_slice(data);
        }
        out
    }

    /// The file, how it ended, what was told, each pod's (packets, bytes).
    type Outcome = (Vec<u8>, Written, Vec<Event>, Vec<(u64, u64)>);

    /// Writes `chunks` (stream, bytes; `None` ends a stream) for `names`.
    fn written(
        names: &[&str],
        chunks: Vec<(usize, Option<Vec<u8>>)>,
        limit: Option<u64>,
    ) -> Outcome {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (tx, rx) = super::super::channel();
        for (stream, bytes) in chunks {
            let chunk = match bytes {
                Some(bytes) => Chunk::Data(stream, Bytes::from(bytes)),
                None => Chunk::End(stream),
            };
            tx.try_send(chunk).unwrap();
        }
        drop(tx);
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let tallies = super::super::tallies(names.len());
        let events = std::sync::Mutex::new(Vec::new());
        let mut out = Vec::new();
        let done = write(
            &mut out,
            &names,
            rx,
            &tallies,
            limit,
            &|e| events.lock().unwrap().push(e),
            runtime.handle(),
        )
        .unwrap();
        let counts = tallies
            .iter()
            .map(|t| {
                (
                    t.packets.load(Ordering::Relaxed),
                    t.bytes.load(Ordering::Relaxed),
                )
            })
            .collect();
        (out, done, events.into_inner().unwrap(), counts)
    }

    #[test]
    fn one_pod_is_written_as_tcpdump_wrote_it() {
        let stream = pcap(&[(1, b"first"), (2, b"second")]);
        let (head, tail) = stream.split_at(30);
        let (out, done, events, counts) = written(
            &["shop/redis-0"],
            vec![
                (0, Some(head.to_vec())),
                (0, Some(tail.to_vec())),
                (0, None),
            ],
            None,
        );
        assert_eq!(out, stream);
        assert!(done.corrupt.is_empty());
        assert_eq!(events, [Event::Listening(0)]);
        assert_eq!(counts, [(2, 11)]);
    }

    #[test]
    fn two_pods_make_one_pcapng_in_time_order() {
        let (out, _, events, counts) = written(
            &["shop/a", "shop/b"],
            vec![
                (0, Some(pcap(&[(3, b"a3")]))),
                (1, Some(pcap(&[(1, b"b1"), (5, b"b5")]))),
                (0, None),
                (1, None),
            ],
            None,
        );
        assert_eq!(events, [Event::Listening(0), Event::Listening(1)]);
        assert_eq!(counts, [(1, 2), (2, 4)]);
        // Blocks: the section, an interface per pod, then b1, a3, b5.
        let word = |at: usize| u32::from_le_bytes(out[at..at + 4].try_into().unwrap());
        let mut at = 0;
        let mut packets = Vec::new();
        let mut interfaces = 0;
        while at < out.len() {
            match word(at) {
                1 => interfaces += 1,
                6 => packets.push((word(at + 8), out[at + 28..at + 30].to_vec())),
                _ => {}
            }
            at += word(at + 4) as usize;
        }
        assert_eq!(interfaces, 2);
        assert_eq!(
            packets,
            [
                (1, b"b1".to_vec()),
                (0, b"a3".to_vec()),
                (1, b"b5".to_vec())
            ]
        );
    }

    #[test]
    fn a_stream_that_is_not_pcap_is_refused_and_kept_out_of_the_file() {
        let (out, done, events, _) = written(
            &["shop/liar"],
            vec![
                (
                    0,
                    Some(b"<html>502 Bad Gateway, says a proxy</html>".to_vec()),
                ),
                (0, None),
            ],
            None,
        );
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(done.corrupt.len(), 1);
        assert!(done.corrupt[0].1.contains("not a pcap header"));
        assert_eq!(
            events,
            [Event::Silent(0)],
            "the capture is not held waiting for it"
        );
    }

    #[test]
    fn the_count_stops_it_at_exactly_that_many_packets() {
        let (out, done, events, counts) = written(
            &["shop/a", "shop/b"],
            vec![
                (0, Some(pcap(&[(1, b"1"), (2, b"2"), (3, b"3")]))),
                (1, Some(pcap(&[(4, b"4")]))),
                (0, None),
                (1, None),
            ],
            Some(2),
        );
        assert!(done.limit_reached);
        assert!(events.contains(&Event::LimitReached));
        assert_eq!(counts.iter().map(|c| c.0).sum::<u64>(), 2);
        assert!(!out.is_empty());
    }
}
