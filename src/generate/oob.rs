//! The out-of-band TCP connection: perftest's `ctx_hand_shake` pattern with our [`wire`]
//! messages. The client connects and speaks first; the server accepts, reads, then answers.
//!
//! [`wire`]: super::wire

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};

use super::wire::{HEADER_LEN, Message, Params};

/// perftest's default port for its out-of-band connection (`DEF_PORT` in perftest_parameters.h).
pub const DEFAULT_PORT: u16 = 18515;

/// How long one read may wait for the peer during set-up.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// One end of the out-of-band connection.
#[derive(Debug)]
pub struct Channel {
    stream: TcpStream,
    peer: SocketAddr,
}

/// Listens for the client on `port` of every local address: `[::]` (dual-stack on Linux), or
/// `0.0.0.0` where IPv6 is disabled.
pub fn listen(port: u16) -> Result<TcpListener> {
    TcpListener::bind((Ipv6Addr::UNSPECIFIED, port))
        .or_else(|_| TcpListener::bind((Ipv4Addr::UNSPECIFIED, port)))
        .with_context(|| format!("cannot listen on TCP port {port} for the out-of-band connection"))
}

impl Channel {
    /// Accepts one client.
    pub fn accept(listener: &TcpListener) -> Result<Channel> {
        let (stream, peer) = listener
            .accept()
            .context("accepting the out-of-band connection")?;
        Channel::new(stream, peer)
    }

    /// Connects to a server, waiting at most `timeout`.
    pub fn connect(addr: SocketAddr, timeout: Duration) -> Result<Channel> {
        let stream = TcpStream::connect_timeout(&addr, timeout).map_err(|e| {
            anyhow!(
                "cannot reach the peer at {addr} for the out-of-band exchange: {e} \
                 (is `roce-inspect generate --listen` running there, with the same --oob-port?)"
            )
        })?;
        Channel::new(stream, addr)
    }

    fn new(stream: TcpStream, peer: SocketAddr) -> Result<Channel> {
        stream.set_nodelay(true).context("setting TCP_NODELAY")?;
        let ch = Channel { stream, peer };
        ch.set_timeout(Some(HANDSHAKE_TIMEOUT))?;
        Ok(ch)
    }

    /// The peer's TCP address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// Sets the read timeout (`None`: wait forever).
    pub fn set_timeout(&self, timeout: Option<Duration>) -> Result<()> {
        self.stream
            .set_read_timeout(timeout)
            .context("setting the out-of-band read timeout")
    }

    /// Sends one message.
    pub fn send(&mut self, msg: &Message) -> Result<()> {
        self.stream
            .write_all(&msg.encode())
            .and_then(|()| self.stream.flush())
            .with_context(|| format!("sending {} to the peer {}", msg.name(), self.peer))
    }

    /// Receives one message; an Abort from the peer becomes an error with its reason.
    pub fn recv(&mut self) -> Result<Message> {
        let mut header = [0u8; HEADER_LEN];
        read_full(&mut self.stream, &mut header, self.peer)?;
        let len = Message::body_len(&header)
            .with_context(|| format!("bad message from the peer {}", self.peer))?;
        let mut buf = vec![0u8; HEADER_LEN + len];
        buf[..HEADER_LEN].copy_from_slice(&header);
        read_full(&mut self.stream, &mut buf[HEADER_LEN..], self.peer)?;
        match Message::decode(&buf)
            .with_context(|| format!("bad message from the peer {}", self.peer))?
        {
            Message::Abort(reason) => bail!("the peer {} gave up: {reason}", self.peer),
            m => Ok(m),
        }
    }

    /// Receives a message and checks its kind against `want` (a [`Message::name`]).
    pub fn expect(&mut self, want: &'static str) -> Result<Message> {
        let m = self.recv()?;
        if m.name() != want {
            bail!(
                "protocol error: the peer {} sent {} where {want} was expected",
                self.peer,
                m.name()
            );
        }
        Ok(m)
    }

    /// Receives the peer's Params.
    pub fn expect_params(&mut self) -> Result<Params> {
        match self.expect("Params")? {
            Message::Params(p) => Ok(p),
            _ => unreachable!("expect checked the kind"),
        }
    }

    /// Tells the peer why this side stops; errors are ignored (the peer may be gone).
    pub fn abort(&mut self, reason: &str) {
        let _ = self
            .stream
            .write_all(&Message::Abort(reason.to_string()).encode());
    }

