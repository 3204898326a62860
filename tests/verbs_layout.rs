//! The rdma-sys structs `generate` fills or reads have the size and field offsets of the C
//! structs in the installed `<infiniband/verbs.h>`: a small C probe is compiled with `cc` and
//! prints them. Several of these (ibv_send_wr, ibv_wc, ibv_ah_attr, ibv_global_route, ibv_gid)
//! are written by hand in rdma-sys rather than generated, which is why this is worth checking.
//! The enum values used (QP states, attribute masks, opcodes, and the constants declared here
//! because rdma-sys lacks them) are checked the same way.
#![cfg(feature = "verbs")]

use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};
use std::process::Command;

use rdma_sys::*;

/// (label, C expression, Rust value)
fn expectations() -> Vec<(&'static str, &'static str, usize)> {
    macro_rules! size {
        ($t:ident) => {
            (
                concat!("sizeof ", stringify!($t)),
                concat!("sizeof(struct ", stringify!($t), ")"),
                size_of::<$t>(),
            )
        };
    }
    macro_rules! off {
        ($t:ident, $c:ident, $($r:tt)+) => {
            (
                concat!(stringify!($t), ".", stringify!($c)),
                concat!("offsetof(struct ", stringify!($t), ", ", stringify!($c), ")"),
                offset_of!($t, $($r)+),
            )
        };
    }
    vec![
        (
            "sizeof ibv_gid",
            "sizeof(union ibv_gid)",
            size_of::<ibv_gid>(),
        ),
        size!(ibv_sge),
        off!(ibv_sge, addr, addr),
        off!(ibv_sge, length, length),
        off!(ibv_sge, lkey, lkey),
        size!(ibv_global_route),
        off!(ibv_global_route, dgid, dgid),
        off!(ibv_global_route, flow_label, flow_label),
        off!(ibv_global_route, sgid_index, sgid_index),
        off!(ibv_global_route, hop_limit, hop_limit),
        off!(ibv_global_route, traffic_class, traffic_class),
        size!(ibv_ah_attr),
        off!(ibv_ah_attr, grh, grh),
        off!(ibv_ah_attr, dlid, dlid),
        off!(ibv_ah_attr, sl, sl),
        off!(ibv_ah_attr, is_global, is_global),
        off!(ibv_ah_attr, port_num, port_num),
        size!(ibv_qp_cap),
        size!(ibv_qp_attr),
        off!(ibv_qp_attr, qp_state, qp_state),
        off!(ibv_qp_attr, path_mtu, path_mtu),
        off!(ibv_qp_attr, rq_psn, rq_psn),
        off!(ibv_qp_attr, sq_psn, sq_psn),
        off!(ibv_qp_attr, dest_qp_num, dest_qp_num),
        off!(ibv_qp_attr, qp_access_flags, qp_access_flags),
        off!(ibv_qp_attr, cap, cap),
        off!(ibv_qp_attr, ah_attr, ah_attr),
        off!(ibv_qp_attr, alt_ah_attr, alt_ah_attr),
        off!(ibv_qp_attr, pkey_index, pkey_index),
        off!(ibv_qp_attr, max_rd_atomic, max_rd_atomic),
        off!(ibv_qp_attr, max_dest_rd_atomic, max_dest_rd_atomic),
        off!(ibv_qp_attr, min_rnr_timer, min_rnr_timer),
        off!(ibv_qp_attr, port_num, port_num),
        off!(ibv_qp_attr, timeout, timeout),
        off!(ibv_qp_attr, retry_cnt, retry_cnt),
        off!(ibv_qp_attr, rnr_retry, rnr_retry),
        off!(ibv_qp_attr, rate_limit, rate_limit),
        size!(ibv_qp_init_attr),
        off!(ibv_qp_init_attr, send_cq, send_cq),
        off!(ibv_qp_init_attr, cap, cap),
        off!(ibv_qp_init_attr, qp_type, qp_type),
        off!(ibv_qp_init_attr, sq_sig_all, sq_sig_all),
        size!(ibv_send_wr),
        off!(ibv_send_wr, wr_id, wr_id),
        off!(ibv_send_wr, next, next),
        off!(ibv_send_wr, sg_list, sg_list),
        off!(ibv_send_wr, num_sge, num_sge),
        off!(ibv_send_wr, opcode, opcode),
        off!(ibv_send_wr, send_flags, send_flags),
        off!(ibv_send_wr, imm_data, imm_data_invalidated_rkey_union),
        off!(ibv_send_wr, wr, wr),
        off!(ibv_send_wr, qp_type, qp_type),
        off!(ibv_send_wr, bind_mw, bind_mw_tso_union),
        size!(ibv_recv_wr),
        off!(ibv_recv_wr, sg_list, sg_list),
        off!(ibv_recv_wr, num_sge, num_sge),
        size!(ibv_wc),
        off!(ibv_wc, wr_id, wr_id),
        off!(ibv_wc, status, status),
        off!(ibv_wc, opcode, opcode),
        off!(ibv_wc, vendor_err, vendor_err),
        off!(ibv_wc, byte_len, byte_len),
        off!(ibv_wc, imm_data, imm_data_invalidated_rkey_union),
        off!(ibv_wc, qp_num, qp_num),
        off!(ibv_wc, src_qp, src_qp),
        off!(ibv_wc, wc_flags, wc_flags),
        off!(ibv_wc, dlid_path_bits, dlid_path_bits),
        size!(ibv_port_attr),
        off!(ibv_port_attr, state, state),
        off!(ibv_port_attr, active_mtu, active_mtu),
        off!(ibv_port_attr, gid_tbl_len, gid_tbl_len),
        off!(ibv_port_attr, link_layer, link_layer),
        off!(ibv_port_attr, port_cap_flags2, port_cap_flags2),
        size!(ibv_gid_entry),
        off!(ibv_gid_entry, gid, gid),
        off!(ibv_gid_entry, gid_index, gid_index),
        off!(ibv_gid_entry, port_num, port_num),
        off!(ibv_gid_entry, gid_type, gid_type),
        off!(ibv_gid_entry, ndev_ifindex, ndev_ifindex),
        size!(ibv_mr),
        off!(ibv_mr, lkey, lkey),
        off!(ibv_mr, rkey, rkey),
        off!(ibv_qp, qp_num, qp_num),
        // The RDMA sniffer (src/source/sniffer/verbs.rs).
        size!(ibv_flow_attr),
        off!(ibv_flow_attr, comp_mask, comp_mask),
        off!(ibv_flow_attr, type, type_),
        off!(ibv_flow_attr, size, size),
        off!(ibv_flow_attr, priority, priority),
        off!(ibv_flow_attr, num_of_specs, num_of_specs),
        off!(ibv_flow_attr, port, port),
        off!(ibv_flow_attr, flags, flags),
        off!(ibv_recv_wr, wr_id, wr_id),
        off!(ibv_recv_wr, next, next),
        off!(ibv_comp_channel, fd, fd),
        off!(ibv_qp_init_attr, recv_cq, recv_cq),
    ]
}

