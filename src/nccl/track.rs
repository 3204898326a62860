//! One capture's NCCL connections, built packet by packet: clear-to-send (CTS) entries are
//! kept until the data written to their buffer completes a step; data writes are joined to
//! their CTS on (address, R_Key), or recognised by their immediate equal to their length when
//! no CTS payload was captured. State is per connection and per data QP only: at most
//! [`MAX_PENDING`] CTS entries and [`MAX_STEPS_KEPT`] steps are kept per connection.

use rustc_hash::FxHashMap;
use std::collections::VecDeque;

use super::cts::{self, CtsEntry, ImmOrder, Layout, Protocol};
use crate::decode::{Address, Ecn, RocePacket};

/// Most CTS entries outstanding per connection: NCCL's FIFO has 256 slots of 8 receives.
pub const MAX_PENDING: usize = 256 * cts::MAX_RECVS;
/// Most steps kept with their times per connection (later ones are only counted).
pub const MAX_STEPS_KEPT: usize = 4096;
/// Most distinct message sizes in a connection's histogram (others are counted apart).
pub const MAX_SIZES: usize = 32;

/// RC opcodes (IBTA Vol. 1 Table 38) the recogniser looks at.
mod op {
    pub const WRITE_FIRST: u8 = 0x06;
    pub const WRITE_LAST: u8 = 0x08;
    pub const WRITE_LAST_IMM: u8 = 0x09;
    pub const WRITE_ONLY: u8 = 0x0a;
    pub const WRITE_ONLY_IMM: u8 = 0x0b;
    pub const ACK: u8 = 0x11;
    pub const CNP: u8 = 0x81;
}

/// How a connection was recognised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recognised {
    /// Its data writes went to the buffers its CTS entries granted.
    Cts,
    /// Its writes with immediate carried their own length (no CTS payload captured).
    Immediate,
}

/// One completed step: a receive granted by a CTS entry and the data written into it
/// (times in ns since the Unix epoch, on the capture's clock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// NCCL's request counter + 1 from the CTS entry; the step's number from 1 when recognised
    /// by immediate.
    pub idx: u64,
    /// When the CTS entry was seen.
    pub cts_ns: Option<u64>,
    /// First data packet.
    pub first_ns: u64,
    /// Last data packet (the one with the immediate).
    pub last_ns: u64,
    /// Data bytes written.
    pub bytes: u64,
    /// Data packets sent again (PSN not beyond the highest seen on their QP).
    pub retransmitted: u32,
    /// CNPs the receiver sent the sender while the step's data was in flight.
    pub cnps: u32,
    /// Data packets marked ECN CE.
    pub ce: u32,
}

/// A CTS entry waiting for its data.
#[derive(Clone, Copy, Debug)]
struct Pending {
    entry: CtsEntry,
    cts_ns: u64,
    first_ns: Option<u64>,
    last_ns: u64,
    bytes: u64,
    retransmitted: u32,
    cnps: u32,
    ce: u32,
}

impl Pending {
    /// Whether this is the entry of request `idx` for the buffer at `addr`.
    fn is(&self, idx: u64, addr: u64) -> bool {
        self.entry.idx == idx && self.entry.addr == addr
    }

    /// The completed step, its last write with immediate seen at `ts`.
    fn step(&self, ts: u64) -> Step {
        Step {
            idx: self.entry.idx,
            cts_ns: Some(self.cts_ns),
            first_ns: self.first_ns.unwrap_or(ts),
            last_ns: self.last_ns.max(ts),
            bytes: self.bytes,
            retransmitted: self.retransmitted,
            cnps: self.cnps,
            ce: self.ce,
        }
    }
}

/// Running sums of a quantity in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sum {
    /// Values added.
    pub n: u64,
    /// Their sum, ns.
    pub total: u64,
    /// The largest, ns.
    pub max: u64,
}

impl Sum {
    fn add(&mut self, v: u64) {
        self.n += 1;
        self.total += v;
        self.max = self.max.max(v);
    }

