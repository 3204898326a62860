//! Loopback RoCEv2 load generator for measuring `roce-inspect capture` against tcpdump.
//!
//! Sends RC RDMA WRITE MIDDLE packets (BTH + payload + valid ICRC, PSNs counting up) from a UDP
//! socket to a loopback address at a set rate for a bounded time, then prints what it sent.
//! Only IPv4 loopback destinations (127.0.0.0/8) are accepted: this never sends traffic off the
//! machine. Run it inside a network namespace to keep the stream away from other programs:
//!
//! ```sh
//! ip netns add flood && ip -n flood link set lo up
//! ip netns exec flood roce-inspect capture lo > /dev/null &
//! ip netns exec flood target/release/examples/udp_flood --rate 200000 --duration 3
//! ```
//!
//! Options: `--rate PPS` (packets per second, 0 = as fast as possible; default 100000),
//! `--duration SECS` (0.1–10, default 3), `--dst ADDR:PORT` (default 127.0.0.1:4791),
//! `--payload BYTES` (multiple of 4, 0–4096, default 256).

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use roce_inspect::decode::icrc;

struct Opts {
    rate: u64,
    duration: f64,
    dst: SocketAddr,
    payload: usize,
}

fn parse() -> Result<Opts, String> {
    let mut o = Opts {
        rate: 100_000,
        duration: 3.0,
        dst: SocketAddr::from(([127, 0, 0, 1], 4791)),
        payload: 256,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--rate" => o.rate = val()?.parse().map_err(|e| format!("--rate: {e}"))?,
            "--duration" => o.duration = val()?.parse().map_err(|e| format!("--duration: {e}"))?,
            "--dst" => o.dst = val()?.parse().map_err(|e| format!("--dst: {e}"))?,
            "--payload" => o.payload = val()?.parse().map_err(|e| format!("--payload: {e}"))?,
            "-h" | "--help" => {
                return Err(
                    "usage: udp_flood [--rate PPS] [--duration SECS] [--dst 127.0.0.1:4791] [--payload BYTES]"
                        .into(),
                );
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if !(o.dst.is_ipv4() && o.dst.ip().is_loopback()) {
        return Err(format!(
            "{} is not an IPv4 loopback address; udp_flood only sends to 127.0.0.0/8",
            o.dst.ip()
        ));
    }
    if !(0.1..=10.0).contains(&o.duration) {
        return Err("--duration must be between 0.1 and 10 seconds".into());
    }
    if o.payload % 4 != 0 || o.payload > 4096 {
        return Err("--payload must be a multiple of 4, at most 4096".into());
    }
    Ok(o)
}

/// Transport bytes (BTH ‖ payload ‖ ICRC) of RC RDMA WRITE MIDDLE with `psn`, for a datagram
/// src → dst over IPv4 sent by this kernel (ID 0 with DF forced; see tests/capture.rs).
fn packet(o: &Opts, src: SocketAddr, psn: u32) -> Vec<u8> {
    let mut t = vec![0x07, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0];
    t.extend_from_slice(&psn.to_be_bytes()[1..]);
    t.extend((0..o.payload).map(|i| i as u8));
    let udp_len = (8 + t.len() + 4) as u16;
    let crc = match (src.ip(), o.dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let mut ip = vec![0x45, 0];
            ip.extend_from_slice(&(20 + udp_len).to_be_bytes());
            ip.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0]);
            ip.extend_from_slice(&s.octets());
            ip.extend_from_slice(&d.octets());
            let mut udp = src.port().to_be_bytes().to_vec();
            udp.extend_from_slice(&o.dst.port().to_be_bytes());
            udp.extend_from_slice(&udp_len.to_be_bytes());
            udp.extend_from_slice(&[0, 0]);
            icrc::rocev2_ipv4(&ip, &udp, &t)
        }
        _ => 0, // IPv4 only (checked in parse)
    };
    t.extend_from_slice(&crc.to_le_bytes());
    t
}

/// Packets per `sendmmsg` call.
const BATCH: usize = 64;

