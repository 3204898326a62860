//! Two captures of one run (issue 38): host A (capture 0) and host B (capture 1) exchange RC
//! RDMA WRITEs over a path that loses packets between the two taps, each capture on its own
//! clock — the input of `roce-inspect correlate`, with the answer it must give.
//!
//! - **Clocks**: capture 0's clock is true time; capture 1's runs [`Config::offset_ns`] ahead.
//! - **Path**: every copy from A to B takes [`Config::delay_ns`]`[0]`, from B to A `[1]`
//!   (constant: no queueing), plus [`Config::ecmp_step_ns`] × the connection's index (each
//!   connection hashes onto its own equal-cost path, so packets of different connections
//!   overtake each other; one connection is FIFO). Each copy crossing is lost with probability
//!   [`Config::loss`] (requests, ACKs and NAKs alike), CE-marked with [`Config::ce`] (the ICRC
//!   masks ECN, IBTA Annex A17 §A17.4.5.1, so the copies still match).
//! - **RC**: each connection (half of them with A as requester, half with B) writes
//!   [`Config::messages`] messages of 1–4 packets (path MTU 1024), the last with AckReq. The
//!   responder accepts only the next PSN (IBTA Vol 1 §9.7.5.1.2): a packet ahead of it is
//!   discarded and answered once with a NAK *PSN sequence error*; every duplicate is answered
//!   with the ACK of the last PSN accepted (C9-105; rxe's `duplicate_request`), so a resent
//!   burst of duplicates draws a burst of byte-identical ACKs. The requester goes back to the NAK's PSN (go-back-N), or, with no NAK or ACK within
//!   its timeout, to its oldest unacknowledged PSN, so resent copies are byte-identical to the
//!   originals.
//! - **UD** ([`Config::ud`]): each host also sends UD SEND ONLY datagrams, never resent.
//!
//! [`Truth`] keeps the offset, every delivered copy's delay per direction, and every copy lost
//! between the taps with its frame number in the capture that saw it.

use rand::RngExt;

use super::super::capfile::{Record, Resolution};
use super::super::frame::{Bth, Eth, Net, Packet, VlanTag};
use super::{BASE_NS, op, psn_add, segments, syndrome, wire_ns, write_opcode};
use crate::decode::{Aeth, Deth, Opcode, Reth};

/// Path MTU in bytes.
pub const PMTU: u32 = 1024;
/// Delay from a packet's arrival to the responder's ACK or NAK, and from a NAK's arrival to
/// the resend, ns.
const TURNAROUND_NS: u64 = 300;

/// What to play.
#[derive(Clone, Debug)]
pub struct Config {
    /// PRNG seed.
    pub seed: u64,
    /// Capture 1's clock minus capture 0's, ns.
    pub offset_ns: i64,
    /// One-way delay A → B and B → A, ns.
    pub delay_ns: [u64; 2],
    /// Extra delay of connection k: k × this, ns (0: one path for all).
    pub ecmp_step_ns: u64,
    /// Probability that a copy is lost between the taps.
    pub loss: f64,
    /// Probability that a delivered copy arrives CE-marked.
    pub ce: f64,
    /// RC connections (even ones: A requests; odd ones: B requests).
    pub connections: usize,
    /// WRITE messages per connection.
    pub messages: usize,
    /// UD datagrams per host (0: none).
    pub ud: usize,
    /// IPv6 addresses (fd00::1, fd00::2) instead of 10.0.0.1, 10.0.0.2.
    pub ipv6: bool,
    /// 802.1Q VLAN ID of every frame, when tagged.
    pub vlan: Option<u16>,
    /// Timestamp resolution of both files.
    pub resolution: Resolution,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 38,
            offset_ns: 0,
            delay_ns: [2_500, 2_500],
            ecmp_step_ns: 0,
            loss: 0.0,
            ce: 0.0,
            connections: 4,
            messages: 50,
            ud: 0,
            ipv6: false,
            vlan: None,
            resolution: Resolution::Nano,
        }
    }
}

/// A copy lost between the taps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lost {
    /// Sending host (0: A, 1: B): the capture that holds the copy.
    pub from: usize,
    /// BTH DestQP.
    pub dest_qp: u32,
    /// BTH PSN.
    pub psn: u32,
    /// BTH OpCode.
    pub opcode: u8,
    /// Frame number in the sender's capture (from 1).
    pub frame: u64,
}