    /// Mean in ns, `None` with no value.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.total as f64 / self.n as f64)
    }
}

/// One NCCL connection (one direction: sender → receiver) as one capture saw it.
#[derive(Clone, Debug)]
pub struct Conn {
    /// Host that writes the data.
    pub sender: Address,
    /// Host that grants buffers (writes the CTS entries) and receives the data.
    pub receiver: Address,
    /// Destination QP of the CTS writes (a QP on the sender).
    pub cts_qp: Option<u32>,
    /// Destination QPs of the data (on the receiver), in the order first used.
    pub data_qps: Vec<u32>,
    /// How it was recognised.
    pub recognised: Recognised,
    /// RDMA WRITE messages with immediate (NCCL's send completions).
    pub messages: u64,
    /// Messages whose immediate equals their own length (either byte order).
    pub imm_equals_length: u64,
    /// Data bytes written (every data write, with immediate or not).
    pub bytes: u64,
    /// CTS writes.
    pub cts: u64,
    /// CTS entries (several per write when receives are grouped).
    pub cts_entries: u64,
    /// First and last NCCL packet of the connection (either direction), ns.
    pub first_ns: u64,
    /// See [`Conn::first_ns`].
    pub last_ns: u64,
    /// Layout of its CTS entries.
    pub layout: Option<Layout>,
    /// Byte order of its immediates (known once a size reads differently both ways).
    pub imm: Option<ImmOrder>,
    /// Protocol seen in the first data payload long enough to tell.
    pub protocol: Option<Protocol>,
    /// Tag of the last CTS entry (NCCL's tag of the receive).
    pub tag: Option<u32>,
    /// Message sizes (bytes, from the immediate) and their counts.
    pub sizes: Vec<(u64, u64)>,
    /// Messages whose size did not fit [`MAX_SIZES`].
    pub sizes_other: u64,
    /// Completed steps, the first [`MAX_STEPS_KEPT`].
    pub steps: Vec<Step>,
    /// Completed steps in all.
    pub steps_total: u64,
    /// CTS entries that never saw their data complete (replaced or left at the end).
    pub steps_incomplete: u64,
    /// The completed steps' span, ns: the CTS of the first (its first data packet when the CTS
    /// was not captured or came later) to the last data packet of the last, resends included.
    /// The time of [`Conn::busbw_bytes`] for the bus bandwidth.
    pub busy: Option<(u64, u64)>,
    /// Data bytes of the completed steps.
    pub busbw_bytes: u64,
    /// CTS → first data packet, over the completed steps with a CTS.
    pub wait: Sum,
    /// First → last data packet of each completed step.
    pub data: Sum,
    /// Retransmitted data packets, CNPs to the sender, NAKs to the sender, CE-marked data.
    pub retransmitted: u64,
    /// See [`Conn::retransmitted`].
    pub cnps: u64,
    /// See [`Conn::retransmitted`].
    pub naks: u64,
    /// See [`Conn::retransmitted`].
    pub ce: u64,
    pending: VecDeque<Pending>,
}

impl Conn {
    fn new(sender: Address, receiver: Address, cts_qp: Option<u32>, ts: u64) -> Conn {
        Conn {
            sender,
            receiver,
            cts_qp,
            data_qps: Vec::new(),
            recognised: if cts_qp.is_some() {
                Recognised::Cts
            } else {
                Recognised::Immediate
            },
            messages: 0,
            imm_equals_length: 0,
            bytes: 0,
            cts: 0,
            cts_entries: 0,
            first_ns: ts,
            last_ns: ts,
            layout: None,
            imm: None,
            protocol: None,
            tag: None,
            sizes: Vec::new(),
            sizes_other: 0,
            steps: Vec::new(),
            steps_total: 0,
            steps_incomplete: 0,
            busy: None,
            busbw_bytes: 0,
            wait: Sum::default(),
            data: Sum::default(),
            retransmitted: 0,
            cnps: 0,
            naks: 0,
            ce: 0,
            pending: VecDeque::new(),
        }
    }

