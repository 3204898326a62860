//! NCCL's IB transport on the wire, for N hosts, with its ground truth: the input of the
//! `roce-inspect nccl` tests.
//!
//! The model follows NVIDIA NCCL's `net_ib` transport (github.com/NVIDIA/nccl,
//! `src/transport/net_ib/p2p.cc`: `ncclIbPostFifo`, `ncclIbMultiSend`; `common.h`:
//! `ncclIbSendFifo`): per connection (one sender, one receiver, one channel) the receiver
//! grants each step's buffer with one RDMA WRITE ONLY of a 64-byte CTS entry into the sender's
//! FIFO (slot `step % 256`, 512 bytes apart) on QP 0 of the connection; the sender writes the
//! step's bytes to exactly that address and R_Key with immediate = size:
//! - on one of its data QPs, round-robin per step (`NCCL_IB_QPS_PER_CONNECTION`);
//! - or split over all of them in 128-byte-rounded chunks, each chunk's write carrying the
//!   immediate (`NCCL_IB_SPLIT_DATA_ON_QPS=1`);
//! - or, with adaptive routing, as a plain WRITE followed by a zero-byte WRITE ONLY with
//!   immediate (VA 0, R_Key 0).
//!
//! The immediate is little-endian bytes on the wire (NCCL < 2.29) or big-endian (≥ 2.29); the
//! CTS entry has a 32-bit size (2.19–2.25) or a 64-bit one (≥ 2.26). Every message is
//! acknowledged. Rings send host i → ring successor per channel (channel c even: i → i+1, odd:
//! i → i−1); trees are binary (parent of i is (i−1)/2, the root host 0), data going up to the
//! parent, then down to the children, every round.
//!
//! Rounds run in lockstep: round k starts when every connection's step k−1 has ended. A slow
//! receiver posts its CTS [`SLOW_NS`] late in its slow rounds; on the lossy link one data packet
//! of the slow rounds' step is lost (seen only by the sender's capture), NAKed, and the rest sent
//! again [`RETRANSMIT_NS`] later (go-back-N). Each host's capture holds the frames it sent or
//! received, on one common clock.

use super::super::capfile::Record;
use super::super::frame::Packet;
use super::{BASE_NS, Host, Path, host, psn_add, segments, syndrome, write_opcode};
use crate::decode::Reth;

/// Path MTU, bytes.
pub const PMTU: u32 = 1024;
/// Extra CTS delay of a slow receiver, ns.
pub const SLOW_NS: u64 = 60_000;
/// Go-back-N resend delay after a loss, ns.
pub const RETRANSMIT_NS: u64 = 25_000;
/// Time between two data packets of a QP, ns.
const PACKET_NS: u64 = 90;
/// One-way latency, ns.
const LATENCY_NS: u64 = 1_000;

/// Topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// Rings.
    Ring,
    /// Binary trees.
    Tree,
}

/// How a step's data goes out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One QP per step, round-robin.
    RoundRobin,
    /// Every step split over all QPs.
    SplitOnQps,
    /// Plain WRITE, then a zero-byte WRITE ONLY with immediate.
    AdaptiveRouting,
    /// Several receives per FIFO slot (one CTS write of that many entries): a plain WRITE per
    /// receive, then a WRITE ONLY with immediate of 4 bytes per receive into the receiver's
    /// completion records (`ncclIbMultiSend`).
    MultiRecv(u32),
}