/// (label, C expression, Rust value) for the enum values `generate` relies on, including the
/// ones it declares itself because rdma-sys does not export them.
fn constants() -> Vec<(&'static str, &'static str, usize)> {
    macro_rules! val {
        ($c:ident, $r:expr) => {
            (stringify!($c), stringify!($c), ($r) as usize)
        };
    }
    vec![
        val!(
            IBV_LINK_LAYER_ETHERNET,
            roce_inspect::generate::ffi::IBV_LINK_LAYER_ETHERNET
        ),
        val!(IBV_GID_TYPE_ROCE_V2, IBV_GID_TYPE_ROCE_V2),
        val!(IBV_QPT_RC, ibv_qp_type::IBV_QPT_RC),
        val!(IBV_QPS_INIT, ibv_qp_state::IBV_QPS_INIT),
        val!(IBV_QPS_RTR, ibv_qp_state::IBV_QPS_RTR),
        val!(IBV_QPS_RTS, ibv_qp_state::IBV_QPS_RTS),
        val!(IBV_QP_STATE, ibv_qp_attr_mask::IBV_QP_STATE.0),
        val!(IBV_QP_AV, ibv_qp_attr_mask::IBV_QP_AV.0),
        val!(IBV_QP_PATH_MTU, ibv_qp_attr_mask::IBV_QP_PATH_MTU.0),
        val!(IBV_QP_DEST_QPN, ibv_qp_attr_mask::IBV_QP_DEST_QPN.0),
        val!(IBV_QP_RQ_PSN, ibv_qp_attr_mask::IBV_QP_RQ_PSN.0),
        val!(IBV_QP_SQ_PSN, ibv_qp_attr_mask::IBV_QP_SQ_PSN.0),
        val!(
            IBV_QP_MAX_DEST_RD_ATOMIC,
            ibv_qp_attr_mask::IBV_QP_MAX_DEST_RD_ATOMIC.0
        ),
        val!(
            IBV_QP_MAX_QP_RD_ATOMIC,
            ibv_qp_attr_mask::IBV_QP_MAX_QP_RD_ATOMIC.0
        ),
        val!(
            IBV_QP_MIN_RNR_TIMER,
            ibv_qp_attr_mask::IBV_QP_MIN_RNR_TIMER.0
        ),
        val!(IBV_QP_TIMEOUT, ibv_qp_attr_mask::IBV_QP_TIMEOUT.0),
        val!(IBV_QP_RETRY_CNT, ibv_qp_attr_mask::IBV_QP_RETRY_CNT.0),
        val!(IBV_QP_RNR_RETRY, ibv_qp_attr_mask::IBV_QP_RNR_RETRY.0),
        val!(IBV_QP_PKEY_INDEX, ibv_qp_attr_mask::IBV_QP_PKEY_INDEX.0),
        val!(IBV_QP_PORT, ibv_qp_attr_mask::IBV_QP_PORT.0),
        val!(IBV_QP_ACCESS_FLAGS, ibv_qp_attr_mask::IBV_QP_ACCESS_FLAGS.0),
        val!(
            IBV_ACCESS_LOCAL_WRITE,
            ibv_access_flags::IBV_ACCESS_LOCAL_WRITE.0
        ),
        val!(
            IBV_ACCESS_REMOTE_WRITE,
            ibv_access_flags::IBV_ACCESS_REMOTE_WRITE.0
        ),
        val!(IBV_WR_RDMA_WRITE, ibv_wr_opcode::IBV_WR_RDMA_WRITE),
        val!(
            IBV_WR_RDMA_WRITE_WITH_IMM,
            ibv_wr_opcode::IBV_WR_RDMA_WRITE_WITH_IMM
        ),
        val!(IBV_SEND_SIGNALED, ibv_send_flags::IBV_SEND_SIGNALED.0),
        val!(IBV_MTU_1024, ibv_mtu::IBV_MTU_1024),
        val!(IBV_MTU_4096, ibv_mtu::IBV_MTU_4096),
        val!(IBV_PORT_ACTIVE, ibv_port_state::IBV_PORT_ACTIVE),
        val!(IBV_WC_RETRY_EXC_ERR, ibv_wc_status::IBV_WC_RETRY_EXC_ERR),
        // The RDMA sniffer's QP type, flow rule type and the completion statuses its ring
        // tells apart (declared in src/source/sniffer/ring.rs).
        val!(IBV_QPT_RAW_PACKET, ibv_qp_type::IBV_QPT_RAW_PACKET),
        val!(
            IBV_FLOW_ATTR_SNIFFER,
            ibv_flow_attr_type::IBV_FLOW_ATTR_SNIFFER
        ),
        val!(
            IBV_WC_SUCCESS,
            roce_inspect::source::sniffer::ring::WC_SUCCESS
        ),
        val!(
            IBV_WC_LOC_LEN_ERR,
            roce_inspect::source::sniffer::ring::WC_LOC_LEN_ERR
        ),
        val!(
            IBV_WC_WR_FLUSH_ERR,
            roce_inspect::source::sniffer::ring::WC_WR_FLUSH_ERR
        ),
    ]
}

