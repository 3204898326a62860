//! The filter on frames built by the synth frame builder: expected truth values come from the
//! values written into the frames (hand-chosen), not from our decoder's output.

use super::*;
use crate::analyze::marks::Marks;
use crate::decode::{Aeth, Opcode, Reth};
use crate::decode::{DecodeConfig, LinkType, decode_frame};
use crate::source::FrameCtx;
use crate::synth::frame::{Bth, Packet};

/// An RC WRITE FIRST (opcode 0x06) to QP 0x11, PSN 100, CE, with RETH, from 10.0.0.1.
fn write_first() -> Vec<u8> {
    let mut p = Packet::v4(
        [10, 0, 0, 1],
        [10, 0, 0, 2],
        Bth {
            opcode: Opcode(0x06),
            dest_qp: 0x11,
            psn: 100,
            ack_req: true,
            ..Bth::default()
        },
    );
    p.ext.reth = Reth {
        va: 0x7f00_0000_1000,
        rkey: 0xabcd,
        dma_len: 4096,
    };
    p.payload_len = 1024;
    p.set_ecn(3);
    p.build()
}

/// An RC ACKNOWLEDGE (0x11) NAK psn_seq_err (syndrome 0x60) to QP 0x22, PSN 7, ECT(0).
fn nak() -> Vec<u8> {
    let mut p = Packet::v4(
        [10, 0, 0, 2],
        [10, 0, 0, 1],
        Bth {
            opcode: Opcode(0x11),
            dest_qp: 0x22,
            psn: 7,
            ..Bth::default()
        },
    );
    p.ext.aeth = Aeth {
        syndrome: 0x60,
        msn: 5,
    };
    p.set_ecn(2);
    p.build()
}

