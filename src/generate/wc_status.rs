//! Names of work-completion statuses (`enum ibv_wc_status` in `<infiniband/verbs.h>`), with a
//! hint for the ones a RoCE user is likely to meet. `ibv_wc_status_str` gives only prose; the
//! enum name is what people search for.

/// The `enum ibv_wc_status` names, indexed by value (rdma-core verbs.h).
const NAMES: [&str; 24] = [
    "IBV_WC_SUCCESS",
    "IBV_WC_LOC_LEN_ERR",
    "IBV_WC_LOC_QP_OP_ERR",
    "IBV_WC_LOC_EEC_OP_ERR",
    "IBV_WC_LOC_PROT_ERR",
    "IBV_WC_WR_FLUSH_ERR",
    "IBV_WC_MW_BIND_ERR",
    "IBV_WC_BAD_RESP_ERR",
    "IBV_WC_LOC_ACCESS_ERR",
    "IBV_WC_REM_INV_REQ_ERR",
    "IBV_WC_REM_ACCESS_ERR",
    "IBV_WC_REM_OP_ERR",
    "IBV_WC_RETRY_EXC_ERR",
    "IBV_WC_RNR_RETRY_EXC_ERR",
    "IBV_WC_LOC_RDD_VIOL_ERR",
    "IBV_WC_REM_INV_RD_REQ_ERR",
    "IBV_WC_REM_ABORT_ERR",
    "IBV_WC_INV_EECN_ERR",
    "IBV_WC_INV_EEC_STATE_ERR",
    "IBV_WC_FATAL_ERR",
    "IBV_WC_RESP_TIMEOUT_ERR",
    "IBV_WC_GENERAL_ERR",
    "IBV_WC_TM_ERR",
    "IBV_WC_TM_RNDV_INCOMPLETE",
];

/// The enum name of a status value, `"unknown"` past the known ones.
pub fn name(status: u32) -> &'static str {
    NAMES.get(status as usize).copied().unwrap_or("unknown")
}

/// A hint about the likely cause, for the statuses a misconfigured RoCE run produces.
pub fn hint(status: u32) -> Option<&'static str> {
    match status {
        4 | 8 => Some("the local buffer is not covered by the MR (registration problem)"),
        5 => Some("flushed because an earlier work request failed"),
        9 | 10 => Some("the peer rejected the rkey or address (its MR is gone or too small)"),
        12 => Some(
            "no ACK from the peer: check the GIDs and --gid-index on both sides, the path MTU, \
             and that UDP port 4791 is not filtered",
        ),
        13 => Some("the peer had no receive posted for WRITE WITH IMMEDIATE"),
        _ => None,
    }
}

/// `NAME (value)` plus the hint, for error messages.
pub fn describe(status: u32) -> String {
    match hint(status) {
        Some(h) => format!("{} ({status}): {h}", name(status)),
        None => format!("{} ({status})", name(status)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(name(0), "IBV_WC_SUCCESS");
        assert_eq!(name(12), "IBV_WC_RETRY_EXC_ERR");
        assert_eq!(name(23), "IBV_WC_TM_RNDV_INCOMPLETE");
        assert_eq!(name(24), "unknown");
        assert_eq!(name(u32::MAX), "unknown");
        assert!(describe(12).starts_with("IBV_WC_RETRY_EXC_ERR (12): no ACK"));
        assert_eq!(describe(21), "IBV_WC_GENERAL_ERR (21)");
    }

    /// The table matches the values rdma-sys generated from the installed verbs.h.
    #[cfg(feature = "verbs")]
    #[test]
    fn matches_verbs_h() {
        use rdma_sys::ibv_wc_status as s;
        let pairs = [
            (s::IBV_WC_SUCCESS, "IBV_WC_SUCCESS"),
            (s::IBV_WC_LOC_PROT_ERR, "IBV_WC_LOC_PROT_ERR"),
            (s::IBV_WC_WR_FLUSH_ERR, "IBV_WC_WR_FLUSH_ERR"),
            (s::IBV_WC_REM_ACCESS_ERR, "IBV_WC_REM_ACCESS_ERR"),
            (s::IBV_WC_RETRY_EXC_ERR, "IBV_WC_RETRY_EXC_ERR"),
            (s::IBV_WC_RNR_RETRY_EXC_ERR, "IBV_WC_RNR_RETRY_EXC_ERR"),
            (s::IBV_WC_FATAL_ERR, "IBV_WC_FATAL_ERR"),
            (s::IBV_WC_GENERAL_ERR, "IBV_WC_GENERAL_ERR"),
            (s::IBV_WC_TM_RNDV_INCOMPLETE, "IBV_WC_TM_RNDV_INCOMPLETE"),
        ];
        for (v, n) in pairs {
            assert_eq!(name(v), n);
        }
    }
}