#[test]
fn rdma_sys_structs_match_verbs_h() {
    let mut exp = expectations();
    exp.extend(constants());
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("probe.c");
    let bin = dir.path().join("probe");
    let mut c = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include <infiniband/verbs.h>\nint main(void) {\n",
    );
    for (label, expr, _) in &exp {
        c.push_str(&format!(
            "  printf(\"%s %zu\\n\", \"{label}\", (size_t)({expr}));\n"
        ));
    }
    c.push_str("  return 0;\n}\n");
    std::fs::write(&src, c).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = Command::new(&cc)
        .arg(&src)
        .arg("-o")
        .arg(&bin)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(
        out.status.success(),
        "compiling the probe failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&bin).output().unwrap();
    assert!(out.status.success());
    let c_values: BTreeMap<String, usize> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let (k, v) = l.rsplit_once(' ')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect();
    assert_eq!(c_values.len(), exp.len(), "probe printed {c_values:?}");
    let mismatches: Vec<String> = exp
        .iter()
        .filter(|(label, _, rust)| c_values.get(*label) != Some(rust))
        .map(|(label, _, rust)| format!("{label}: C {:?}, Rust {rust}", c_values.get(*label)))
        .collect();
    assert!(mismatches.is_empty(), "layout mismatches: {mismatches:#?}");
    // Spot-check values known from rdma-core 44 on x86-64, so the test cannot pass vacuously.
    assert_eq!(c_values["sizeof ibv_send_wr"], 128);
    assert_eq!(c_values["sizeof ibv_wc"], 48);
    assert_eq!(c_values["sizeof ibv_qp_attr"], 144);
    assert_eq!(c_values["IBV_LINK_LAYER_ETHERNET"], 2);
    assert_eq!(c_values["IBV_QP_DEST_QPN"], 1 << 20);
    assert_eq!(c_values["sizeof ibv_flow_attr"], 20);
    assert_eq!(c_values["IBV_FLOW_ATTR_SNIFFER"], 3);
    assert_eq!(c_values["IBV_QPT_RAW_PACKET"], 8);
}