/// Scenario parameters.
#[derive(Clone, Debug)]
pub struct Params {
    /// Hosts (2 or more): 10.0.0.1 …
    pub hosts: usize,
    /// Rings or trees.
    pub algo: Algo,
    /// Channels, 1 to 4.
    pub channels: usize,
    /// Data QPs per connection.
    pub qps: usize,
    /// Data mode.
    pub mode: Mode,
    /// Immediate big-endian (NCCL ≥ 2.29) rather than little-endian: NCCL's
    /// `src/transport/net_ib/p2p.cc` sets the last work request's `imm_data` with `htobe32`
    /// since 2.29; before, the host-order size went out as little-endian bytes from x86 / Arm.
    pub imm_big_endian: bool,
    /// CTS entries with a 64-bit size (NCCL ≥ 2.26): `ncclIbSendFifo` in
    /// `src/transport/net_ib/common.h` holds `uint64_t addr, size`, four `uint32_t rkeys`,
    /// `nreqs`, `tag`, `uint64_t idx` (offsets 0, 8, 16, 32, 36, 40), padded to 64 bytes in the
    /// releases that align it to 64 (48 bytes unpadded); else the 2.19–2.25 layout (32-bit size
    /// at 8, two R_Keys at 12, `nreqs` 20, `tag` 24, `idx` 32). Entries are 64 bytes either way.
    pub size64: bool,
    /// Rounds (steps per connection).
    pub steps: usize,
    /// Bytes per step.
    pub step_bytes: u32,
    /// Host index of the slow receiver and its slow rounds.
    pub slow: Option<(usize, Vec<usize>)>,
    /// Lossy link (sender index, receiver index, channel) and its lossy rounds: the third packet
    /// of the step's first message is lost (messages of 5 packets or more).
    pub lossy: Option<(usize, usize, usize, Vec<usize>)>,
}

/// One connection of the truth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TruthConn {
    /// Sender address.
    pub sender: [u8; 4],
    /// Receiver address.
    pub receiver: [u8; 4],
    /// Channel.
    pub channel: usize,
    /// The sender's QP 0, where CTS writes go.
    pub cts_qp: u32,
    /// The receiver's data QPs.
    pub data_qps: Vec<u32>,
    /// RDMA WRITE messages with immediate.
    pub messages: u64,
    /// Data bytes.
    pub bytes: u64,
    /// CTS writes.
    pub cts: u64,
    /// Steps.
    pub steps: u64,
}

/// A tree of the truth: its root and (parent, child) pairs.
pub type TruthTree = ([u8; 4], Vec<([u8; 4], [u8; 4])>);

/// What the scenario did.
#[derive(Clone, Debug, Default)]
pub struct Truth {
    /// Connections.
    pub conns: Vec<TruthConn>,
    /// Rings per channel, each from its lowest host, in data direction.
    pub rings: Vec<Vec<[u8; 4]>>,
    /// Trees per channel.
    pub trees: Vec<TruthTree>,
    /// Rounds with a known straggler: round (the step index; with several receives per slot,
    /// the slot's first receive), the connections (indices into `conns`) one of which must be
    /// it, and whether it is the receiver's fault (else the wire's).
    pub stragglers: Vec<(usize, Vec<usize>, bool)>,
}

/// The captures (one per host) and the truth.
pub struct Scenario {
    /// Each host's captured frames, in time order.
    pub captures: Vec<Vec<Record>>,
    /// Ground truth.
    pub truth: Truth,
}

/// Sequence state of one RC QP direction.
#[derive(Clone, Copy, Debug)]
struct Qp {
    path: Path,
    back: Path,
    psn: u32,
    msn: u32,
}

struct Conn {
    truth: usize,
    from: usize,
    to: usize,
    cts: Qp,
    data: Vec<Qp>,
    fifo: u64,
    buf: u64,
    rkey: u32,
    last_ns: u64,
}

fn path(from: Host, to: Host, dest_qp: u32) -> Path {
    Path {
        from,
        to,
        dest_qp,
        udp_src: 0xc000 | (dest_qp as u16 & 0x3fff),
        tos: 0x02,
    }
}

/// The frame of `p` with its payload replaced by `payload` (same length) and the ICRC
/// computed again (RoCEv2 / IPv4 / untagged Ethernet, as [`Path::packet`] builds).
fn with_payload(p: &Packet, payload: &[u8]) -> Vec<u8> {
    let mut f = p.build();
    let end = f.len() - 4;
    f[end - payload.len()..end].copy_from_slice(payload);
    let (ip, udp) = (14, 34);
    let crc = crate::decode::icrc::rocev2_ipv4(&f[ip..udp], &f[udp..udp + 8], &f[udp + 8..end]);
    f[end..].copy_from_slice(&crc.to_le_bytes());
    f
}

