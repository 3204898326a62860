//! `capture DEVICE` on an RDMA device that libpcap does not offer: the verbs sniffer
//! ([`crate::source::sniffer`]) feeding the same pipeline as a libpcap capture (display,
//! `-w`, `--summary`, Ctrl-C report), with the sniffer's drop counters in the report.

use std::path::Path;

use anyhow::Result;

use super::CaptureArgs;
use crate::pipeline::Outcome;
use crate::source::sniffer::sysfs;

/// The `RDMA devices` section of `roce-inspect list`: each device's ports (link layer,
/// network device) and the way `capture NAME` reaches its traffic; `pcap_names` are the
/// interfaces libpcap offers.
///
/// # Errors
/// The writer's error.
pub fn write_rdma_list(
    out: &mut impl std::io::Write,
    devs: &[sysfs::DeviceDesc],
    pcap_names: &[&str],
) -> std::io::Result<()> {
    if devs.is_empty() {
        return writeln!(out, "RDMA devices: none");
    }
    writeln!(out, "RDMA devices:")?;
    for d in devs {
        write!(out, "  {}", d.name)?;
        if let Some(drv) = &d.driver {
            write!(out, " ({drv})")?;
        }
        for p in &d.ports {
            write!(out, ", port {} {}", p.port, p.link_layer)?;
            if let Some(n) = &p.netdev {
                write!(out, " on {n}")?;
            }
        }
        let in_pcap = pcap_names.contains(&d.name.as_str());
        writeln!(
            out,
            ": capture via {}",
            crate::source::sniffer::capture_path(d, in_pcap)
        )?;
    }
    Ok(())
}

/// The RDMA devices the kernel lists, comma-separated, or `none`.
pub fn rdma_names() -> String {
    let names: Vec<String> = sysfs::devices(Path::new(sysfs::SYSFS_ROOT))
        .into_iter()
        .map(|d| d.name)
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// Whether `spec` (`DEVICE[:PORT]`) names an RDMA device the kernel lists.
pub fn is_rdma_device(spec: &str) -> bool {
    let dev = spec.split(':').next().unwrap_or(spec);
    sysfs::devices(Path::new(sysfs::SYSFS_ROOT))
        .iter()
        .any(|d| d.name == dev)
}

/// `roce-inspect capture DEVICE` without the `verbs` feature: says how to get it.
///
/// # Errors
/// Always: one line naming the rebuild and the ibdump alternative.
#[cfg(not(feature = "verbs"))]
pub fn capture(
    a: &CaptureArgs,
    _live_out: bool,
    _plan: &crate::source::privdrop::Plan,
) -> Result<Outcome> {
    let spec = a.interface();
    anyhow::bail!(
        "{spec} is an RDMA device that libpcap does not offer, and this roce-inspect was built \
         without the verbs sniffer (rebuild with --features verbs), or capture with \
         ibdump -d {spec} -w out.pcap and read the file"
    )
}

/// `roce-inspect capture DEVICE` through the verbs sniffer.
///
/// # Errors
/// One-line errors: no such device or port, CAP_NET_RAW missing, no raw packet QP support,
/// the flow rule refused, a bad filter, the savefile, giving up root (`plan`, once the device
/// and the savefile are open); a read error after the report.
#[cfg(feature = "verbs")]
pub fn capture(
    a: &CaptureArgs,
    live_out: bool,
    plan: &crate::source::privdrop::Plan,
) -> Result<Outcome> {
    use super::live::install_stop_handler;
    use crate::decode::LinkType;
    use crate::pipeline::Run;
    use crate::pipeline::capture_loop;
    use crate::source::live::{LiveError, default_filter};
    use crate::source::sniffer::verbs::RdmaSniffer;

    let d = &a.display;
    let mut src = RdmaSniffer::open(a.interface(), a.snaplen)?;
    let mut run = Run::new(&d.plan()?, src.linktype());
    run.set_source(&format!("capture on {}", a.interface()));
    // The sniffer receives every packet of the port: the filter (the user's, or the default
    // RoCE-only one) runs here.
    let expr = match (&d.filter, src.linktype()) {
        (Some(f), _) => Some(f.clone()),
        (None, LinkType::ETHERNET) => Some(default_filter(&d.roce_ports)),
        (None, _) => None,
    };
    if let Some(expr) = &expr {
        let dead = pcap::Capture::dead(pcap::Linktype(src.linktype().0 as i32))
            .map_err(|e| LiveError::SetFilter(e.to_string()))?;
        let prog = dead.compile(expr, true).map_err(|e| {
            let msg = crate::source::file::filter_msg(e);
            if d.filter.is_some() {
                LiveError::Filter(expr.clone(), msg)
            } else {
                LiveError::DefaultFilter(format!("'{expr}': {msg}"))
            }
        })?;
        let counter = d.filter.is_some().then(|| run.roce_predicate());
        src.set_filter(prog, counter);
    }
    if let Some(path) = &a.write {
        src.save_to(path).map_err(|m| LiveError::Savefile {
            path: path.clone(),
            msg: m,
        })?;
    }
    super::live::give_up_root(plan, a)?;
    let signals = install_stop_handler(None)?;
    let live = a.live(&signals, live_out, expr.as_deref());
    capture_loop::sniffer(src, &mut run, &live)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::sniffer::sysfs::{DeviceDesc, PortDesc};

    #[test]
    fn rdma_list_lines() {
        let port = |n: &str| PortDesc {
            port: 1,
            link_layer: "Ethernet".into(),
            netdev: Some(n.into()),
        };
        let devs = [
            DeviceDesc {
                name: "mlx5_0".into(),
                driver: Some("mlx5_core".into()),
                ports: vec![port("ens1f0")],
            },
            DeviceDesc {
                name: "rxe0".into(),
                driver: None,
                ports: vec![port("eth0")],
            },
        ];
        let mut out = Vec::new();
        write_rdma_list(&mut out, &devs, &["eth0"]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "RDMA devices:");
        assert!(
            lines[1].starts_with("  mlx5_0 (mlx5_core), port 1 Ethernet on ens1f0: capture via "),
            "{text}"
        );
        assert!(
            lines[2].ends_with("capture on its network device eth0"),
            "{text}"
        );
        let mut out = Vec::new();
        write_rdma_list(&mut out, &devs[..1], &["mlx5_0"]).unwrap();
        assert!(String::from_utf8(out).unwrap().contains("via libpcap"));
        let mut out = Vec::new();
        write_rdma_list(&mut out, &[], &[]).unwrap();
        assert_eq!(out, b"RDMA devices: none\n");
    }
}
