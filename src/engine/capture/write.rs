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