/// A 64-byte CTS entry of a slot of `nreqs` receives (see the module's table in
/// [`crate::nccl::cts`]).
#[allow(clippy::too_many_arguments)]
fn cts_entry(
    addr: u64,
    size: u32,
    rkey: u32,
    tag: u32,
    idx: u64,
    size64: bool,
    nreqs: u32,
) -> [u8; 64] {
    let mut e = [0u8; 64];
    e[..8].copy_from_slice(&addr.to_le_bytes());
    if size64 {
        e[8..16].copy_from_slice(&u64::from(size).to_le_bytes());
        e[16..20].copy_from_slice(&rkey.to_le_bytes());
        e[32..36].copy_from_slice(&nreqs.to_le_bytes());
        e[36..40].copy_from_slice(&tag.to_le_bytes());
        e[40..48].copy_from_slice(&idx.to_le_bytes());
    } else {
        e[8..12].copy_from_slice(&size.to_le_bytes());
        e[12..16].copy_from_slice(&rkey.to_le_bytes());
        e[20..24].copy_from_slice(&nreqs.to_le_bytes());
        e[24..28].copy_from_slice(&tag.to_le_bytes());
        e[32..40].copy_from_slice(&idx.to_le_bytes());
    }
    e
}

struct Sim {
    p: Params,
    caps: Vec<Vec<(u64, Vec<u8>)>>,
    truth: Truth,
}

impl Sim {
    /// Receives per FIFO slot.
    fn nreqs(&self) -> u32 {
        match self.p.mode {
            Mode::MultiRecv(n) => n.clamp(1, 8),
            _ => 1,
        }
    }

    /// The buffer of receive `r` of step `k`.
    fn addr(&self, c: &Conn, k: usize, r: u32) -> u64 {
        let n = u64::from(self.nreqs());
        c.buf + ((k as u64 % 8) * n + u64::from(r)) * u64::from(self.p.step_bytes)
    }

    fn emit(&mut self, ts: u64, from: usize, to: usize, frame: Vec<u8>, lost: bool) {
        self.caps[from].push((ts, frame.clone()));
        if !lost {
            self.caps[to].push((ts + LATENCY_NS, frame));
        }
    }

    /// The receiver's CTS for step `k` at `ts`.
    fn cts(&mut self, c: &mut Conn, k: usize, ts: u64) {
        let n = self.nreqs();
        let mut payload = Vec::new();
        for r in 0..n {
            payload.extend(cts_entry(
                self.addr(c, k, r),
                self.p.step_bytes,
                c.rkey,
                c.from as u32,
                k as u64 + 1,
                self.p.size64,
                n,
            ));
        }
        let mut pk = c.cts.path.packet(0x0a, c.cts.psn);
        pk.ext.reth = Reth {
            va: c.fifo + (k as u64 % 256) * 512,
            rkey: 0x5000 + c.truth as u32,
            dma_len: payload.len() as u32,
        };
        pk.payload_len = payload.len();
        let f = with_payload(&pk, &payload);
        self.emit(ts, c.to, c.from, f, false);
        let ack = c
            .cts
            .back
            .ack(c.cts.psn, syndrome::ACK_UNLIMITED, c.cts.msn);
        c.cts.msn += 1;
        c.cts.psn = psn_add(c.cts.psn, 1);
        self.emit(ts + 2 * LATENCY_NS, c.from, c.to, ack.build(), false);
        self.truth.conns[c.truth].cts += 1;
    }

