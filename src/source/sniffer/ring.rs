//! The receive ring of the RDMA sniffer: `slots` buffers of `slot_size` bytes in one
//! registered region, each posted as one receive work request whose `wr_id` is its index (as
//! libpcap's `pcap-rdmasniff.c` does). A completion hands its slot to the reader; the slot is
//! reposted when the reader asks for the next frame, so a record borrows the ring without a
//! copy and no slot is ever both posted and read.

/// Status of a work completion, as `ibv_wc.status` reports it (`IBV_WC_SUCCESS` = 0,
/// `IBV_WC_LOC_LEN_ERR` = 1, `IBV_WC_WR_FLUSH_ERR` = 5: rdma-core `verbs.h`).
pub const WC_SUCCESS: u32 = 0;
/// A received packet longer than its buffer.
pub const WC_LOC_LEN_ERR: u32 = 1;
/// The QP went to the error state; outstanding receives are flushed.
pub const WC_WR_FLUSH_ERR: u32 = 5;

/// One receive completion: the fields of `ibv_wc` the sniffer reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// `wr_id`: the slot index the receive was posted with.
    pub wr_id: u64,
    /// `status`.
    pub status: u32,
    /// `byte_len`: bytes of the packet (the whole Ethernet frame, without FCS).
    pub byte_len: u32,
}

/// A received frame, in slot `slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    /// Slot index.
    pub slot: usize,
    /// Bytes to show (≤ the snap length and the slot size).
    pub caplen: u32,
    /// Bytes on the wire.
    pub len: u32,
}

/// What a completion turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A frame to hand to the reader; its slot is reposted on the next call.
    Frame(Received),
    /// An error completion for a slot, which is to be reposted at once (counted).
    Repost(usize),
    /// A completion naming no slot that is posted (counted, nothing to repost).
    Stray,
}

/// Counters of the ring (all since open).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingCounters {
    /// Frames delivered.
    pub received: u64,
    /// Bytes on the wire of the delivered frames.
    pub bytes: u64,
    /// Packets longer than a slot (`IBV_WC_LOC_LEN_ERR`), dropped.
    pub too_long: u64,
    /// Other error completions (flushes at teardown included).
    pub errors: u64,
    /// Completions with an unknown or unposted `wr_id`.
    pub stray: u64,
}

/// The ring's bookkeeping (the memory itself is the caller's).
#[derive(Debug)]
pub struct Ring {
    slot_size: usize,
    snaplen: u32,
    posted: Vec<bool>,
    /// The slot handed to the reader last, reposted on the next call.
    lent: Option<usize>,
    /// Counters.
    pub counters: RingCounters,
}

impl Ring {
    /// A ring of `slots` slots of `slot_size` bytes, none posted yet; frames are cut to
    /// `snaplen` bytes.
    pub fn new(slots: usize, slot_size: usize, snaplen: u32) -> Ring {
        Ring {
            slot_size,
            snaplen,
            posted: vec![false; slots],
            lent: None,
            counters: RingCounters::default(),
        }
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.posted.len()
    }

    /// Size of a slot, bytes.
    pub fn slot_size(&self) -> usize {
        self.slot_size
    }

    /// Byte offset of slot `i` in the region.
    pub fn offset(&self, i: usize) -> usize {
        i * self.slot_size
    }

    /// Slots posted right now.
    pub fn posted(&self) -> usize {
        self.posted.iter().filter(|p| **p).count()
    }

    /// Record that slot `i` has been posted.
    pub fn mark_posted(&mut self, i: usize) {
        self.posted[i] = true;
    }

    /// The slot lent to the reader by the last frame, to repost before polling again (taken:
    /// asking twice gives `None`).
    pub fn take_lent(&mut self) -> Option<usize> {
        self.lent.take()
    }

    /// Account for one completion.
    pub fn complete(&mut self, c: Completion) -> Outcome {
        let Some(slot) = usize::try_from(c.wr_id)
            .ok()
            .filter(|&s| s < self.posted.len() && self.posted[s])
        else {
            self.counters.stray += 1;
            return Outcome::Stray;
        };
        self.posted[slot] = false;
        match c.status {
            WC_SUCCESS => {
                let len = c.byte_len;
                let caplen = len.min(self.snaplen).min(self.slot_size as u32);
                self.counters.received += 1;
                self.counters.bytes += u64::from(len);
                self.lent = Some(slot);
                Outcome::Frame(Received { slot, caplen, len })
            }
            WC_LOC_LEN_ERR => {
                self.counters.too_long += 1;
                Outcome::Repost(slot)
            }
            _ => {
                self.counters.errors += 1;
                Outcome::Repost(slot)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(wr_id: u64, byte_len: u32) -> Completion {
        Completion {
            wr_id,
            status: WC_SUCCESS,
            byte_len,
        }
    }

    #[test]
    fn frames_lend_their_slot_until_the_next_call() {
        let mut r = Ring::new(4, 2048, 1500);
        for i in 0..4 {
            r.mark_posted(i);
        }
        assert_eq!(r.offset(3), 6144);
        assert_eq!(
            r.complete(ok(2, 100)),
            Outcome::Frame(Received {
                slot: 2,
                caplen: 100,
                len: 100
            })
        );
        assert_eq!(r.posted(), 3);
        assert_eq!(r.take_lent(), Some(2));
        assert_eq!(r.take_lent(), None);
        r.mark_posted(2);
        assert_eq!(r.posted(), 4);
        // Snap length cut: caplen 1500 of a 1800-byte frame.
        assert_eq!(
            r.complete(ok(0, 1800)),
            Outcome::Frame(Received {
                slot: 0,
                caplen: 1500,
                len: 1800
            })
        );
        assert_eq!((r.counters.received, r.counters.bytes), (2, 1900));
    }

    #[test]
    fn errors_and_strays_are_counted() {
        let mut r = Ring::new(2, 256, 256);
        r.mark_posted(0);
        let long = Completion {
            wr_id: 0,
            status: WC_LOC_LEN_ERR,
            byte_len: 0,
        };
        assert_eq!(r.complete(long), Outcome::Repost(0));
        // Slot 0 is no longer posted: a second completion for it is stray, as is slot 1
        // (never posted) and slot 7 (no such slot).
        assert_eq!(r.complete(ok(0, 60)), Outcome::Stray);
        assert_eq!(r.complete(ok(1, 60)), Outcome::Stray);
        assert_eq!(r.complete(ok(7, 60)), Outcome::Stray);
        r.mark_posted(1);
        let flush = Completion {
            wr_id: 1,
            status: WC_WR_FLUSH_ERR,
            byte_len: 0,
        };
        assert_eq!(r.complete(flush), Outcome::Repost(1));
        assert_eq!(
            r.counters,
            RingCounters {
                received: 0,
                bytes: 0,
                too_long: 1,
                errors: 1,
                stray: 3
            }
        );
        assert_eq!(r.take_lent(), None);
    }
}