/// What the model did.
#[derive(Clone, Debug, Default)]
pub struct Truth {
    /// Capture 1's clock minus capture 0's, ns.
    pub offset_ns: i64,
    /// Per direction (0: A → B, 1: B → A): the delay of every copy seen by both captures, ns.
    pub delays_ns: [Vec<u64>; 2],
    /// Copies lost between the taps, in sending order.
    pub lost: Vec<Lost>,
    /// Copies resent (RC go-back-N and timeouts), both directions.
    pub resent: usize,
}

/// The two captures and the truth.
pub struct TwoTap {
    /// Capture 0 (host A) and capture 1 (host B), each in time order on its own clock.
    pub captures: [Vec<Record>; 2],
    /// Ground truth.
    pub truth: Truth,
}

/// A copy seen by a capture at true time `t`; `lost`: its index in the truth's lost list.
struct Seen {
    t: u64,
    seq: u64,
    frame: Vec<u8>,
    lost: Option<usize>,
}

struct Model {
    cfg: Config,
    rng: rand::rngs::Xoshiro256PlusPlus,
    seen: [Vec<Seen>; 2],
    seq: u64,
    truth: Truth,
}

impl Model {
    /// Host `h`'s addresses.
    fn net(&self, from: usize, tclass: u8) -> Net {
        let n = |h: usize| h as u8 + 1;
        if self.cfg.ipv6 {
            let a = |h: usize| {
                let mut v = [0u8; 16];
                v[0] = 0xfd;
                v[15] = n(h);
                v
            };
            Net::Ipv6 {
                src: a(from),
                dst: a(1 - from),
                tclass,
                flow_label: 0,
                hop_limit: 64,
            }
        } else {
            Net::Ipv4 {
                src: [10, 0, 0, n(from)],
                dst: [10, 0, 0, n(1 - from)],
                tos: tclass,
                ttl: 64,
                id: 0,
            }
        }
    }

    /// A packet from host `from` of connection `conn`.
    fn packet(&self, from: usize, conn: usize, bth: Bth) -> Packet {
        let mac = |h: usize| [0x02, 0, 0, 0, 0, h as u8 + 1];
        Packet {
            eth: Eth {
                dst: mac(1 - from),
                src: mac(from),
                tags: self
                    .cfg
                    .vlan
                    .map(|v| VlanTag::dot1q(v, 3))
                    .into_iter()
                    .collect(),
            },
            net: self.net(from, 0x6a),
            udp_src: 0xc000 | conn as u16,
            udp_dst: 4791,
            bth,
            ext: Default::default(),
            payload_len: 0,
            payload_seed: conn as u8,
        }
    }

    fn see(&mut self, cap: usize, t: u64, p: &Packet, lost: Option<usize>) {
        self.seq += 1;
        self.seen[cap].push(Seen {
            t,
            seq: self.seq,
            frame: p.build(),
            lost,
        });
    }

    /// Send `p` from host `from` at `t` over connection `conn`'s path: its arrival time, or
    /// `None` when lost between the taps.
    fn send(&mut self, from: usize, conn: usize, t: u64, p: &Packet) -> Option<u64> {
        let lost = self.rng.random_bool(self.cfg.loss);
        if lost {
            self.truth.lost.push(Lost {
                from,
                dest_qp: p.bth.dest_qp,
                psn: p.bth.psn,
                opcode: p.bth.opcode.0,
                frame: 0,
            });
            let k = self.truth.lost.len() - 1;
            self.see(from, t, p, Some(k));
            return None;
        }
        self.see(from, t, p, None);
        let d = self.cfg.delay_ns[from] + self.cfg.ecmp_step_ns * conn as u64;
        let mut q = p.clone();
        if self.rng.random_bool(self.cfg.ce) {
            q.set_ecn(3);
        }
        self.see(1 - from, t + d, &q, None);
        self.truth.delays_ns[from].push(d);
        Some(t + d)
    }
}

/// One RC connection's state.
struct Conn {
    k: usize,
    /// Requester host.
    req: usize,
    /// Next PSN to send.
    psn: u32,
    /// The responder's expected PSN and MSN.
    epsn: u32,
    msn: u32,
}