    /// One write message of `len` bytes at `va` on data QP `q` from `ts`; the time after its
    /// last packet. `imm`: the immediate; `lose`: lose its third packet once (go-back-N).
    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        c: &mut Conn,
        q: usize,
        va: u64,
        rkey: u32,
        len: u32,
        imm: Option<u32>,
        lose: bool,
        ts: u64,
    ) -> u64 {
        let segs = segments(len, PMTU);
        let n = segs.len();
        let first_psn = c.data[q].psn;
        let mut t = ts;
        let mut i = 0;
        let mut lost_done = !lose || n < 5;
        while i < n {
            let qp = &mut c.data[q];
            let psn = psn_add(first_psn, i as u32);
            let mut pk = qp.path.packet(write_opcode(i, n, imm.is_some()), psn);
            pk.ext.reth = Reth {
                va,
                rkey,
                dma_len: len,
            };
            pk.ext.imm.data = imm.unwrap_or(0);
            pk.payload_len = segs[i] as usize;
            let lost = !lost_done && i == 2;
            self.emit(t, c.from, c.to, pk.build(), lost);
            t += PACKET_NS;
            if lost {
                // The receiver sees the next packet out of sequence and NAKs the lost PSN.
                let next = qp
                    .path
                    .packet(write_opcode(3, n, imm.is_some()), psn_add(psn, 1));
                let mut nxt = next;
                nxt.payload_len = segs[3] as usize;
                nxt.ext.imm.data = imm.unwrap_or(0);
                self.emit(t, c.from, c.to, nxt.build(), false);
                let nak = qp.back.ack(psn, syndrome::NAK_PSN_SEQUENCE, qp.msn);
                self.emit(t + 2 * LATENCY_NS, c.to, c.from, nak.build(), false);
                t += RETRANSMIT_NS;
                lost_done = true;
                continue;
            }
            i += 1;
        }
        let qp = &mut c.data[q];
        qp.psn = psn_add(first_psn, n as u32);
        let ack = qp.back.ack(
            psn_add(qp.psn, 0xff_ffff),
            syndrome::ACK_UNLIMITED,
            qp.msn + 1,
        );
        qp.msn += 1;
        self.emit(t + 2 * LATENCY_NS, c.to, c.from, ack.build(), false);
        t
    }

    /// Step `k` of connection `c`: CTS at `cts_ns`, data after it; returns the data's end.
    fn step(&mut self, c: &mut Conn, k: usize, cts_ns: u64, lose: bool) -> u64 {
        self.cts(c, k, cts_ns);
        let start = cts_ns + 2 * LATENCY_NS + 300 + (c.truth as u64 * 37 + k as u64 * 53) % 400;
        let addr = self.addr(c, k, 0);
        let size = self.p.step_bytes;
        let imm = if self.p.imm_big_endian {
            size
        } else {
            size.swap_bytes()
        };
        let nq = c.data.len();
        let n = self.nreqs();
        let t = &mut self.truth.conns[c.truth];
        t.steps += u64::from(n);
        t.bytes += u64::from(size) * u64::from(n);
        match self.p.mode {
            Mode::RoundRobin => {
                self.truth.conns[c.truth].messages += 1;
                self.write(c, k % nq, addr, c.rkey, size, Some(imm), lose, start)
            }
            Mode::SplitOnQps => {
                let chunk = size.div_ceil(nq as u32).div_ceil(128) * 128;
                let mut end = start;
                let mut off = 0;
                for q in 0..nq {
                    let len = chunk.min(size - off);
                    if len == 0 {
                        break;
                    }
                    self.truth.conns[c.truth].messages += 1;
                    let e = self.write(
                        c,
                        q,
                        addr + u64::from(off),
                        c.rkey,
                        len,
                        Some(imm),
                        lose && q == 0,
                        start + q as u64 * 20,
                    );
                    end = end.max(e);
                    off += len;
                }
                end
            }
            Mode::MultiRecv(_) => {
                self.truth.conns[c.truth].messages += 1;
                let q = k % nq;
                let mut t = start;
                for r in 0..n {
                    let a = self.addr(c, k, r);
                    t = self.write(c, q, a, c.rkey, size, None, lose && r == 0, t) + PACKET_NS;
                }
                let records = 0x7d00_0000_0000 + ((c.truth as u64) << 24) + (k as u64 % 256) * 32;
                self.write(
                    c,
                    q,
                    records,
                    0x9000 + c.truth as u32,
                    4 * n,
                    Some(imm),
                    false,
                    t,
                )
            }
            Mode::AdaptiveRouting => {
                self.truth.conns[c.truth].messages += 1;
                let q = k % nq;
                let t = self.write(c, q, addr, c.rkey, size, None, lose, start);
                self.write(c, q, 0, 0, 0, Some(imm), false, t)
            }
        }
    }
}

