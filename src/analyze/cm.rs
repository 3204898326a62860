//! QP pairing from the InfiniBand Communication Manager MADs that RDMA-CM exchanges on QP1
//! (IBTA Vol 1 ch. 12; attribute IDs from Wireshark's `CM_Attributes`, spec/roce.md §5).
//!
//! A ConnectRequest (REQ, attribute 0x0010) carries the active side's Local Communication ID and
//! Local QPN; the ConnectReply (REP, 0x0013) echoes that ID as Remote Communication ID and
//! carries the passive side's Local QPN. Field offsets inside the 232-byte MAD data (after the
//! 24-byte common MAD header): REQ Local Comm ID at 0, Local QPN at 32 (24 bits); REP Local Comm
//! ID at 0, Remote Comm ID at 4, Local QPN at 12 (24 bits). The offsets were checked against
//! tshark's `infiniband.cm.req.localqpn` / `infiniband.cm.rep.localqpn` on the public capture
//! `rdma_cm.pcap` (see `tests/analysis_real.rs`).

/// MAD management class of the Communication Manager.
pub const MGMT_CLASS_CM: u8 = 0x07;
/// CM attribute: ConnectRequest.
pub const ATTR_REQ: u16 = 0x0010;
/// CM attribute: ConnectReply.
pub const ATTR_REP: u16 = 0x0013;
/// Length of the common MAD header.
pub const MAD_HDR: usize = 24;

/// A CM message relevant to pairing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmMsg {
    /// ConnectRequest: the active side's communication ID and QPN.
    Req {
        /// Local Communication ID.
        comm_id: u32,
        /// Local QPN (24 bits).
        qpn: u32,
    },
    /// ConnectReply: the REQ's communication ID and the passive side's QPN.
    Rep {
        /// Remote Communication ID (= the REQ's Local Communication ID).
        remote_comm_id: u32,
        /// Local QPN (24 bits).
        qpn: u32,
    },
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

fn be24(b: &[u8]) -> u32 {
    u32::from_be_bytes([0, b[0], b[1], b[2]])
}

/// Parse a CM REQ or REP from the payload of a UD SEND to QP1; `None` for anything else or a
/// short payload.
pub fn parse(mad: &[u8]) -> Option<CmMsg> {
    if mad.len() < MAD_HDR + 48 || mad[1] != MGMT_CLASS_CM {
        return None;
    }
    let attr = u16::from_be_bytes([mad[16], mad[17]]);
    let d = &mad[MAD_HDR..];
    match attr {
        ATTR_REQ => Some(CmMsg::Req {
            comm_id: be32(d),
            qpn: be24(&d[32..]),
        }),
        ATTR_REP => Some(CmMsg::Rep {
            remote_comm_id: be32(&d[4..]),
            qpn: be24(&d[12..]),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn req_and_rep_fields() {
        let mut mad = vec![0u8; 256];
        mad[0] = 1;
        mad[1] = MGMT_CLASS_CM;
        mad[16..18].copy_from_slice(&ATTR_REQ.to_be_bytes());
        mad[24..28].copy_from_slice(&0x64c0_c56du32.to_be_bytes());
        mad[24 + 32..24 + 35].copy_from_slice(&[0, 0, 0x3d]);
        assert_eq!(
            parse(&mad),
            Some(CmMsg::Req {
                comm_id: 0x64c0_c56d,
                qpn: 0x3d
            })
        );
        mad[16..18].copy_from_slice(&ATTR_REP.to_be_bytes());
        mad[28..32].copy_from_slice(&0x64c0_c56du32.to_be_bytes());
        mad[24 + 12..24 + 15].copy_from_slice(&[0, 0, 0x3b]);
        assert_eq!(
            parse(&mad),
            Some(CmMsg::Rep {
                remote_comm_id: 0x64c0_c56d,
                qpn: 0x3b
            })
        );
        mad[1] = 0x01;
        assert_eq!(parse(&mad), None);
        assert_eq!(parse(&mad[..40]), None);
    }
}
