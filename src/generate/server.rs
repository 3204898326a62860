//! The server (`--listen`): waits for a client, creates one QP per client QP and a buffer slice
//! for each, brings the QPs to RTR (a pure responder needs no RTS, as perftest's write server),
//! and keeps the buffer registered until the client says it is done.

use std::time::Duration;

use anyhow::{Result, bail};

use super::args::{GenerateArgs, MAX_SIZE};
use super::client::print_report;
use super::oob::{self, Channel};
use super::peer::family_of;
use super::setup::{self, Device, Endpoint, Gpu};
use super::stats::{Received, Report};
use super::verbs::Wc;
use super::wc_status;
use super::wire::{FLAG_IMM, Message, Params};

/// Receive WRs kept posted per QP for WRITE WITH IMMEDIATE.
pub const RECV_DEPTH: u32 = 512;

/// The most buffer memory a client may ask the server for (bytes).
pub const MAX_TOTAL: u64 = 16 << 30;

const QP_SHIFT: u32 = 48;

/// Checks a client's request and returns the per-QP slice length.
pub fn slice_len(client: &Params) -> Result<u64> {
    let len = client.qps.iter().map(|q| q.len).max().unwrap_or(0);
    if len == 0 || len > MAX_SIZE {
        bail!("the client asks for {len}-byte writes; 1 byte to 2 GiB are allowed");
    }
    let total = len.saturating_mul(client.qps.len() as u64);
    if total > MAX_TOTAL {
        bail!(
            "the client asks for {total} bytes of buffer ({} QPs × {len}); the server allows \
             at most 16 GiB",
            client.qps.len()
        );
    }
    Ok(len)
}

/// Runs the server for one client.
pub fn run(args: &GenerateArgs, gpu: Option<Gpu>) -> Result<()> {
    let dev = Device::open(args)?;
    let listener = oob::listen(args.oob_port)?;
    eprintln!(
        "waiting for a client on TCP port {} ({} port {})",
        args.oob_port,
        dev.ctx.name(),
        dev.port.port
    );
    let mut ch = Channel::accept(&listener)?;
    let family = family_of(ch.peer().ip());
    let (client, local, (ep, gid, mtu)) = oob::server_exchange(&mut ch, |client| {
        let gid = dev.pick_gid(args.gid_index, family)?;
        let slice = slice_len(client)?;
        let imm = client.flags & FLAG_IMM != 0;
        let n = client.qps.len();
        let recv = if imm { RECV_DEPTH } else { 1 };
        let total = usize::try_from(slice * n as u64)?;
        let ep = Endpoint::new(&dev, gpu.as_ref(), total, n, 1, recv)?;
        let local_mtu = dev.local_mtu(args.mtu);
        let mtu = setup::path_mtu(local_mtu, client);
        let local = ep.params(local_mtu, 0, &gid, slice, slice);
        ep.connect(&dev, &gid, client, mtu, args.tclass, false)?;
        if imm {
            for (i, qp) in ep.qps.iter().enumerate() {
                for _ in 0..RECV_DEPTH {
                    qp.post_recv((i as u64) << QP_SHIFT)?;
                }
            }
        }
        Ok((local, (ep, gid, mtu)))
    })?;
    let result = (|| -> Result<Report> {
        let mut report = Report {
            role: "server",
            device: dev.ctx.name().to_string(),
            port: dev.port.port,
            gid_index: gid.index,
            memory: setup::memory_text(&ep.mr, gpu.as_ref()),
            qps: setup::qp_lines(&local, &client, mtu),
            summary: None,
            received: None,
        };
        setup::print_lines(&report, args.json);
        ch.barrier()?;
        let imm_count = if client.flags & FLAG_IMM != 0 {
            count_immediates(&ep, &ch)?
        } else {
            0
        };
        ch.set_timeout(None)?;
        let Message::Done { messages, bytes } = ch.expect("Done")? else {
            unreachable!("expect checked the kind")
        };
        let echo = if client.flags & FLAG_IMM != 0 {
            imm_count
        } else {
            messages
        };
        ch.send(&Message::Done {
            messages: echo,
            bytes,
        })?;
        report.received = Some(Received {
            messages,
            bytes,
            immediates: (client.flags & FLAG_IMM != 0).then_some(imm_count),
        });
        Ok(report)
    })();
    match result {
        Ok(report) => print_report(&report, args.json),
        Err(e) => {
            ch.abort(&format!("server: {e:#}"));
            Err(e)
        }
    }
}

/// Polls receive completions (one per WRITE WITH IMMEDIATE), reposting each, until the client
/// sends something on the TCP connection.
fn count_immediates(ep: &Endpoint, ch: &Channel) -> Result<u64> {
    let mut wcs: Vec<Wc> = (0..16).map(|_| Wc::zeroed()).collect();
    let mut count = 0u64;
    let mut spins = 0u32;
    loop {
        let n = ep.cq.poll(&mut wcs)?;
        for wc in &wcs[..n] {
            if wc.status() != 0 {
                bail!(
                    "receive failed on QPN {:#x}: {} (vendor error {:#x})",
                    wc.qp_num(),
                    wc_status::describe(wc.status()),
                    wc.vendor_err()
                );
            }
            let qi = (wc.wr_id() >> QP_SHIFT) as usize;
            let Some(qp) = ep.qps.get(qi) else {
                bail!("completion with unknown wr_id {:#x}", wc.wr_id());
            };
            qp.post_recv(wc.wr_id())?;
            count += 1;
        }
        if n == 0 {
            spins += 1;
            if spins >= 1024 {
                spins = 0;
                if ch.poll_readable()? {
                    // The client saw every WRITE acknowledged; collect completions still queued.
                    loop {
                        let n = ep.cq.poll(&mut wcs)?;
                        if n == 0 {
                            return Ok(count);
                        }
                        count += n as u64;
                    }
                }
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::gid::Gid;
    use crate::generate::mtu::Mtu;
    use crate::generate::wire::QpInfo;

    fn req(len: u64, n: usize) -> Params {
        Params {
            mtu: Mtu::M1024,
            flags: 0,
            qps: vec![
                QpInfo {
                    qpn: 1,
                    psn: 1,
                    rkey: 1,
                    addr: 0,
                    len,
                    gid: Gid::from_ip("10.0.0.1".parse().unwrap()),
                };
                n
            ],
        }
    }

    #[test]
    fn slice_limits() {
        assert_eq!(slice_len(&req(65536, 4)).unwrap(), 65536);
        assert!(slice_len(&req(0, 1)).is_err());
        assert!(slice_len(&req(MAX_SIZE + 1, 1)).is_err());
        assert_eq!(slice_len(&req(MAX_SIZE, 8)).unwrap(), MAX_SIZE);
        let e = slice_len(&req(MAX_SIZE, 9)).unwrap_err().to_string();
        assert!(e.contains("16 GiB"), "{e}");
    }
}
