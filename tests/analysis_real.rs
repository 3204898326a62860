//! Real captures (`../shared/captures/real`, Soft-RoCE, PMTU 1024): message counts and sizes
//! against what tshark decodes from the same packets, and against what the programs did.

mod common;

use roce_inspect::analyze::{AnalyzeConfig, Report, message::MessageKind};
use std::collections::BTreeMap;

fn report(name: &str) -> Report {
    common::analyze_file(
        &common::capture(&format!("real/{name}")),
        AnalyzeConfig {
            keep_messages: true,
            ..Default::default()
        },
    )
}

/// tshark rows: src, dst, opcode, destqp (hex), psn, dmalen.
fn rows(name: &str) -> Vec<(String, String, u8, u32, u32, Option<u32>)> {
    common::tshark(
        &common::capture(&format!("real/{name}")),
        &[
            "ip.src",
            "ip.dst",
            "infiniband.bth.opcode",
            "infiniband.bth.destqp",
            "infiniband.bth.psn",
            "infiniband.reth.dmalen",
        ],
    )
    .into_iter()
    .map(|r| {
        (
            r[0].clone(),
            r[1].clone(),
            r[2].parse().unwrap(),
            u32::from_str_radix(r[3].trim_start_matches("0x"), 16).unwrap(),
            r[4].parse().unwrap(),
            r[5].parse().ok(),
        )
    })
    .collect()
}

fn no_gaps(r: &Report) {
    assert!(r.gaps.is_empty(), "{:?}", r.gaps);
    for f in &r.flows {
        assert_eq!(f.psn.gap_events, 0, "flow {}", f.id);
        assert_eq!(f.psn.retransmitted, 0, "flow {}", f.id);
        assert_eq!(f.incomplete_messages, 0, "flow {}", f.id);
    }
    assert_eq!(r.icrc.bad, 0);
}

#[test]
fn ib_write_bw_five_writes_of_3000_bytes() {
    need_shared!();
    let t = rows("rdma_write_bw.pcap");
    // WRITE FIRST / ONLY carry the message length in the RETH.
    let want: Vec<u32> = t
        .iter()
        .filter(|r| matches!(r.2, 6 | 10 | 11))
        .map(|r| r.5.unwrap())
        .collect();
    assert_eq!(want, vec![3000; 5], "the program's 5 WRITEs of 3000 bytes");
    let r = report("rdma_write_bw.pcap");
    no_gaps(&r);
    assert_eq!(r.pmtu, Some(1024));
    let msgs = r.messages.as_ref().unwrap();
    let got: Vec<u32> = msgs
        .iter()
        .filter(|m| m.kind == MessageKind::Write)
        .map(|m| m.bytes as u32)
        .collect();
    assert_eq!(got, want);
    for m in msgs {
        assert!(m.complete && !m.dma_len_mismatch);
        assert_eq!(m.packets, 3); // 1024 + 1024 + 952 at PMTU 1024
        assert_eq!(m.reth.unwrap().dma_len, 3000);
    }
    let w = r.flows.iter().find(|f| f.messages.write.count > 0).unwrap();
    assert_eq!(
        (w.messages.write.count, w.messages.write.bytes),
        (5, 15_000)
    );
    // One ACK per message, in the reverse flow, paired.
    let back = r
        .flows
        .iter()
        .find(|f| f.id != w.id && f.connection == w.connection)
        .unwrap();
    assert_eq!(back.acks, 5);
    assert!(r.connections[0].ack_rtt_ns.is_some());
}

#[test]
fn ib_read_bw_five_reads_psn_plus_3_no_gap() {
    need_shared!();
    let t = rows("rdma_read_bw.pcap");
    let reqs: Vec<_> = t.iter().filter(|r| r.2 == 12).collect();
    assert_eq!(reqs.len(), 5);
    for w in reqs.windows(2) {
        assert_eq!(w[1].4, w[0].4 + 3, "request PSN +3");
    }
    let r = report("rdma_read_bw.pcap");
    no_gaps(&r);
    let msgs: Vec<_> = r
        .messages
        .as_ref()
        .unwrap()
        .iter()
        .filter(|m| m.kind == MessageKind::Read)
        .collect();
    assert_eq!(msgs.len(), 5);
    for (m, q) in msgs.iter().zip(&reqs) {
        assert_eq!(m.first_psn, q.4, "READ message starts at its request's PSN");
        assert_eq!(m.last_psn, q.4 + 2);
        assert_eq!(m.bytes, u64::from(q.5.unwrap()));
        assert_eq!(m.reth.unwrap().dma_len, q.5.unwrap());
        assert!(m.complete && !m.dma_len_mismatch && m.read_latency_ns.is_some());
    }
    let req_flow = r
        .flows
        .iter()
        .find(|f| f.opcodes.contains_key("RC_RDMA_READ_REQUEST"))
        .unwrap();
    assert_eq!(req_flow.psn.first, Some(reqs[0].4));
    assert_eq!(req_flow.psn.last, Some(reqs[4].4));
    assert_eq!(r.connections.len(), 1);
    assert!(r.connections[0].msn.iter().all(|m| m.mismatched_aeths == 0));
}

