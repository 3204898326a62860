//! First pass: read every capture once to learn its extent (frames, RoCE packets, first and last
//! time), which host pairs it sees, and a consistent sample of its packets for the clock-offset
//! estimate.
//!
//! The sample is a bottom-k sketch per capture and direction: the `k` packets with the smallest
//! [`Observation::sample_hash`]. The hash depends only on the packet's identity, which every hop
//! leaves unchanged and a snap length never cuts, so two captures of one link sample the same
//! packets wherever each file starts or ends, in bounded memory (captures with fewer than `k`
//! packets per direction are sampled whole). Identities seen more than once in a capture
//! (retransmissions) are left out of the estimate.

use std::collections::BinaryHeap;
use std::collections::hash_map::Entry;

use anyhow::Result;
use rustc_hash::FxHashMap;

use super::packet::Observation;
use super::reader::CaptureReader;
use crate::decode::Address;

/// Index of a direction (source → destination host) in [`Directions`].
pub type DirId = u32;

/// Most directions (host pairs × 2) tracked; packets of further directions are counted as
/// untracked, so a capture that sprays addresses cannot grow memory without bound.
pub const MAX_DIRECTIONS: usize = 1 << 16;

/// Packets sampled per capture and direction for the offset estimate.
pub const SAMPLE_PER_DIRECTION: usize = 4096;

/// The directions (source → destination address) seen in any capture, numbered in order of
/// first appearance.
#[derive(Default)]
pub struct Directions {
    ids: FxHashMap<(Address, Address), DirId>,
    /// The (source, destination) of each direction.
    pub list: Vec<(Address, Address)>,
}

impl Directions {
    /// The id of `src → dst`, adding it when there is room.
    pub fn intern(&mut self, src: Address, dst: Address) -> Option<DirId> {
        if let Some(&id) = self.ids.get(&(src, dst)) {
            return Some(id);
        }
        if self.list.len() >= MAX_DIRECTIONS {
            return None;
        }
        let id = self.list.len() as DirId;
        self.ids.insert((src, dst), id);
        self.list.push((src, dst));
        Some(id)
    }

    /// The id of `src → dst`, when known.
    pub fn get(&self, src: Address, dst: Address) -> Option<DirId> {
        self.ids.get(&(src, dst)).copied()
    }

    /// The id of the reverse direction of `d`, when seen.
    pub fn reverse(&self, d: DirId) -> Option<DirId> {
        let (s, t) = self.list[d as usize];
        self.get(t, s)
    }
}

/// The last few directions looked up, so that packets between a few hosts skip hashing two
/// addresses (a cache in front of [`Directions`]).
#[derive(Default)]
pub struct DirCache {
    slots: [Option<(Address, Address, DirId)>; 4],
    next: usize,
}

impl DirCache {
    /// The id of `src → dst` from the cache, or from `lookup` (then cached).
    pub fn get_or(
        &mut self,
        src: Address,
        dst: Address,
        lookup: impl FnOnce() -> Option<DirId>,
    ) -> Option<DirId> {
        if let Some((_, _, id)) = self
            .slots
            .iter()
            .flatten()
            .find(|s| s.0 == src && s.1 == dst)
        {
            return Some(*id);
        }
        let id = lookup()?;
        self.slots[self.next] = Some((src, dst, id));
        self.next = (self.next + 1) % self.slots.len();
        Some(id)
    }
}

/// A bottom-k sample: hash → (capture time in ns, copies seen).
#[derive(Default)]
pub struct Sample {
    /// Sampled packets by hash: first capture time (ns) and number of copies with that hash.
    pub map: FxHashMap<u64, (u64, u32)>,
    heap: BinaryHeap<u64>,
}

impl Sample {
    fn offer(&mut self, hash: u64, ts_ns: u64, k: usize) {
        if self.map.len() >= k && self.heap.peek().is_some_and(|&m| hash > m) {
            return;
        }
        match self.map.entry(hash) {
            Entry::Occupied(mut o) => o.get_mut().1 += 1,
            Entry::Vacant(v) => {
                v.insert((ts_ns, 1));
                self.heap.push(hash);
                if self.heap.len() > k
                    && let Some(m) = self.heap.pop()
                {
                    self.map.remove(&m);
                }
            }
        }
    }
}

/// One capture direction's share of the survey.
#[derive(Default)]
pub struct DirSurvey {
    /// Packets of this direction in the capture.
    pub packets: u64,
    /// The sample.
    pub sample: Sample,
}