/// The (sender, receiver) index pairs of channel `c`, in the order connections are made.
fn pairs(p: &Params, c: usize) -> Vec<(usize, usize)> {
    let n = p.hosts;
    match p.algo {
        Algo::Ring => (0..n)
            .map(|i| {
                if c % 2 == 0 {
                    (i, (i + 1) % n)
                } else {
                    (i, (i + n - 1) % n)
                }
            })
            .collect(),
        Algo::Tree => {
            // Up (child → parent) first, then down.
            let up: Vec<(usize, usize)> = (1..n).map(|i| (i, (i - 1) / 2)).collect();
            up.iter()
                .copied()
                .chain(up.iter().map(|&(a, b)| (b, a)))
                .collect()
        }
    }
}

/// Run the scenario.
pub fn scenario(p: &Params) -> Scenario {
    let hosts: Vec<Host> = (0..p.hosts).map(|i| host(i as u8 + 1)).collect();
    let mut next_qp: Vec<u32> = (0..p.hosts).map(|i| 0x100 + 0x1000 * i as u32).collect();
    let mut conns = Vec::new();
    let mut truth = Truth::default();
    for c in 0..p.channels {
        for (s, r) in pairs(p, c) {
            let cts_qp = next_qp[s];
            next_qp[s] += p.qps as u32;
            let data0 = next_qp[r];
            next_qp[r] += p.qps as u32;
            let id = truth.conns.len();
            let data: Vec<Qp> = (0..p.qps as u32)
                .map(|i| Qp {
                    path: path(hosts[s], hosts[r], data0 + i),
                    back: path(hosts[r], hosts[s], cts_qp + i),
                    psn: 0x1000 * (id as u32 + 1) + i * 0x100,
                    msn: 0,
                })
                .collect();
            truth.conns.push(TruthConn {
                sender: hosts[s].ip,
                receiver: hosts[r].ip,
                channel: c,
                cts_qp,
                data_qps: (0..p.qps as u32).map(|i| data0 + i).collect(),
                messages: 0,
                bytes: 0,
                cts: 0,
                steps: 0,
            });
            conns.push(Conn {
                truth: id,
                from: s,
                to: r,
                cts: Qp {
                    path: path(hosts[r], hosts[s], cts_qp),
                    back: path(hosts[s], hosts[r], data0),
                    psn: 0x80_0000 + id as u32 * 0x100,
                    msn: 0,
                },
                data,
                fifo: 0x7f00_0000_0000 + ((id as u64) << 24),
                buf: 0x7e00_0000_0000 + ((id as u64) << 28),
                rkey: 0x1_0000 + id as u32,
                last_ns: 0,
            });
        }
    }
    truth_topology(p, &hosts, &mut truth);
    let mut sim = Sim {
        p: p.clone(),
        caps: vec![Vec::new(); p.hosts],
        truth,
    };
    let mut round_start = 10_000;
    for k in 0..p.steps {
        let mut end = round_start;
        let nup = conns.len() / p.channels / 2;
        for (i, c) in conns.iter_mut().enumerate() {
            let slow = p
                .slow
                .as_ref()
                .is_some_and(|(h, ks)| *h == c.to && ks.contains(&k));
            let lose = p.lossy.as_ref().is_some_and(|(s, r, ch, ks)| {
                *s == c.from
                    && *r == c.to
                    && sim.truth.conns[c.truth].channel == *ch
                    && ks.contains(&k)
            });
            // Trees: the down half of each channel starts when the up half is done.
            let down = p.algo == Algo::Tree && i % (2 * nup) >= nup;
            let base = if down {
                round_start + 40_000
            } else {
                round_start
            };
            let cts_ns =
                base + 200 + (i as u64 * 71 + k as u64 * 29) % 500 + if slow { SLOW_NS } else { 0 };
            let e = sim.step(c, k, cts_ns, lose);
            c.last_ns = e;
            end = end.max(e);
        }
        round_start = end + 2_000;
    }
    let mut truth = sim.truth;
    let into = |t: &Truth, f: &dyn Fn(&TruthConn) -> bool| -> Vec<usize> {
        (0..t.conns.len()).filter(|&i| f(&t.conns[i])).collect()
    };
    // A round of several receives per slot is as many steps; its first is the slow one.
    let per = match p.mode {
        Mode::MultiRecv(n) => n.clamp(1, 8) as usize,
        _ => 1,
    };
    if let Some((h, ks)) = &p.slow {
        let idx = into(&truth, &|c| c.receiver == hosts[*h].ip);
        truth
            .stragglers
            .extend(ks.iter().map(|&k| (k * per, idx.clone(), true)));
    }
    if let Some((s, r, ch, ks)) = &p.lossy {
        let (s, r) = (hosts[*s].ip, hosts[*r].ip);
        let idx = into(&truth, &|c| {
            c.sender == s && c.receiver == r && c.channel == *ch
        });
        truth
            .stragglers
            .extend(ks.iter().map(|&k| (k * per, idx.clone(), false)));
    }
    truth.stragglers.sort_by_key(|s| s.0);
    let captures = sim
        .caps
        .into_iter()
        .map(|mut v| {
            v.sort_by_key(|r| r.0);
            v.into_iter()
                .map(|(t, f)| Record::new(BASE_NS + t, f))
                .collect()
        })
        .collect();
    Scenario { captures, truth }
}