fn check(bytes: &[u8], marks: Option<&Marks>, expr: &str) -> bool {
    let f = decode_frame(
        LinkType::ETHERNET,
        bytes,
        bytes.len() as u32,
        &DecodeConfig::default(),
    );
    let ctx = FrameCtx::whole(3, 1_000, bytes.len());
    let filter = DisplayFilter::compile(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    filter.matches(&Pkt {
        ctx: &ctx,
        frame: &f,
        marks,
    })
}

#[test]
fn comparisons_on_the_values_written() {
    let w = write_first();
    for (expr, want) in [
        ("bth.dest_qp == 0x11", true),
        ("bth.dest_qp == 17", true),
        ("bth.dest_qp == 021", true),
        ("bth.dest_qp eq 18", false),
        ("bth.psn > 99 && bth.psn < 101", true),
        ("bth.psn >= 100 and bth.psn <= 100", true),
        ("bth.psn > 100", false),
        ("bth.psn != 100", false),
        ("bth.psn != 101", true),
        ("bth.opcode_name == \"RC_RDMA_WRITE_FIRST\"", true),
        ("bth.opcode_name == RC_RDMA_WRITE_FIRST", true),
        ("bth.opcode_name contains \"WRITE\"", true),
        ("bth.opcode_name contains \"READ\"", false),
        ("ecn == \"ce\"", true),
        ("ecn == ect0", false),
        ("bth.ack_req == true", true),
        ("bth.ack_req == 0", false),
        ("bth.se == false", true),
        ("reth", true),
        ("aeth", false),
        ("!aeth", true),
        ("reth.dma_len == 4096 && reth.rkey == 0xabcd", true),
        ("reth.va == 0x7f0000001000", true),
        ("src == 10.0.0.1", true),
        ("src == 10.0.0.0/24", true),
        ("dst == 10.0.1.0/24", false),
        ("src != 10.0.0.1", false),
        ("payload_len == 1024", true),
        ("frame == 3", true),
        ("bth.psn in {1, 2, 100}", true),
        ("bth.psn in {1..99 101..200}", false),
        ("bth.psn in {99..100}", true),
        ("bth.psn not in {99..100}", false),
        ("ecn in {\"ce\", \"ect1\"}", true),
        ("roce == \"v2\"", true),
        ("udp_dst_port == 4791", true),
        ("icrc.status == \"good\"", true),
        // Precedence: ! over && over ||.
        ("aeth || reth && bth.psn == 100", true),
        ("(aeth || reth) && bth.psn == 101", false),
        ("aeth || reth && bth.psn == 101", false),
        ("!aeth && reth", true),
        ("!(aeth || reth)", false),
        ("not reth or bth.psn == 100", true),
        // Field against field.
        ("bth.psn > bth.dest_qp", true),
        ("udp_src_port == udp_dst_port", false),
    ] {
        assert_eq!(check(&w, None, expr), want, "{expr}");
    }
}

#[test]
fn absent_fields_compare_false() {
    let n = nak();
    for (expr, want) in [
        ("reth.dma_len == 0", false),
        ("reth.dma_len != 0", false),
        ("!(reth.dma_len == 0)", true),
        ("aeth.nak == \"psn_seq_err\"", true),
        ("aeth.kind == nak && aeth.msn == 5", true),
        ("aeth.credits", false),
        ("aeth.syndrome == 0x60", true),
        ("analysis.retransmission", false),
        ("vlan", false),
    ] {
        assert_eq!(check(&n, None, expr), want, "{expr}");
    }
}

#[test]
fn analysis_marks() {
    let w = write_first();
    let m = Marks {
        retransmission: true,
        gap: 3,
        ..Marks::default()
    };
    assert!(check(&w, Some(&m), "analysis.retransmission"));
    assert!(check(
        &w,
        Some(&m),
        "analysis.gap == 3 && analysis.after_gap"
    ));
    assert!(!check(&w, Some(&m), "analysis.naked"));
    assert!(check(&w, Some(&m), "analysis"));
    assert!(!check(&w, Some(&Marks::default()), "analysis"));
    assert!(
        DisplayFilter::compile("!analysis.naked")
            .unwrap()
            .reads_analysis()
    );
    assert!(
        !DisplayFilter::compile("bth.psn == 1")
            .unwrap()
            .reads_analysis()
    );
}

#[test]
fn errors_name_the_column_and_what_was_expected() {
    for (expr, pos, msg) in [
        (
            "bth.psn ==",
            10,
            "expected a value (unsigned integer), found the end",
        ),
        (
            "bth.psn == 1 &&",
            15,
            "expected a field name, '!' or '(', found the end",
        ),
        (
            "bth.foo",
            0,
            "'bth.foo' is not a field (--list-fields lists them)",
        ),
        ("bth.psn == ce", 11, "'ce' is not a valid unsigned integer"),
        ("(bth.psn == 1", 13, "expected ')', found the end"),
        (
            "bth.psn == 1 bth",
            13,
            "expected '&&', '||' or the end, found 'bth'",
        ),
        (
            "bth == 1",
            7,
            "a header can only be tested for presence, not by comparison",
        ),
        (
            "bth.psn contains \"1\"",
            0,
            "'contains' needs a string field; bth.psn is unsigned integer",
        ),
        (
            "src == 10.0.0.300",
            7,
            "'10.0.0.300' is not a valid address",
        ),
        ("bth.se == 2", 10, "'2' is not a valid boolean"),
        (
            "bth.psn in {1,",
            14,
            "expected a value (unsigned integer), found the end",
        ),
        ("", 0, "empty expression"),
        (
            "bth.psn == bth.opcode_name",
            11,
            "bth.opcode_name is string, not unsigned integer",
        ),
    ] {
        let e = DisplayFilter::compile(expr).unwrap_err();
        assert_eq!((e.pos, e.msg.as_str()), (pos, msg), "{expr}");
    }
    let e = DisplayFilter::compile("bth.psn == x").unwrap_err();
    assert_eq!(
        e.to_string(),
        "display filter: column 12: 'x' is not a valid unsigned integer"
    );
}