    fn touch(&mut self, ts: u64) {
        self.first_ns = self.first_ns.min(ts);
        self.last_ns = self.last_ns.max(ts);
    }

    fn add_size(&mut self, size: u64) {
        if let Some(s) = self.sizes.iter_mut().find(|s| s.0 == size) {
            s.1 += 1;
        } else if self.sizes.len() < MAX_SIZES {
            self.sizes.push((size, 1));
        } else {
            self.sizes_other += 1;
        }
    }

    fn add_qp(&mut self, qp: u32) {
        if !self.data_qps.contains(&qp) {
            self.data_qps.push(qp);
        }
    }

    fn complete(&mut self, s: Step) {
        if let Some(c) = s.cts_ns {
            self.wait.add(s.first_ns.saturating_sub(c));
        }
        self.data.add(s.last_ns.saturating_sub(s.first_ns));
        let start = s.cts_ns.unwrap_or(s.first_ns).min(s.first_ns);
        self.busy = Some(match self.busy {
            Some((a, b)) => (a.min(start), b.max(s.last_ns)),
            None => (start, s.last_ns),
        });
        self.busbw_bytes += s.bytes;
        self.steps_total += 1;
        if self.steps.len() < MAX_STEPS_KEPT {
            self.steps.push(s);
        }
    }

    /// The pending entry whose buffer holds `va` with `rkey` (the oldest such).
    fn pending_at(&self, va: u64, rkey: u32) -> Option<usize> {
        self.pending.iter().position(|p| {
            p.entry.rkey == rkey && va >= p.entry.addr && va - p.entry.addr < p.entry.size.max(1)
        })
    }
}

/// Where a message's bytes go.
#[derive(Clone, Copy, Debug)]
enum Target {
    /// A CTS entry of a connection (by its `idx` and address).
    Pending { conn: usize, idx: u64, addr: u64 },
    /// Not joined to any CTS.
    None,
}

/// A write message in progress on a data QP. Its bytes are its RETH DMA length, as the sender
/// posted it: retransmitted packets and packets the capture missed change nothing.
#[derive(Clone, Copy, Debug)]
struct Msg {
    target: Target,
    first_ns: u64,
    bytes: u64,
    packets: u64,
    retransmitted: u32,
    ce: u32,
}

/// State of one (sender, receiver, destination QP) carrying writes.
#[derive(Clone, Copy, Debug, Default)]
struct DataQp {
    msg: Option<Msg>,
    /// Highest PSN seen.
    psn: Option<u32>,
    /// The CTS entry of the last joined message (adaptive routing's zero-byte write with
    /// immediate follows its data on the same QP).
    last: Option<(usize, u64, u64)>,
    /// The last unjoined plain write's first time and bytes, for a write with immediate after it.
    carry: Option<(u64, u64)>,
    /// The signature connection of this QP.
    sig: Option<usize>,
}

type Pair = (Address, Address);

/// Packet counts of one capture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// RoCE packets with a BTH.
    pub roce: u64,
    /// Of them, CTS and data writes of NCCL connections.
    pub nccl: u64,
    /// CTS-sized plain WRITE ONLYs whose payload was not captured whole.
    pub cts_uncaptured: u64,
}

/// The NCCL connections of one capture.
#[derive(Debug, Default)]
pub struct Tracker {
    /// Connections in the order recognised.
    pub conns: Vec<Conn>,
    /// Packet counts.
    pub counts: Counts,
    by_cts: FxHashMap<(Address, Address, u32), usize>,
    by_rkey: FxHashMap<(Address, Address, u32), Vec<usize>>,
    by_pair: FxHashMap<Pair, Vec<usize>>,
    qps: FxHashMap<(Address, Address, u32), DataQp>,
}