/// Send `n` (≤ [`BATCH`]) packets from `pkts`, starting at `first` and wrapping around, with one
/// `sendmmsg` to `dst`. The socket stays unconnected so the kernel keeps IP ID 0 (the ICRC
/// covers the ID). Returns how many were sent.
fn send_batch(
    sock: &UdpSocket,
    dst: &libc::sockaddr_in,
    pkts: &[Vec<u8>],
    first: usize,
    n: usize,
) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    let mut iov: [libc::iovec; BATCH] = unsafe { std::mem::zeroed() };
    // SAFETY: zeroed mmsghdr is a valid empty message.
    let mut msgs: [libc::mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
    for i in 0..n {
        let p = &pkts[(first + i) % pkts.len()];
        iov[i].iov_base = p.as_ptr() as *mut libc::c_void;
        iov[i].iov_len = p.len();
        msgs[i].msg_hdr.msg_iov = &mut iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = dst as *const libc::sockaddr_in as *mut libc::c_void;
        msgs[i].msg_hdr.msg_namelen = size_of::<libc::sockaddr_in>() as libc::socklen_t;
    }
    // SAFETY: n initialised messages pointing at live buffers.
    let rc = unsafe { libc::sendmmsg(sock.as_raw_fd(), msgs.as_mut_ptr(), n as u32, 0) };
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
}

fn set_df(sock: &UdpSocket) {
    use std::os::fd::AsRawFd;
    let v: libc::c_int = libc::IP_PMTUDISC_DO;
    // SAFETY: a valid socket and an int option; failure only makes the ICRC not match.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            (&v as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

fn main() -> ExitCode {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("udp_flood: {e}");
            return ExitCode::from(2);
        }
    };
    // A sink on the destination port, so the kernel drops datagrams into a full socket buffer
    // instead of answering each with ICMP port unreachable. Optional.
    let _sink = UdpSocket::bind(o.dst).ok();
    let bind: SocketAddr = match o.dst.ip() {
        IpAddr::V4(a) => SocketAddr::from((a, 0)),
        IpAddr::V6(a) => SocketAddr::from((a, 0)),
    };
    let sock = match UdpSocket::bind(bind) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("udp_flood: bind {bind}: {e}");
            return ExitCode::FAILURE;
        }
    };
    set_df(&sock);
    let src = match sock.local_addr() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("udp_flood: {e}");
            return ExitCode::FAILURE;
        }
    };
    // SAFETY: zeroed sockaddr_in is valid; fields set below.
    let mut dst_sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    dst_sa.sin_family = libc::AF_INET as libc::sa_family_t;
    dst_sa.sin_port = o.dst.port().to_be();
    if let IpAddr::V4(a) = o.dst.ip() {
        dst_sa.sin_addr.s_addr = u32::from(a).to_be();
    }
    const RING: u32 = 4096;
    let pkts: Vec<Vec<u8>> = (0..RING).map(|psn| packet(&o, src, psn)).collect();

    let start = Instant::now();
    let end = start + Duration::from_secs_f64(o.duration);
    let mut sent: u64 = 0;
    let mut errors: u64 = 0;
    loop {
        let now = Instant::now();
        if now >= end {
            break;
        }
        // Packets due by now; sent in a burst, then a short sleep.
        let due = if o.rate == 0 {
            sent + 64
        } else {
            (now.duration_since(start).as_secs_f64() * o.rate as f64) as u64
        };
        if sent >= due {
            std::thread::sleep(Duration::from_micros(50));
            continue;
        }
        while sent < due {
            let n = (due - sent).min(BATCH as u64) as usize;
            let first = (sent % RING as u64) as usize;
            match send_batch(&sock, &dst_sa, &pkts, first, n) {
                Ok(k) if k > 0 => sent += k as u64,
                _ => {
                    errors += 1;
                    sent += 1;
                }
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "sent {sent} packets in {secs:.2} s = {:.0} packets/s ({} bytes each on the wire incl. Ethernet; {errors} send errors)",
        sent as f64 / secs,
        14 + 20 + 8 + 12 + o.payload + 4
    );
    ExitCode::SUCCESS
}
