//! `ibv_modify_qp` attributes and masks for the RC transitions RESET→INIT→RTR→RTS.
//!
//! Pure functions: they only fill the structs, so each field can be tested without a device.
//! The required and optional attributes per transition are the RC rows of `man ibv_modify_qp`
//! (rdma-core); the values are perftest's (`ctx_modify_qp_to_init/rtr/rts` in
//! perftest_resources.c): min RNR timer 12, timeout 14 (4.096 µs · 2¹⁴ ≈ 67 ms), retry counts 7,
//! hop limit 255. RoCE needs a GRH on every packet, so `is_global` is always 1.

use rdma_sys::{ibv_access_flags, ibv_gid, ibv_mtu, ibv_qp_attr, ibv_qp_attr_mask, ibv_qp_state};

use super::gid::Gid;
use super::mtu::Mtu;

/// Minimum RNR NAK timer code (perftest `MIN_RNR_TIMER`; code 12 = 0.64 ms, IBTA table 45).
pub const MIN_RNR_TIMER: u8 = 12;
/// Local ACK timeout exponent (perftest `DEF_QP_TIME`): 4.096 µs · 2¹⁴ ≈ 67 ms.
pub const TIMEOUT: u8 = 14;
/// Transport retries before IBV_WC_RETRY_EXC_ERR (the maximum, 7).
pub const RETRY_CNT: u8 = 7;
/// RNR retries; 7 means infinite.
pub const RNR_RETRY: u8 = 7;
/// GRH hop limit, the IP TTL of RoCE v2 packets.
pub const HOP_LIMIT: u8 = 0xff;
/// Outstanding RDMA READ/atomic requests: 1 (WRITEs need none, but 0 is refused by some HCAs).
pub const RD_ATOMIC: u8 = 1;

fn zeroed() -> ibv_qp_attr {
    // SAFETY: ibv_qp_attr is a plain C struct of integers and a GID union; all-zero is valid
    // (the C code memsets it the same way).
    unsafe { std::mem::zeroed() }
}

/// RESET→INIT: port, P_Key index 0, and the remote access the peer's WRITEs need.
pub fn to_init(port: u8, access: ibv_access_flags) -> (ibv_qp_attr, ibv_qp_attr_mask) {
    let mut a = zeroed();
    a.qp_state = ibv_qp_state::IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = port;
    a.qp_access_flags = access.0;
    let mask = ibv_qp_attr_mask::IBV_QP_STATE
        | ibv_qp_attr_mask::IBV_QP_PKEY_INDEX
        | ibv_qp_attr_mask::IBV_QP_PORT
        | ibv_qp_attr_mask::IBV_QP_ACCESS_FLAGS;
    (a, mask)
}

/// What INIT→RTR needs to know about the path and the peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtrParams {
    /// Negotiated path MTU.
    pub mtu: Mtu,
    /// The peer's QPN (24 bits).
    pub dest_qpn: u32,
    /// The peer's starting PSN: the first PSN we expect to receive (24 bits).
    pub rq_psn: u32,
    /// The peer's GID (destination GID / IP address).
    pub dgid: Gid,
    /// Our GID-table index (source GID).
    pub sgid_index: u8,
    /// Local port number.
    pub port: u8,
    /// GRH traffic class (IP DSCP << 2 | ECN).
    pub traffic_class: u8,
}

/// INIT→RTR: path MTU, destination QPN, receive PSN, the address vector with its GRH.
pub fn to_rtr(p: &RtrParams) -> (ibv_qp_attr, ibv_qp_attr_mask) {
    let mut a = zeroed();
    a.qp_state = ibv_qp_state::IBV_QPS_RTR;
    a.path_mtu = p.mtu.code() as ibv_mtu::Type;
    a.dest_qp_num = p.dest_qpn & 0xff_ffff;
    a.rq_psn = p.rq_psn & 0xff_ffff;
    a.max_dest_rd_atomic = RD_ATOMIC;
    a.min_rnr_timer = MIN_RNR_TIMER;
    a.ah_attr.dlid = 0;
    a.ah_attr.sl = 0;
    a.ah_attr.src_path_bits = 0;
    a.ah_attr.port_num = p.port;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = ibv_gid { raw: p.dgid.0 };
    a.ah_attr.grh.sgid_index = p.sgid_index;
    a.ah_attr.grh.hop_limit = HOP_LIMIT;
    a.ah_attr.grh.traffic_class = p.traffic_class;
    a.ah_attr.grh.flow_label = 0;
    let mask = ibv_qp_attr_mask::IBV_QP_STATE
        | ibv_qp_attr_mask::IBV_QP_AV
        | ibv_qp_attr_mask::IBV_QP_PATH_MTU
        | ibv_qp_attr_mask::IBV_QP_DEST_QPN
        | ibv_qp_attr_mask::IBV_QP_RQ_PSN
        | ibv_qp_attr_mask::IBV_QP_MAX_DEST_RD_ATOMIC
        | ibv_qp_attr_mask::IBV_QP_MIN_RNR_TIMER;
    (a, mask)
}