impl Tracker {
    /// Look at one RoCE packet seen at `ts` (ns).
    pub fn packet(&mut self, p: &RocePacket<'_>, ts: u64) {
        let Some(bth) = p.bth else { return };
        self.counts.roce += 1;
        if p.malformed.is_some() {
            return;
        }
        let opc = bth.opcode.0;
        match opc {
            op::CNP => self.cnp(p.dst, p.src),
            op::ACK if p.ext.aeth.is_some_and(|a| a.syndrome >> 5 == 3) => {
                for &c in self.by_pair.get(&(p.dst, p.src)).into_iter().flatten() {
                    self.conns[c].naks += 1;
                }
            }
            op::WRITE_ONLY if self.cts(p, bth.dest_qp, ts) => {}
            op::WRITE_FIRST..=op::WRITE_ONLY_IMM => self.data(p, bth.dest_qp, bth.psn, ts),
            _ => {}
        }
    }

    /// A CNP from `receiver` to `sender`: counted on the step in flight of their connections.
    fn cnp(&mut self, sender: Address, receiver: Address) {
        for &c in self.by_pair.get(&(sender, receiver)).into_iter().flatten() {
            let conn = &mut self.conns[c];
            conn.cnps += 1;
            if let Some(p) = conn.pending.iter_mut().find(|p| p.first_ns.is_some()) {
                p.cnps += 1;
            }
        }
    }

    /// A plain WRITE ONLY: a CTS write when its payload parses as CTS entries.
    fn cts(&mut self, p: &RocePacket<'_>, qp: u32, ts: u64) -> bool {
        if !cts::cts_length(p.payload_len) {
            return false;
        }
        let Some((layout, entries)) = cts::parse(p.payload, p.payload_len) else {
            if (p.payload.len() as u32) < p.payload_len {
                self.counts.cts_uncaptured += 1;
            }
            return false;
        };
        // The CTS goes from the receiver to the sender.
        let (sender, receiver) = (p.dst, p.src);
        let c = match self.by_cts.get(&(sender, receiver, qp)) {
            Some(&c) => c,
            None => {
                let c = self.conns.len();
                self.conns.push(Conn::new(sender, receiver, Some(qp), ts));
                self.by_cts.insert((sender, receiver, qp), c);
                self.by_pair.entry((sender, receiver)).or_default().push(c);
                c
            }
        };
        self.counts.nccl += 1;
        let conn = &mut self.conns[c];
        conn.touch(ts);
        conn.cts += 1;
        conn.layout = Some(layout);
        for e in entries {
            conn.cts_entries += 1;
            conn.tag = Some(e.tag);
            // A buffer granted again: the old grant never completed.
            if let Some(i) = conn
                .pending
                .iter()
                .position(|q| q.entry.addr == e.addr && q.entry.rkey == e.rkey)
            {
                conn.pending.remove(i);
                conn.steps_incomplete += 1;
            }
            if conn.pending.len() == MAX_PENDING {
                conn.pending.pop_front();
                conn.steps_incomplete += 1;
            }
            conn.pending.push_back(Pending {
                entry: e,
                cts_ns: ts,
                first_ns: None,
                last_ns: ts,
                bytes: 0,
                retransmitted: 0,
                cnps: 0,
                ce: 0,
            });
            let list = self.by_rkey.entry((sender, receiver, e.rkey)).or_default();
            if !list.contains(&c) {
                list.push(c);
            }
        }
        true
    }

