//! Cross-connection work: the flow table and its limit (`AnalyzeConfig::max_flows`), with the
//! count of distinct flows dropped past it.
//!
//! The flow table and the analyzer's other per-packet maps hash with rustc's Fx hash
//! (`rustc-hash`: a multiply-rotate hash, several times faster than SipHash on these small
//! keys). Flow keys come from captured packets, so a hostile capture could force collisions:
//! the tables stay correct, only slower, and `max_flows` bounds their size.

use std::hash::BuildHasher;

use super::Analyzer;
use super::flow::{Flow, FlowKey, PairedBy};
use super::seen::Packet;

/// Flow key → index in the flow table: a hash table of 4-byte indices whose keys are read from
/// the flows themselves (`hashbrown::HashTable`), rather than a map holding a copy of every
/// 48-byte key beside the flow that already has it.
#[derive(Default)]
pub(super) struct FlowIndex {
    table: hashbrown::HashTable<u32>,
}

impl FlowIndex {
    fn hash(key: &FlowKey) -> u64 {
        rustc_hash::FxBuildHasher.hash_one(key)
    }

    /// The index of `key`'s flow in `flows`.
    pub(super) fn get(&self, flows: &[Flow], key: &FlowKey) -> Option<u32> {
        self.table
            .find(Self::hash(key), |&i| flows[i as usize].key == *key)
            .copied()
    }

    /// Index flow `i` of `flows` (its key not indexed yet).
    pub(super) fn insert(&mut self, flows: &[Flow], i: u32) {
        let h = Self::hash(&flows[i as usize].key);
        self.table
            .insert_unique(h, i, |&j| Self::hash(&flows[j as usize].key));
    }
}

/// Most dropped flow keys remembered for `frames.flows_dropped` (about 1.2 MB at most).
pub(super) const MAX_DROPPED_KEYS: usize = 65_536;

/// Most flows the table reserves room for when its first flow is created (larger tables grow
/// as usual).
const RESERVED_FLOWS: usize = 65_536;

/// A 64-bit SipHash digest of a flow key: distinct keys collide with probability ~2^-64 per
/// pair, negligible against the 65 536 remembered.
fn key_digest(key: &FlowKey) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h =
        std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
            .build_hasher();
    key.src.hash(&mut h);
    key.dst.hash(&mut h);
    key.dest_qp.hash(&mut h);
    key.session.hash(&mut h);
    h.finish()
}

impl Analyzer {
    /// The index of `key`'s flow, created when new; `None` (counted as untracked) when the
    /// table is full.
    ///
    /// The key is packet `p`'s source, destination, `dest_qp` and `session`.
    pub(super) fn flow_index(
        &mut self,
        p: &Packet,
        dest_qp: u32,
        session: Option<u32>,
        ts: u64,
        frame: u64,
    ) -> Option<usize> {
        // Before hashing, the flows likely to come next: the previous packet's flow, its peer
        // (a request, then its ACK or response), and the flow that followed it last time
        // (round-robin over QPs). A compare instead of a hash and probe for most packets.
        // The compare reads the packet's addresses where they are: a key copied to the stack
        // and read back at once stalled on store forwarding (its 18-byte addresses are stored
        // as 16 + 2 bytes and read as 1 + 8 + 8), about 5 % of a one-thread `read -q`.
        if let Some(l) = self.last_flow.map(|l| l as usize) {
            let f = &self.flows[l];
            for c in [Some(l as u32), f.peer, f.next_hint].into_iter().flatten() {
                if self.flows[c as usize]
                    .key
                    .is(&p.src, &p.dst, dest_qp, session)
                {
                    self.last_flow = Some(c);
                    return Some(c as usize);
                }
            }
        }
        let key = FlowKey {
            src: p.src,
            dst: p.dst,
            dest_qp,
            session,
        };
        if let Some(i) = self.index.get(&self.flows, &key) {
            self.hint(i);
            return Some(i as usize);
        }
        if self.flows.len() >= self.cfg.max_flows {
            self.frames.untracked += 1;
            let d = key_digest(&key);
            if self.dropped.len() < MAX_DROPPED_KEYS {
                if self.dropped.insert(d) {
                    self.frames.flows_dropped += 1;
                }
            } else if !self.dropped.contains(&d) {
                // Cannot tell a new flow from one already dropped past the cap.
                self.frames.flows_dropped_exact = false;
            }
            return None;
        }
        let i = self.new_flow(key, ts, frame);
        self.hint(i as u32);
        Some(i)
    }

    fn new_flow(&mut self, key: FlowKey, ts: u64, frame: u64) -> usize {
        let i = self.flows.len();
        if i == 0 {
            // Room for the whole table at once (up to RESERVED_FLOWS): only the pages of the
            // flows created are touched, and growing never copies the table (a copy would hold
            // the old and the new table at once, the peak under QPN spraying).
            self.flows
                .reserve_exact(self.cfg.max_flows.min(RESERVED_FLOWS));
        }
        self.flows.push(Flow::new(key, ts, frame));
        self.index.insert(&self.flows, i as u32);
        self.hosts
            .entry((key.src, key.dst))
            .or_default()
            .push(i as u32);
        self.unpaired
            .entry((key.src, key.dst))
            .or_default()
            .all
            .insert(i);
        if let Some(peer) = self.cm_pairs.get(&key)
            && let Some(j) = self.index.get(&self.flows, peer)
            && self.flows[j as usize].peer.is_none()
        {
            self.pair(i, j as usize, PairedBy::Cm);
        }
        i
    }

    /// Flow `i` follows the previous packet's flow: remember it there as the next guess.
    fn hint(&mut self, i: u32) {
        if let Some(l) = self.last_flow {
            self.flows[l as usize].next_hint = Some(i);
        }
        self.last_flow = Some(i);
    }
}