/// Rings (from the lowest host) and trees of the parameters, per channel.
fn truth_topology(p: &Params, hosts: &[Host], t: &mut Truth) {
    for c in 0..p.channels {
        match p.algo {
            Algo::Ring => {
                let next = pairs(p, c);
                let mut ring = vec![0];
                while ring.len() < p.hosts {
                    ring.push(next[*ring.last().unwrap_or(&0)].1);
                }
                t.rings.push(ring.iter().map(|&i| hosts[i].ip).collect());
            }
            Algo::Tree => {
                let edges = (1..p.hosts)
                    .map(|i| (hosts[(i - 1) / 2].ip, hosts[i].ip))
                    .collect();
                t.trees.push((hosts[0].ip, edges));
            }
        }
    }
}

/// The bundled NCCL sample's parameters: one ring all-reduce of 3 hosts as NCCL ≥ 2.29 runs it
/// over RoCE (64-byte CTS entries with a 64-bit size, big-endian immediates, one QP per
/// connection, one channel): 2(n − 1) = 4 steps of 5,120 bytes per connection (two of
/// reduce-scatter, two of all-gather; NCCL's real steps are 512 KiB, cut to keep the files
/// small). 10.0.0.3 posts its receive late in round 1 (a slow receiver, [`SLOW_NS`]); the link
/// 10.0.0.1 → 10.0.0.2 loses a data packet in round 3 (go-back-N after a NAK).
pub fn sample_params() -> Params {
    Params {
        hosts: 3,
        algo: Algo::Ring,
        channels: 1,
        qps: 1,
        mode: Mode::RoundRobin,
        imm_big_endian: true,
        size64: true,
        steps: 4,
        step_bytes: 5 * PMTU,
        slow: Some((2, vec![1])),
        lossy: Some((0, 1, 0, vec![3])),
    }
}

/// The bundled NCCL sample: `samples/nccl_node{0,1,2}.pcap`, each host's own capture of
/// [`sample_params`]'s job.
pub fn samples() -> Vec<super::Sample> {
    const FILES: [&str; 3] = ["nccl_node0.pcap", "nccl_node1.pcap", "nccl_node2.pcap"];
    scenario(&sample_params())
        .captures
        .into_iter()
        .zip(FILES)
        .map(|(records, file)| super::Sample {
            file,
            format: super::Format::Pcap,
            records,
        })
        .collect()
}