    /// An RDMA WRITE packet from sender `p.src` to receiver `p.dst` on QP `qp`.
    fn data(&mut self, p: &RocePacket<'_>, qp: u32, psn: u32, ts: u64) {
        let key = (p.src, p.dst, qp);
        let mut dq = self.qps.get(&key).copied().unwrap_or_default();
        let retx = match dq.psn {
            Some(last) => {
                let d = psn.wrapping_sub(last) & 0xff_ffff;
                let back = d == 0 || d >= 0x80_0000;
                if !back {
                    dq.psn = Some(psn);
                }
                back
            }
            None => {
                dq.psn = Some(psn);
                false
            }
        };
        let opc = p.bth.map_or(0, |b| b.opcode.0);
        if let Some(reth) = p.ext.reth {
            let target = if reth.va == 0 && reth.rkey == 0 && p.payload_len == 0 {
                // Adaptive routing's zero-byte write with immediate after the data.
                match dq.last {
                    Some((conn, idx, addr)) => Target::Pending { conn, idx, addr },
                    None => Target::None,
                }
            } else {
                self.join(p.src, p.dst, reth.va, reth.rkey)
            };
            dq.msg = Some(Msg {
                target,
                first_ns: ts,
                bytes: u64::from(reth.dma_len),
                packets: 0,
                retransmitted: 0,
                ce: 0,
            });
        }
        let Some(mut msg) = dq.msg else {
            self.qps.insert(key, dq);
            return;
        };
        msg.packets += 1;
        msg.retransmitted += u32::from(retx);
        msg.ce += u32::from(p.ecn == Some(Ecn::Ce));
        if let Target::Pending { conn, idx, addr } = msg.target {
            self.counts.nccl += 1;
            let c = &mut self.conns[conn];
            c.touch(ts);
            c.add_qp(qp);
            c.retransmitted += u64::from(retx);
            c.ce += u64::from(p.ecn == Some(Ecn::Ce));
            if c.protocol.is_none() && p.payload_len >= 256 {
                c.protocol = cts::protocol(p.payload);
            }
            if let Some(pd) = c.pending.iter_mut().find(|q| q.is(idx, addr)) {
                pd.first_ns.get_or_insert(ts);
                pd.last_ns = ts;
                pd.retransmitted += u32::from(retx);
                pd.ce += u32::from(p.ecn == Some(Ecn::Ce));
            }
        }
        let last = matches!(
            opc,
            op::WRITE_LAST | op::WRITE_LAST_IMM | op::WRITE_ONLY | op::WRITE_ONLY_IMM
        );
        if !last {
            dq.msg = Some(msg);
            self.qps.insert(key, dq);
            return;
        }
        dq.msg = None;
        let imm = p.ext.imm;
        match msg.target {
            Target::Pending { conn, idx, addr } => {
                dq.last = Some((conn, idx, addr));
                let c = &mut self.conns[conn];
                c.bytes += msg.bytes;
                if let Some(pd) = c.pending.iter_mut().find(|q| q.is(idx, addr)) {
                    pd.bytes += msg.bytes;
                }
                if let Some(imm) = imm {
                    self.finish(conn, idx, addr, imm, msg.bytes, ts);
                }
            }
            Target::None if imm.is_some() && self.finish_multi(dq.last, ts) => {
                self.counts.nccl += msg.packets;
            }
            Target::None => self.unjoined(&mut dq, p, qp, msg, imm, ts),
        }
        self.qps.insert(key, dq);
    }

    /// The connection and CTS entry whose buffer the write to `va` with `rkey` lands in.
    fn join(&self, sender: Address, receiver: Address, va: u64, rkey: u32) -> Target {
        for &c in self
            .by_rkey
            .get(&(sender, receiver, rkey))
            .into_iter()
            .flatten()
        {
            if let Some(i) = self.conns[c].pending_at(va, rkey) {
                let e = self.conns[c].pending[i].entry;
                return Target::Pending {
                    conn: c,
                    idx: e.idx,
                    addr: e.addr,
                };
            }
        }
        Target::None
    }

    /// A write with immediate `imm` ended a `len`-byte message of CTS entry `idx`: the step
    /// completes when the bytes written into the buffer equal the size the immediate carries.
    fn finish(&mut self, conn: usize, idx: u64, addr: u64, imm: u32, len: u64, ts: u64) {
        let c = &mut self.conns[conn];
        c.messages += 1;
        if let Some(o) = cts::imm_order(imm, len) {
            c.imm_equals_length += 1;
            if imm != imm.swap_bytes() {
                c.imm = Some(o);
            }
        }
        let Some(i) = c.pending.iter().position(|q| q.is(idx, addr)) else {
            return;
        };
        let pd = c.pending[i];
        let size = match (c.imm, cts::imm_order(imm, pd.bytes)) {
            (_, Some(o)) => u64::from(o.size(imm)),
            (Some(o), None) if pd.bytes >= u64::from(o.size(imm)) => u64::from(o.size(imm)),
            _ => return,
        };
        if c.imm.is_none() && imm != imm.swap_bytes() {
            c.imm = cts::imm_order(imm, pd.bytes);
        }
        c.pending.remove(i);
        c.add_size(size);
        c.complete(pd.step(ts));
    }