/// What the first pass learnt about one capture file.
#[derive(Default)]
pub struct CaptureSurvey {
    /// The file name as given.
    pub file: String,
    /// Frames read (after `-f`).
    pub frames: u64,
    /// RoCE frames (v1, v2, IB; malformed included).
    pub roce: u64,
    /// RoCE packets of directions beyond [`MAX_DIRECTIONS`].
    pub untracked: u64,
    /// Capture time of the first and last RoCE packet with a BTH (ns, own clock).
    pub first_ns: Option<u64>,
    /// See `first_ns`.
    pub last_ns: Option<u64>,
    /// Per direction seen.
    pub dirs: FxHashMap<DirId, DirSurvey>,
    /// Whether a RoCE packet's time has digits below the µs (else the capture's timestamps
    /// are µs, as tcpdump writes by default, and delays are known to ± 1 µs only).
    pub sub_us: bool,
    /// Why the file ended early, if it did (the reader's `read_error`).
    pub read_error: Option<String>,
}

/// Survey of every capture.
pub struct Survey {
    /// Per capture, in command-line order.
    pub captures: Vec<CaptureSurvey>,
    /// Directions seen in any capture.
    pub directions: Directions,
}

/// Read every file once (see the module doc), one thread per file.
///
/// # Errors
/// The first file that cannot be read, as one line naming it.
pub fn survey(readers: Vec<CaptureReader>, files: &[String]) -> Result<Survey> {
    let local: Vec<Result<(CaptureSurvey, Directions)>> = std::thread::scope(|s| {
        let handles: Vec<_> = readers
            .into_iter()
            .zip(files)
            .map(|(r, f)| s.spawn(move || survey_one(r, f)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("survey thread panicked")))
            })
            .collect()
    });
    let mut directions = Directions::default();
    let mut captures = Vec::with_capacity(files.len());
    for r in local {
        let (mut c, dirs) = r?;
        let mut global = FxHashMap::default();
        // In order of first appearance in the file, so that numbering is reproducible.
        let mut local: Vec<(DirId, DirSurvey)> = c.dirs.drain().collect();
        local.sort_unstable_by_key(|(d, _)| *d);
        for (d, ds) in local {
            let (src, dst) = dirs.list[d as usize];
            match directions.intern(src, dst) {
                Some(g) => {
                    global.insert(g, ds);
                }
                None => c.untracked += ds.packets,
            }
        }
        c.dirs = global;
        captures.push(c);
    }
    Ok(Survey {
        captures,
        directions,
    })
}

/// Survey one file with its own direction numbering.
fn survey_one(mut r: CaptureReader, file: &str) -> Result<(CaptureSurvey, Directions)> {
    let mut directions = Directions::default();
    let mut cache = DirCache::default();
    let mut c = CaptureSurvey {
        file: file.to_string(),
        ..CaptureSurvey::default()
    };
    while let Some(o) = r.next_packet() {
        let (src, dst) = (o.id.src, o.id.dst);
        let d = cache.get_or(src, dst, || directions.intern(src, dst));
        add(&mut c, d, &o);
    }
    c.frames = r.frames;
    c.roce = r.roce;
    c.read_error = r.read_error.take();
    Ok((c, directions))
}

fn add(c: &mut CaptureSurvey, d: Option<DirId>, o: &Observation) {
    let Some(d) = d else {
        c.untracked += 1;
        return;
    };
    c.first_ns = Some(c.first_ns.map_or(o.ts_ns, |f| f.min(o.ts_ns)));
    c.last_ns = Some(c.last_ns.map_or(o.ts_ns, |l| l.max(o.ts_ns)));
    c.sub_us |= o.ts_ns % 1_000 != 0;
    let ds = c.dirs.entry(d).or_default();
    ds.packets += 1;
    ds.sample
        .offer(o.sample_hash(), o.ts_ns, SAMPLE_PER_DIRECTION);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bottom_k_keeps_the_smallest_hashes_and_counts_copies() {
        let mut s = Sample::default();
        for h in [50u64, 10, 40, 30, 20, 10] {
            s.offer(h, h * 100, 3);
        }
        let mut kept: Vec<_> = s.map.iter().map(|(h, v)| (*h, *v)).collect();
        kept.sort();
        assert_eq!(
            kept,
            vec![(10, (1000, 2)), (20, (2000, 1)), (30, (3000, 1))]
        );
    }
}