impl Conn {
    fn qpn(&self, requester_side: bool) -> u32 {
        0x100 * (self.k as u32 + 1) + if requester_side { 0x80 } else { 0x10 }
    }
}

/// The responder's answer to one arriving request packet: (ACK or NAK, PSN, MSN).
fn respond(c: &mut Conn, psn: u32, ack_req: bool, nak_sent: &mut bool) -> Option<(u8, u32, u32)> {
    let d = crate::analyze::psn::psn_diff(psn, c.epsn);
    if d == 0 {
        c.epsn = psn_add(psn, 1);
        *nak_sent = false;
        if ack_req {
            c.msn += 1;
            return Some((syndrome::ACK_UNLIMITED, psn, c.msn));
        }
        None
    } else if d > 0 {
        // Out of sequence: discarded, one NAK per episode.
        (!std::mem::replace(nak_sent, true)).then_some((syndrome::NAK_PSN_SEQUENCE, c.epsn, c.msn))
    } else {
        // Duplicate: ACK again what was accepted last (IBTA C9-105, as rxe does), the same
        // bytes for every duplicate of a burst.
        Some((syndrome::ACK_UNLIMITED, psn_add(c.epsn, 0xff_ffff), c.msn))
    }
}

/// Play one message of `sizes` on connection `c` from `t0`; returns when it is acknowledged.
fn message(m: &mut Model, c: &mut Conn, t0: u64, sizes: &[u32]) -> u64 {
    let first = c.psn;
    let n = sizes.len();
    let rtt = m.cfg.delay_ns[0] + m.cfg.delay_ns[1] + 2 * m.cfg.ecmp_step_ns * c.k as u64;
    let timeout = 4 * rtt + 20_000;
    let (mut from, mut t) = (0usize, t0);
    let mut nak_sent = false;
    for _attempt in 0..64 {
        let mut answers = Vec::new();
        let mut last_sent = t;
        for i in from..n {
            let mut bth = Bth {
                opcode: Opcode(write_opcode(i, n, false)),
                dest_qp: c.qpn(false),
                psn: psn_add(first, i as u32),
                ack_req: i + 1 == n,
                ..Bth::default()
            };
            bth.pad = ((4 - sizes[i] % 4) % 4) as u8;
            let mut p = m.packet(c.req, c.k, bth);
            p.payload_len = sizes[i] as usize;
            p.payload_seed = (first as u8).wrapping_add(i as u8);
            if i == 0 {
                p.ext.reth = Reth {
                    va: 0x7f00_0000_0000 + u64::from(first) * 4096,
                    rkey: 0x2a,
                    dma_len: sizes.iter().sum(),
                };
            }
            last_sent = t;
            if let Some(arr) = m.send(c.req, c.k, t, &p)
                && let Some(a) = respond(c, bth.psn, bth.ack_req, &mut nak_sent)
            {
                answers.push((arr + TURNAROUND_NS, a));
            }
            t += wire_ns(p.build().len(), 100.0);
        }
        let mut nak_at = None;
        for (at, (syn, psn, msn)) in answers {
            let mut p = m.packet(
                1 - c.req,
                c.k,
                Bth {
                    opcode: Opcode(op::ACK),
                    dest_qp: c.qpn(true),
                    psn,
                    ..Bth::default()
                },
            );
            p.ext.aeth = Aeth { syndrome: syn, msn };
            let Some(arr) = m.send(1 - c.req, c.k, at, &p) else {
                continue;
            };
            if syn == syndrome::ACK_UNLIMITED && psn == psn_add(first, n as u32 - 1) {
                return arr;
            }
            if syn == syndrome::NAK_PSN_SEQUENCE && nak_at.is_none() {
                nak_at = Some((arr, psn));
            }
        }
        let resend_from = match nak_at {
            Some((arr, psn)) => {
                t = arr + TURNAROUND_NS;
                psn.wrapping_sub(first) as usize & 0xff_ffff
            }
            None => {
                t = last_sent + timeout;
                0
            }
        };
        m.truth.resent += n - resend_from;
        from = resend_from;
    }
    t
}

/// A UD SEND ONLY datagram from host `from`, number `i`.
fn ud(m: &mut Model, from: usize, i: usize, t: u64) {
    let conn = m.cfg.connections + from;
    let mut p = m.packet(
        from,
        conn,
        Bth {
            opcode: Opcode(op::UD_SEND_ONLY),
            dest_qp: 0x900 + from as u32,
            psn: i as u32,
            ..Bth::default()
        },
    );
    p.ext.deth = Deth {
        qkey: 0x1111_1111,
        src_qp: 0x800 + from as u32,
    };
    p.payload_len = 256;
    m.send(from, conn, t, &p);
}