    /// A write with immediate joined to no buffer after data written into a FIFO slot of
    /// several receives (`nreqs` > 1): NCCL's final write of the sizes into the receiver's
    /// completion records (`ncclIbMultiSend`), which completes every receive of the slot.
    /// `last`: the connection, `idx` and address of the QP's last joined write.
    fn finish_multi(&mut self, last: Option<(usize, u64, u64)>, ts: u64) -> bool {
        let Some((conn, idx, _)) = last else {
            return false;
        };
        let c = &mut self.conns[conn];
        let slot = |q: &Pending| q.entry.idx == idx && q.entry.nreqs > 1;
        if !c.pending.iter().any(slot) {
            return false;
        }
        c.messages += 1;
        let done: Vec<Pending> = c.pending.iter().filter(|q| slot(q)).copied().collect();
        c.pending.retain(|q| !slot(q));
        for pd in done {
            c.add_size(pd.bytes);
            c.complete(pd.step(ts));
        }
        true
    }

    /// A message joined to no CTS: NCCL's by signature when it has an immediate equal to its
    /// length (with the plain write before it, adaptive routing's pattern).
    fn unjoined(
        &mut self,
        dq: &mut DataQp,
        p: &RocePacket<'_>,
        qp: u32,
        msg: Msg,
        imm: Option<u32>,
        ts: u64,
    ) {
        let Some(imm) = imm else {
            // Only the write just before a write with immediate is its data.
            dq.carry = Some((msg.first_ns, msg.bytes));
            return;
        };
        let carry = dq.carry.take();
        let (first, bytes) = match carry {
            Some((f, b)) if cts::imm_order(imm, b + msg.bytes).is_some() => (f, b + msg.bytes),
            _ => (msg.first_ns, msg.bytes),
        };
        let Some(order) = cts::imm_order(imm, bytes) else {
            return;
        };
        let c = match dq.sig {
            Some(c) => c,
            None => {
                let c = self.conns.len();
                self.conns.push(Conn::new(p.src, p.dst, None, first));
                self.by_pair.entry((p.src, p.dst)).or_default().push(c);
                dq.sig = Some(c);
                c
            }
        };
        self.counts.nccl += msg.packets;
        let conn = &mut self.conns[c];
        conn.touch(first);
        conn.touch(ts);
        conn.add_qp(qp);
        conn.messages += 1;
        conn.imm_equals_length += u64::from(cts::imm_order(imm, msg.bytes).is_some());
        if imm != imm.swap_bytes() {
            conn.imm = Some(order);
        }
        conn.bytes += bytes;
        conn.retransmitted += u64::from(msg.retransmitted);
        conn.ce += u64::from(msg.ce);
        if conn.protocol.is_none() && p.payload_len >= 256 {
            conn.protocol = cts::protocol(p.payload);
        }
        conn.add_size(bytes);
        let idx = conn.steps_total + 1;
        conn.complete(Step {
            idx,
            cts_ns: None,
            first_ns: first,
            last_ns: ts,
            bytes,
            retransmitted: msg.retransmitted,
            cnps: 0,
            ce: msg.ce,
        });
    }

    /// The connections, with the CTS entries still waiting counted as incomplete steps.
    pub fn finish_all(mut self) -> (Vec<Conn>, Counts) {
        for c in &mut self.conns {
            c.steps_incomplete += c.pending.len() as u64;
            c.pending.clear();
        }
        (self.conns, self.counts)
    }
}