/// RTR→RTS: our starting PSN, ACK timeout and retry counts.
pub fn to_rts(sq_psn: u32) -> (ibv_qp_attr, ibv_qp_attr_mask) {
    let mut a = zeroed();
    a.qp_state = ibv_qp_state::IBV_QPS_RTS;
    a.sq_psn = sq_psn & 0xff_ffff;
    a.timeout = TIMEOUT;
    a.retry_cnt = RETRY_CNT;
    a.rnr_retry = RNR_RETRY;
    a.max_rd_atomic = RD_ATOMIC;
    let mask = ibv_qp_attr_mask::IBV_QP_STATE
        | ibv_qp_attr_mask::IBV_QP_SQ_PSN
        | ibv_qp_attr_mask::IBV_QP_TIMEOUT
        | ibv_qp_attr_mask::IBV_QP_RETRY_CNT
        | ibv_qp_attr_mask::IBV_QP_RNR_RETRY
        | ibv_qp_attr_mask::IBV_QP_MAX_QP_RD_ATOMIC;
    (a, mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Mask bit values from <infiniband/verbs.h> enum ibv_qp_attr_mask.
    const STATE: u32 = 1 << 0;
    const ACCESS_FLAGS: u32 = 1 << 3;
    const PKEY_INDEX: u32 = 1 << 4;
    const PORT: u32 = 1 << 5;
    const AV: u32 = 1 << 7;
    const PATH_MTU: u32 = 1 << 8;
    const TIMEOUT_BIT: u32 = 1 << 9;
    const RETRY_CNT_BIT: u32 = 1 << 10;
    const RNR_RETRY_BIT: u32 = 1 << 11;
    const RQ_PSN: u32 = 1 << 12;
    const MAX_QP_RD_ATOMIC: u32 = 1 << 13;
    const MIN_RNR_TIMER_BIT: u32 = 1 << 15;
    const SQ_PSN: u32 = 1 << 16;
    const MAX_DEST_RD_ATOMIC: u32 = 1 << 17;
    const DEST_QPN: u32 = 1 << 20;

    #[test]
    fn init() {
        let access =
            ibv_access_flags::IBV_ACCESS_LOCAL_WRITE | ibv_access_flags::IBV_ACCESS_REMOTE_WRITE;
        let (a, m) = to_init(1, access);
        assert_eq!(m.0, STATE | PKEY_INDEX | PORT | ACCESS_FLAGS);
        assert_eq!(a.qp_state, 1);
        assert_eq!(a.pkey_index, 0);
        assert_eq!(a.port_num, 1);
        assert_eq!(a.qp_access_flags, 1 | 2); // LOCAL_WRITE | REMOTE_WRITE
    }

    #[test]
    fn rtr() {
        let p = RtrParams {
            mtu: Mtu::M1024,
            dest_qpn: 0x00ab_cdef,
            rq_psn: 0x0012_3456,
            dgid: "::ffff:192.168.1.2".parse().unwrap(),
            sgid_index: 3,
            port: 1,
            traffic_class: 106,
        };
        let (a, m) = to_rtr(&p);
        assert_eq!(
            m.0,
            STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER_BIT
        );
        assert_eq!(a.qp_state, 2);
        assert_eq!(a.path_mtu, 3);
        assert_eq!(a.dest_qp_num, 0xab_cdef);
        assert_eq!(a.rq_psn, 0x12_3456);
        assert_eq!(a.max_dest_rd_atomic, 1);
        assert_eq!(a.min_rnr_timer, 12);
        assert_eq!(a.ah_attr.is_global, 1);
        assert_eq!(a.ah_attr.dlid, 0);
        assert_eq!(a.ah_attr.port_num, 1);
        // SAFETY: raw is the union's byte view; every bit pattern is valid.
        let dgid = unsafe { a.ah_attr.grh.dgid.raw };
        assert_eq!(
            dgid,
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 2]
        );
        assert_eq!(a.ah_attr.grh.sgid_index, 3);
        assert_eq!(a.ah_attr.grh.hop_limit, 255);
        assert_eq!(a.ah_attr.grh.traffic_class, 106);
        assert_eq!(a.ah_attr.grh.flow_label, 0);
        // Fields of other transitions stay zero.
        assert_eq!(
            (a.sq_psn, a.timeout, a.retry_cnt, a.qp_access_flags),
            (0, 0, 0, 0)
        );
    }

    #[test]
    fn rtr_masks_24_bit_fields() {
        let p = RtrParams {
            mtu: Mtu::M4096,
            dest_qpn: 0xff00_0001,
            rq_psn: 0xff00_0002,
            dgid: "fe80::1".parse().unwrap(),
            sgid_index: 0,
            port: 2,
            traffic_class: 0,
        };
        let (a, _) = to_rtr(&p);
        assert_eq!((a.dest_qp_num, a.rq_psn, a.path_mtu), (1, 2, 5));
    }

    #[test]
    fn rts() {
        let (a, m) = to_rts(0x01ab_cdef);
        assert_eq!(
            m.0,
            STATE | SQ_PSN | TIMEOUT_BIT | RETRY_CNT_BIT | RNR_RETRY_BIT | MAX_QP_RD_ATOMIC
        );
        assert_eq!(a.qp_state, 3);
        assert_eq!(a.sq_psn, 0xab_cdef);
        assert_eq!(a.timeout, 14);
        assert_eq!(a.retry_cnt, 7);
        assert_eq!(a.rnr_retry, 7);
        assert_eq!(a.max_rd_atomic, 1);
        assert_eq!(a.ah_attr.is_global, 0);
    }
}