/// Play the run.
pub fn scenario(cfg: &Config) -> TwoTap {
    let mut m = Model {
        rng: super::rng(cfg.seed),
        cfg: cfg.clone(),
        seen: [Vec::new(), Vec::new()],
        seq: 0,
        truth: Truth {
            offset_ns: cfg.offset_ns,
            ..Truth::default()
        },
    };
    for k in 0..cfg.connections {
        let mut c = Conn {
            k,
            req: k % 2,
            psn: (0x1000 * (k as u32 + 1) * 0x9e37) & 0xff_ffff,
            epsn: 0,
            msn: 0,
        };
        c.epsn = c.psn;
        // Connections overlap in time: each starts 1.3 µs after the one before.
        let mut t = 10_000 + 1_300 * k as u64;
        for _ in 0..cfg.messages {
            let bytes = m.rng.random_range(1..=4 * PMTU);
            let sizes = segments(bytes, PMTU);
            t = message(&mut m, &mut c, t, &sizes) + m.rng.random_range(200..2_000);
            c.psn = psn_add(c.psn, sizes.len() as u32);
        }
    }
    for i in 0..cfg.ud {
        for from in 0..2 {
            let t = 10_000 + i as u64 * 3_700 + from as u64 * 900;
            ud(&mut m, from, i, t);
        }
    }
    finish(m)
}

/// Sort each capture by time, put it on its own clock and number the lost copies' frames.
fn finish(mut m: Model) -> TwoTap {
    let mut caps: [Vec<Record>; 2] = [Vec::new(), Vec::new()];
    for (cap, seen) in m.seen.iter_mut().enumerate() {
        seen.sort_by_key(|s| (s.t, s.seq));
        let shift = if cap == 1 { m.cfg.offset_ns } else { 0 };
        for (k, s) in seen.iter().enumerate() {
            if let Some(l) = s.lost {
                m.truth.lost[l].frame = k as u64 + 1;
            }
            let ts = ((BASE_NS + s.t) as i64 + shift) as u64;
            let ts = match m.cfg.resolution {
                Resolution::Micro => ts / 1_000 * 1_000,
                Resolution::Nano => ts,
            };
            caps[cap].push(Record::new(ts, s.frame.clone()));
        }
    }
    TwoTap {
        captures: caps,
        truth: m.truth,
    }
}

impl TwoTap {
    /// Capture `c` as a classic pcap file at the configured resolution.
    pub fn pcap(&self, c: usize, resolution: Resolution) -> Vec<u8> {
        let mut v = Vec::new();
        super::super::capfile::write_pcap_with(
            &mut v,
            super::super::capfile::LINKTYPE_ETHERNET,
            super::SNAPLEN,
            resolution,
            &self.captures[c],
        )
        .expect("writing to memory cannot fail");
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without loss every copy is delivered once; with loss, every lost copy is resent.
    #[test]
    fn losses_are_resent_and_counted() {
        let clean = scenario(&Config::default());
        assert!(clean.truth.lost.is_empty());
        assert_eq!(clean.truth.resent, 0);
        let n = clean.captures[0].len();
        assert_eq!(n, clean.captures[1].len());
        assert_eq!(
            clean.truth.delays_ns[0].len() + clean.truth.delays_ns[1].len(),
            n
        );
        let lossy = scenario(&Config {
            loss: 0.02,
            ..Config::default()
        });
        assert!(!lossy.truth.lost.is_empty());
        assert!(lossy.truth.resent > 0);
        // Each capture holds every copy sent or received by its host.
        let sent: usize =
            lossy.truth.delays_ns.iter().map(Vec::len).sum::<usize>() + lossy.truth.lost.len();
        let received: usize = lossy.truth.delays_ns.iter().map(Vec::len).sum();
        assert_eq!(
            lossy.captures[0].len() + lossy.captures[1].len(),
            sent + received
        );
        for l in &lossy.truth.lost {
            assert!(l.frame >= 1 && l.frame as usize <= lossy.captures[l.from].len());
        }
    }
}
