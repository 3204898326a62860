//! The client (`--peer`): creates its QPs, exchanges parameters with the server, connects the
//! QPs (RTR, RTS), and writes into the server's buffer.

use std::time::Duration;

use anyhow::{Result, bail};

use super::args::{DEFAULT_ITERS, GenerateArgs};
use super::oob::{self, Channel};
use super::peer::Peer;
use super::setup::{self, Device, Endpoint, Gpu};
use super::stats::{Report, Summary};
use super::traffic::{self, Plan};
use super::wire::{FLAG_IMM, Message};

/// How long the client waits for the TCP connection to the server.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs the client.
pub fn run(args: &GenerateArgs, peer: Peer, gpu: Option<Gpu>) -> Result<()> {
    let size = u32::try_from(args.size).map_err(|_| anyhow::anyhow!("--size too large"))?;
    let dev = Device::open(args)?;
    let gid = dev.pick_gid(args.gid_index, peer.family())?;
    let local_mtu = dev.local_mtu(args.mtu);
    let n = args.qps as usize;
    let ep = Endpoint::new(&dev, gpu.as_ref(), size as usize, n, args.tx_depth, 1)?;
    let flags = if args.imm { FLAG_IMM } else { 0 };
    // Every QP reads from the same local buffer.
    let local = ep.params(local_mtu, flags, &gid, 0, u64::from(size));

    let mut ch = Channel::connect(peer.socket_addr(args.oob_port), CONNECT_TIMEOUT)?;
    let result = (|| -> Result<Report> {
        let remote = oob::client_exchange(&mut ch, &local)?;
        if remote.qps.len() != n {
            bail!(
                "the server answered with {} QPs for our {n}",
                remote.qps.len()
            );
        }
        if let Some(q) = remote.qps.iter().find(|q| q.len < u64::from(size)) {
            bail!(
                "the server's buffer slice is {} bytes, smaller than --size {size}",
                q.len
            );
        }
        if let (Some(want), Some(got)) = (peer.gid, remote.qps.first().map(|q| q.gid)) {
            if want != got {
                eprintln!(
                    "warning: the server sends from GID {got}, not the --peer GID {want}; \
                     --gid-index on the server chooses its GID"
                );
            }
        }
        let mtu = setup::path_mtu(local_mtu, &remote);
        ep.connect(&dev, &gid, &remote, mtu, args.tclass, true)?;
        let mut report = Report {
            role: "client",
            device: dev.ctx.name().to_string(),
            port: dev.port.port,
            gid_index: gid.index,
            memory: setup::memory_text(&ep.mr, gpu.as_ref()),
            qps: setup::qp_lines(&local, &remote, mtu),
            summary: None,
            received: None,
        };
        setup::print_lines(&report, args.json);
        ch.barrier()?;
        let plan = Plan {
            size,
            iters: args.iters.unwrap_or(DEFAULT_ITERS),
            duration: args.duration.map(Duration::from_secs_f64),
            tx_depth: args.tx_depth,
            imm: args.imm,
            progress: !args.json,
        };
        let out = traffic::run(
            &ep.qps,
            &ep.cq,
            ep.mr.addr(),
            ep.mr.lkey(),
            &remote.qps,
            &plan,
        )?;
        let mut lat = out.latencies;
        let summary = Summary::new(
            if args.imm { "write_with_imm" } else { "write" },
            n,
            u64::from(size),
            out.messages,
            out.elapsed,
            &mut lat,
        );
        ch.send(&Message::Done {
            messages: summary.messages,
            bytes: summary.bytes,
        })?;
        if let Message::Done { messages, .. } = ch.expect("Done")? {
            if args.imm && messages != summary.messages {
                eprintln!(
                    "warning: the server counted {messages} immediates for our {} WRITEs",
                    summary.messages
                );
            }
        }
        report.summary = Some(summary);
        Ok(report)
    })();
    let report = match result {
        Ok(r) => r,
        Err(e) => {
            ch.abort(&format!("client: {e:#}"));
            return Err(e);
        }
    };
    print_report(&report, args.json)
}

/// Prints the final table, or the whole report as JSON.
pub fn print_report(report: &Report, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else if let Some(s) = &report.summary {
        println!("{}", s.table());
    } else if let Some(r) = report.received {
        match r.immediates {
            Some(i) => println!(
                "the client wrote {} messages, {} bytes; {i} immediates received",
                r.messages, r.bytes
            ),
            None => println!(
                "the client wrote {} messages, {} bytes",
                r.messages, r.bytes
            ),
        }
    }
    Ok(())
}