    /// Barrier: send Ready, then wait for the peer's Ready.
    pub fn barrier(&mut self) -> Result<()> {
        self.send(&Message::Ready)?;
        self.expect("Ready").map(|_| ())
    }

    /// Checks without blocking whether the peer has sent something (or closed).
    pub fn poll_readable(&self) -> Result<bool> {
        self.stream.set_nonblocking(true)?;
        let mut b = [0u8; 1];
        let r = self.stream.peek(&mut b);
        self.stream.set_nonblocking(false)?;
        match r {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Err(e) => Err(e).context("polling the out-of-band connection"),
        }
    }
}

fn read_full(stream: &mut TcpStream, buf: &mut [u8], peer: SocketAddr) -> Result<()> {
    let mut got = 0;
    while got < buf.len() {
        match stream.read(&mut buf[got..]) {
            Ok(0) if got == 0 => bail!("the peer {peer} closed the out-of-band connection early"),
            Ok(0) => bail!(
                "the peer {peer} closed the connection in the middle of a message \
                 ({got} of {} bytes)",
                buf.len()
            ),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                bail!("the peer {peer} did not answer within {HANDSHAKE_TIMEOUT:?}")
            }
            Err(e) => return Err(e).with_context(|| format!("reading from the peer {peer}")),
        }
    }
    Ok(())
}

/// Client side of the parameter exchange: send ours, then read the server's.
pub fn client_exchange(ch: &mut Channel, local: &Params) -> Result<Params> {
    ch.send(&Message::Params(local.clone()))?;
    ch.expect_params()
}