fn nccl(name: &str) {
    let t = rows(name);
    // Per (src, dst, qp): WRITE messages and bytes from FIRST/ONLY RETH lengths, and how many
    // end WITH IMMEDIATE.
    let mut want: BTreeMap<(String, String, u32), (u64, u64, u64)> = BTreeMap::new();
    for r in &t {
        let e = want.entry((r.0.clone(), r.1.clone(), r.3)).or_default();
        if matches!(r.2, 6 | 10 | 11) {
            e.0 += 1;
            e.1 += u64::from(r.5.unwrap());
        }
        if matches!(r.2, 9 | 11) {
            e.2 += 1;
        }
    }
    let r = report(name);
    no_gaps(&r);
    assert_eq!(r.flows.len(), want.len());
    let msgs = r.messages.as_ref().unwrap();
    let mut total_imm = 0;
    for f in &r.flows {
        let w = want[&(f.src.to_string(), f.dst.to_string(), f.dest_qp)];
        assert_eq!(
            (f.messages.write.count, f.messages.write.bytes),
            (w.0, w.1),
            "{name} flow {}",
            f.id
        );
        let imm = msgs
            .iter()
            .filter(|m| m.flow == f.id && m.immediate && m.complete)
            .count() as u64;
        assert_eq!(
            imm, w.2,
            "{name} flow {}: WRITE WITH IMMEDIATE messages",
            f.id
        );
        assert!(f.connection.is_some());
        total_imm += imm;
    }
    assert!(total_imm > 0);
    assert!(msgs.iter().all(|m| m.complete && !m.dma_len_mismatch));
}

#[test]
fn nccl_traces_no_gaps_every_write_with_immediate_complete() {
    need_shared!();
    for name in [
        "nccl_nccl_node0.pcap",
        "nccl_nccl_node1.pcap",
        "nccl_nccl_node2.pcap",
        "nccl_ring2_node0.pcap",
        "nccl_tree2_node0.pcap",
    ] {
        nccl(name);
    }
}

/// Every other real capture: no gaps, nothing incomplete, no MSN mismatch, all RC flows paired.
#[test]
fn other_real_captures_are_clean() {
    need_shared!();
    for name in [
        "rdma_send_bw.pcap",
        "rdma_atomic_bw.pcap",
        "rdma_write_lat.pcap",
        "rdma_read_lat.pcap",
        "pingpong_rc.pcap",
        "pingpong_uc.pcap",
        "pingpong_ud.pcap",
        "rdma_cm.pcap",
        "rping.pcap",
    ] {
        let r = report(name);
        no_gaps(&r);
        let roce = common::tshark(&common::capture(&format!("real/{name}")), &["frame.number"]);
        assert_eq!(r.frames.roce as usize, roce.len(), "{name}");
        let in_flows: u64 = r.flows.iter().map(|f| f.packets).sum();
        assert_eq!(
            in_flows, r.frames.roce,
            "{name}: every RoCE frame in one flow"
        );
        for f in &r.flows {
            if f.transport.name() == "RC" {
                assert!(f.connection.is_some(), "{name} flow {} unpaired", f.id);
            }
        }
        for c in &r.connections {
            assert!(c.msn.iter().all(|m| m.mismatched_aeths == 0), "{name}");
        }
    }
}

/// RDMA-CM captures: each connection is paired from its CM REQ/REP, and its QPNs are the Local
/// QPNs tshark decodes from those MADs (REQ from the active side, REP from the passive side).
#[test]
fn cm_req_rep_pair_the_connections() {
    need_shared!();
    for name in ["rdma_cm.pcap", "rping.pcap"] {
        let t = common::tshark_filter(
            &common::capture(&format!("real/{name}")),
            "infiniband.mad.attributeid == 0x0010 or infiniband.mad.attributeid == 0x0013",
            &[
                "ip.src",
                "ip.dst",
                "infiniband.mad.attributeid",
                "infiniband.cm.req.localqpn",
                "infiniband.cm.rep.localqpn",
            ],
        );
        let hex = |s: &str| u32::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
        let r = report(name);
        let mut pairs = 0;
        for w in t.chunks(2) {
            let (req, rep) = (&w[0], &w[1]);
            assert_eq!((req[2].as_str(), rep[2].as_str()), ("0x0010", "0x0013"));
            let (active, passive) = (&req[0], &req[1]);
            let (aq, pq) = (hex(&req[3]), hex(&rep[4]));
            let fwd = r
                .flows
                .iter()
                .find(|f| {
                    f.src.to_string() == *active && f.dst.to_string() == *passive && f.dest_qp == pq
                })
                .unwrap_or_else(|| panic!("{name}: no flow to the passive QP {pq:#x}"));
            let back = r
                .flows
                .iter()
                .find(|f| {
                    f.src.to_string() == *passive && f.dst.to_string() == *active && f.dest_qp == aq
                })
                .unwrap();
            let c = fwd.connection.expect("paired");
            assert_eq!(back.connection, Some(c));
            assert_eq!(r.connections[c].paired_by.name(), "cm", "{name}");
            pairs += 1;
        }
        assert!(pairs >= 1, "{name}");
    }
}

/// The link-layer variants of rping.pcap analyse exactly like the original; the snap-length cut
/// ones do not panic and count their truncated frames.
#[test]
fn derived_variants_analyse_like_the_original() {
    need_shared!();
    let base = report("rping.pcap");
    let summary = |r: &Report| -> Vec<String> {
        r.flows
            .iter()
            .map(|f| {
                format!(
                    "{} {} {} {} {} {} {} {}",
                    f.src,
                    f.dst,
                    f.dest_qp,
                    f.packets,
                    f.payload_bytes,
                    f.messages.send.count,
                    f.messages.write.count,
                    f.messages.read.count
                )
            })
            .collect()
    };
    for v in [
        "rping.pcapng",
        "rping.sll.pcap",
        "rping.sll2.pcap",
        "rping.vlan.pcap",
        "rping.qinq.pcap",
    ] {
        let r = common::analyze_file(
            &common::capture(&format!("derived/{v}")),
            AnalyzeConfig::default(),
        );
        assert_eq!(summary(&r), summary(&base), "{v}");
        assert_eq!(r.connections.len(), base.connections.len(), "{v}");
    }
    for v in ["rping.snap96.pcap", "rping.snap64.pcap"] {
        let r = common::analyze_file(
            &common::capture(&format!("derived/{v}")),
            AnalyzeConfig::default(),
        );
        assert_eq!(r.frames.roce, base.frames.roce, "{v}");
        assert!(r.frames.truncated > 0, "{v}");
        assert_eq!(r.icrc.bad, 0, "{v}");
    }
}

/// ibv_ud_pingpong: the two UD flows name each other through DETH source QPs, as tshark
/// decodes them (`infiniband.deth.srcqp` of one direction is the other's `bth.destqp`), so they
/// form one connection paired by `deth`.
#[test]
fn ud_pingpong_pairs_by_deth_source_qp() {
    need_shared!();
    let pairs: BTreeMap<(String, u32), u32> = common::tshark(
        &common::capture("real/pingpong_ud.pcap"),
        &["ip.src", "infiniband.bth.destqp", "infiniband.deth.srcqp"],
    )
    .into_iter()
    .filter(|r| !r[2].is_empty())
    .map(|r| {
        let hex = |s: &str| u32::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
        ((r[0].clone(), hex(&r[1])), hex(&r[2]))
    })
    .collect();
    assert_eq!(pairs.len(), 2, "{pairs:?}");
    let r = report("pingpong_ud.pcap");
    let ud: Vec<_> = r
        .connections
        .iter()
        .filter(|c| c.paired_by.name() == "deth")
        .collect();
    assert_eq!(ud.len(), 1, "{:?}", r.connections);
    let c = ud[0];
    for end in [&c.a, &c.b] {
        // This end's QP is the one the other side sends to: it appears as a DETH source QP.
        assert!(pairs.values().any(|q| *q == end.qp), "{end:?} in {pairs:?}");
    }
}