/// Server side of the parameter exchange: read the client's, build ours from them with
/// `respond` (which creates the QPs), then send ours. An error from `respond` is sent to the
/// client as an Abort before it is returned.
pub fn server_exchange<T>(
    ch: &mut Channel,
    respond: impl FnOnce(&Params) -> Result<(Params, T)>,
) -> Result<(Params, Params, T)> {
    let remote = ch.expect_params()?;
    match respond(&remote) {
        Ok((local, extra)) => {
            ch.send(&Message::Params(local.clone()))?;
            Ok((remote, local, extra))
        }
        Err(e) => {
            ch.abort(&format!("{e:#}"));
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::gid::Gid;
    use crate::generate::mtu::Mtu;
    use crate::generate::wire::{QpInfo, WireError};
    use std::net::IpAddr;
    use std::thread;

    fn params(qpn: u32, mtu: Mtu) -> Params {
        Params {
            mtu,
            flags: 0,
            qps: vec![QpInfo {
                qpn,
                psn: qpn + 1,
                rkey: 0x42,
                addr: 0x1000,
                len: 4096,
                gid: Gid::from_ip("127.0.0.1".parse().unwrap()),
            }],
        }
    }

    fn local_listener() -> (TcpListener, SocketAddr) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = l.local_addr().unwrap();
        (l, a)
    }

    #[test]
    fn exchange_and_barriers_over_loopback() {
        let (listener, addr) = local_listener();
        let server = thread::spawn(move || -> Result<(Params, u64)> {
            let mut ch = Channel::accept(&listener)?;
            assert_eq!(ch.peer().ip(), "127.0.0.1".parse::<IpAddr>().unwrap());
            let (remote, _local, extra) = server_exchange(&mut ch, |client| {
                assert_eq!(client.qps[0].qpn, 0x100);
                Ok((params(0x200, Mtu::M4096), 7u32))
            })?;
            assert_eq!(extra, 7);
            ch.barrier()?;
            let Message::Done { messages, bytes } = ch.expect("Done")? else {
                unreachable!()
            };
            assert_eq!(bytes, messages * 4096);
            ch.send(&Message::Done { messages, bytes })?;
            Ok((remote, messages))
        });
        let mut ch = Channel::connect(addr, Duration::from_secs(5)).unwrap();
        let server_params = client_exchange(&mut ch, &params(0x100, Mtu::M1024)).unwrap();
        assert_eq!(server_params, params(0x200, Mtu::M4096));
        ch.barrier().unwrap();
        ch.send(&Message::Done {
            messages: 3,
            bytes: 3 * 4096,
        })
        .unwrap();
        assert_eq!(
            ch.expect("Done").unwrap(),
            Message::Done {
                messages: 3,
                bytes: 3 * 4096
            }
        );
        let (client_params, n) = server.join().unwrap().unwrap();
        assert_eq!(client_params, params(0x100, Mtu::M1024));
        assert_eq!(n, 3);
    }

    #[test]
    fn server_failure_reaches_the_client_as_abort() {
        let (listener, addr) = local_listener();
        let server = thread::spawn(move || {
            let mut ch = Channel::accept(&listener).unwrap();
            server_exchange::<()>(&mut ch, |_| bail!("no RoCE v2 GID on rxe0 port 1"))
                .unwrap_err()
                .to_string()
        });
        let mut ch = Channel::connect(addr, Duration::from_secs(5)).unwrap();
        let err = client_exchange(&mut ch, &params(1, Mtu::M1024)).unwrap_err();
        let msg = format!("{err:#}");
        assert!(
            msg.contains("gave up: no RoCE v2 GID on rxe0 port 1"),
            "{msg}"
        );
        assert_eq!(server.join().unwrap(), "no RoCE v2 GID on rxe0 port 1");
    }

    #[test]
    fn early_close_and_garbage_are_errors() {
        let (listener, addr) = local_listener();
        let server = thread::spawn(move || {
            // First client: closes at once. Second: half a header. Third: perftest-like text.
            drop(listener.accept().unwrap());
            let (mut s, _) = listener.accept().unwrap();
            s.write_all(b"RcIn").unwrap();
            drop(s);
            let (mut s, _) = listener.accept().unwrap();
            s.write_all(b"0000:0000:000011:abcdef:12345678:").unwrap();
            thread::sleep(Duration::from_millis(200));
        });
        let mut ch = Channel::connect(addr, Duration::from_secs(5)).unwrap();
        let e = format!("{:#}", ch.recv().unwrap_err());
        assert!(e.contains("closed the out-of-band connection early"), "{e}");
        let mut ch = Channel::connect(addr, Duration::from_secs(5)).unwrap();
        let e = format!("{:#}", ch.recv().unwrap_err());
        assert!(e.contains("middle of a message (4 of 8 bytes)"), "{e}");
        let mut ch = Channel::connect(addr, Duration::from_secs(5)).unwrap();
        let e = ch.recv().unwrap_err();
        assert!(
            matches!(e.downcast_ref::<WireError>(), Some(WireError::BadMagic(_))),
            "{e:#}"
        );
        server.join().unwrap();
    }

    #[test]
    fn unexpected_kind_is_a_protocol_error() {
        let (listener, addr) = local_listener();
        let server = thread::spawn(move || {
            let mut ch = Channel::accept(&listener).unwrap();
            ch.send(&Message::Ready).unwrap();
            thread::sleep(Duration::from_millis(200));
        });
        let mut ch = Channel::connect(addr, Duration::from_secs(5)).unwrap();
        let e = format!("{:#}", ch.expect_params().unwrap_err());
        assert!(e.contains("sent Ready where Params was expected"), "{e}");
        server.join().unwrap();
    }

    #[test]
    fn unreachable_peer() {
        // Bind then drop to find a port with (almost certainly) no listener.
        let (listener, addr) = local_listener();
        drop(listener);
        let e = format!(
            "{:#}",
            Channel::connect(addr, Duration::from_secs(5)).unwrap_err()
        );
        assert!(e.contains("cannot reach the peer at 127.0.0.1:"), "{e}");
        assert!(e.contains("--listen"), "{e}");
    }

    #[test]
    fn dual_stack_listener_accepts_ipv4_clients() {
        use crate::generate::gid::Family;
        use crate::generate::peer::family_of;
        let listener = listen(0).unwrap();
        let port = listener.local_addr().unwrap().port();
        let client = thread::spawn(move || {
            Channel::connect(
                SocketAddr::from(([127, 0, 0, 1], port)),
                Duration::from_secs(5),
            )
            .unwrap()
        });
        let ch = Channel::accept(&listener).unwrap();
        // Seen as ::ffff:127.0.0.1 on a dual-stack socket, 127.0.0.1 on an IPv4 one.
        assert_eq!(family_of(ch.peer().ip()), Family::Ipv4);
        drop(client.join().unwrap());
    }

    #[test]
    fn poll_sees_data() {
        let (listener, addr) = local_listener();
        let mut client = Channel::connect(addr, Duration::from_secs(5)).unwrap();
        let server = Channel::accept(&listener).unwrap();
        assert!(!server.poll_readable().unwrap());
        client.send(&Message::Ready).unwrap();
        let mut ok = false;
        for _ in 0..100 {
            if server.poll_readable().unwrap() {
                ok = true;
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
        assert!(ok);
    }
}
