//! ICRC verification on the real captures, at the library level.
//!
//! * Every RoCEv2 frame in `../shared/captures/real` has ICRC `good` (the captures README states
//!   that every one of them carries a valid ICRC; they come from Soft-RoCE, which computes it
//!   in software per spec §4).
//! * Flipping a bit of any byte of the invariant part (spec §4: IP header except TOS, TTL and
//!   checksum; UDP header except checksum; BTH except byte 4; extended headers, payload, pad and
//!   the ICRC itself) never leaves it `good`; for all but the few bytes whose change alters how
//!   the packet is parsed, every flip gives `bad`.
//! * Every complete RoCEv2 frame of the derived (re-framed) and synthetic captures is `good`;
//!   frames cut by the snap length are `unchecked`, never `bad`.
//! * Flipping the variant fields (TTL, ECN bits, DSCP, IP checksum, UDP checksum, BTH FECN,
//!   BECN and Resv6a) or the Ethernet addresses keeps it `good`.
//!
//! The byte offsets here are computed by the test from the Ethernet/IPv4/UDP layout, not taken
//! from the decoder.

use std::path::{Path, PathBuf};

use roce_inspect::decode::{
    DecodeConfig, Ecn, Frame, IcrcStatus, LinkType, RocePacket, RoceVersion, UncheckedReason,
    decode_frame,
};

mod common;

/// The bundled samples whose RoCE frames a switch mirrored in a tunnel (ERSPAN, VXLAN): not
/// RoCEv2 over IPv4 at the frame's start, so not among the frames checked here.
const MIRRORED: [&str; 3] = ["erspan.pcap", "erspan3.pcap", "vxlan.pcap"];

/// The bundled samples of untagged RoCEv2 over IPv4 (always), then the real captures of
/// `../shared/captures/real` when they are there (otherwise one `skipped:` line is printed).
fn real_files() -> Vec<PathBuf> {
    let list = |d: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "pcap" || x == "pcapng"))
            .collect();
        v.sort();
        v
    };
    let mut v = list(&Path::new(env!("CARGO_MANIFEST_DIR")).join("samples"));
    v.retain(|p| {
        p.extension().is_some_and(|x| x == "pcap") && !MIRRORED.iter().any(|m| p.ends_with(m))
    });
    assert!(v.len() >= 3, "only {} samples", v.len());
    if let Some(dir) = common::captures_dir() {
        let real = list(&dir.join("real"));
        assert!(real.len() >= 16, "only {} real captures", real.len());
        v.extend(real);
    }
    v
}

/// (bytes, original length) of every frame of `path`.
fn frames(path: &Path) -> Vec<(Vec<u8>, u32)> {
    let mut cap = pcap::Capture::from_file(path).unwrap();
    assert_eq!(cap.get_datalink().0, 1, "{}: not Ethernet", path.display());
    let mut out = Vec::new();
    loop {
        match cap.next_packet() {
            Ok(p) => out.push((p.data.to_vec(), p.header.len)),
            Err(pcap::Error::NoMorePackets) => break,
            Err(e) => panic!("{}: {e}", path.display()),
        }
    }
    out
}

fn decode<'a>(b: &'a [u8], len: u32, cfg: &DecodeConfig) -> Frame<'a> {
    decode_frame(LinkType::ETHERNET, b, len, cfg)
}

fn roce<'a>(f: &Frame<'a>) -> Option<RocePacket<'a>> {
    f.roce().copied()
}

/// Offsets of an untagged Ethernet / IPv4 / UDP-to-4791 frame, computed by hand.
#[derive(Clone, Copy, Debug)]
struct Layout {
    ip: usize,
    udp: usize,
    bth: usize,
    /// End of the IP datagram (Ethernet padding, if any, follows).
    end: usize,
}

fn layout(b: &[u8]) -> Option<Layout> {
    if b.len() < 14 + 20 || b[12..14] != [0x08, 0x00] || b[14] >> 4 != 4 || b[14 + 9] != 17 {
        return None;
    }
    let ip = 14;
    let ihl = (b[ip] & 0x0f) as usize * 4;
    let udp = ip + ihl;
    let total = u16::from_be_bytes([b[ip + 2], b[ip + 3]]) as usize;
    if u16::from_be_bytes([b[udp + 2], b[udp + 3]]) != 4791 {
        return None;
    }
    Some(Layout {
        ip,
        udp,
        bth: udp + 8,
        end: ip + total,
    })
}

#[test]
fn every_real_rocev2_frame_has_a_good_icrc() {
    let cfg = DecodeConfig::default();
    let mut total = 0;
    for f in real_files() {
        let mut in_file = 0;
        for (i, (b, len)) in frames(&f).iter().enumerate() {
            let fr = decode(b, *len, &cfg);
            let by_hand = layout(b).is_some();
            let Some(p) = roce(&fr) else {
                assert!(
                    !by_hand,
                    "{} frame {}: UDP 4791 not decoded",
                    f.display(),
                    i + 1
                );
                continue;
            };
            assert!(
                by_hand,
                "{} frame {}: RoCE per decoder only",
                f.display(),
                i + 1
            );
            assert_eq!(p.version, RoceVersion::V2);
            assert!(p.malformed.is_none() && !p.truncated);
            assert_eq!(
                p.icrc.status,
                IcrcStatus::Good,
                "{} frame {}: {:?}",
                f.display(),
                i + 1,
                p.icrc
            );
            // The value is the last 4 bytes of the IP datagram, read LSB first (spec §4).
            let l = layout(b).unwrap();
            let wire = u32::from_le_bytes(b[l.end - 4..l.end].try_into().unwrap());
            assert_eq!(p.icrc.value, Some(wire));
            assert_eq!(p.icrc.expected, Some(wire));
            in_file += 1;
        }
        assert!(in_file > 0, "{}: no RoCEv2 frame", f.display());
        total += in_file;
    }
    // Every frame of the IPv4 samples is RoCEv2 (the scenarios wrote them), and 1099 RoCEv2
    // frames are in the 16 real captures (tshark agrees, see tshark_diff.rs).
    let samples: usize = roce_inspect::synth::scenario::samples()
        .iter()
        .filter(|s| s.file.ends_with(".pcap") && !MIRRORED.contains(&s.file))
        .map(|s| s.records.len())
        .sum();
    let real = if common::captures_root().is_dir() {
        1099
    } else {
        0
    };
    assert_eq!(total, samples + real);
}

/// One frame per (file, opcode, pad count): every header layout the captures contain.
fn sample_frames() -> Vec<(String, Vec<u8>, u32)> {
    let cfg = DecodeConfig::default();
    let mut out = Vec::new();
    for f in real_files() {
        let mut seen = std::collections::BTreeSet::new();
        for (i, (b, len)) in frames(&f).into_iter().enumerate() {
            let key = match roce(&decode(&b, len, &cfg)).and_then(|p| p.bth) {
                Some(bth) => (bth.opcode.0, bth.pad),
                None => continue,
            };
            if seen.insert(key) {
                let name = format!(
                    "{} frame {} (opcode {:#04x})",
                    f.file_name().unwrap().to_string_lossy(),
                    i + 1,
                    key.0
                );
                out.push((name, b, len));
            }
        }
    }
    out
}

/// Bytes whose change alters how the packet is parsed (layout, protocol, lengths), relative to
/// the IP, UDP or BTH start. A flip there must still never be `good`, but need not be `bad`:
/// the packet may stop being RoCE, or become malformed with an unchecked ICRC.
fn structural(l: &Layout, i: usize) -> Option<&'static str> {
    let rel = |base: usize, n: usize| i >= base && i < base + n;
    if i == l.ip {
        Some("IPv4 version/IHL")
    } else if rel(l.ip + 2, 2) {
        Some("IPv4 total length")
    } else if rel(l.ip + 6, 2) {
        Some("IPv4 flags/fragment offset")
    } else if i == l.ip + 9 {
        Some("IPv4 protocol")
    } else if rel(l.udp + 4, 2) {
        Some("UDP length")
    } else if rel(l.bth, 2) {
        Some("BTH opcode / SE M PadCnt TVer")
    } else {
        None
    }
}

fn is_variant(l: &Layout, i: usize) -> bool {
    i == l.ip + 1 // TOS: DSCP + ECN
        || i == l.ip + 8 // TTL
        || i == l.ip + 10 || i == l.ip + 11 // IPv4 header checksum
        || i == l.udp + 6 || i == l.udp + 7 // UDP checksum
        || i == l.bth + 4 // FECN, BECN, Resv6a
}

#[test]
fn flipping_an_invariant_byte_makes_the_icrc_bad() {
    let samples = sample_frames();
    let want = if common::captures_root().is_dir() {
        30
    } else {
        10
    };
    assert!(
        samples.len() >= want,
        "only {} sample frames",
        samples.len()
    );
    let mut flips = 0u64;
    let mut structural_bad = 0u64;
    for (name, orig, len) in &samples {
        let l = layout(orig).unwrap();
        let good = roce(&decode(orig, *len, &DecodeConfig::default()))
            .unwrap()
            .icrc
            .value
            .unwrap();
        for i in l.ip..l.end {
            if is_variant(&l, i) {
                continue;
            }
            for bit in 0..8 {
                let mut b = orig.clone();
                b[i] ^= 1 << bit;
                // A flipped UDP destination port is no longer 4791: decode it as RoCE anyway
                // with --roce-port semantics, so that the port's coverage is tested too.
                let dport = u16::from_be_bytes([b[l.udp + 2], b[l.udp + 3]]);
                let cfg = DecodeConfig::with_ports(&[dport]);
                let fr = decode(&b, *len, &cfg);
                let p = roce(&fr);
                let status = p.map(|p| p.icrc.status);
                assert_ne!(
                    status,
                    Some(IcrcStatus::Good),
                    "{name}: byte {i} bit {bit} flipped, ICRC still good"
                );
                if status == Some(IcrcStatus::Bad) {
                    let p = p.unwrap();
                    if i >= l.end - 4 {
                        // The ICRC itself: the expected value is unchanged, the found one flipped.
                        assert_eq!(p.icrc.expected, Some(good), "{name}: byte {i}");
                        let k = i - (l.end - 4);
                        assert_eq!(p.icrc.value, Some(good ^ (1u32 << (8 * k + bit))));
                    }
                    if structural(&l, i).is_some() {
                        structural_bad += 1;
                    }
                } else {
                    // Only a structural byte may turn the packet into something whose ICRC
                    // cannot be checked: not RoCE any more, malformed, longer than captured, or
                    // a manufacturer-specific opcode (0xC0-0xFF, undecoded by design).
                    let checkable = p.is_some_and(|p| {
                        p.malformed.is_none()
                            && !p.truncated
                            && p.icrc.status != IcrcStatus::Unchecked(UncheckedReason::NoRule)
                    });
                    assert!(
                        structural(&l, i).is_some() && !checkable,
                        "{name}: byte {i} (offset {} from BTH) bit {bit} flipped: ICRC {status:?}, \
                         expected Bad",
                        i as isize - l.bth as isize
                    );
                }
                flips += 1;
            }
        }
    }
    // Many flips of the structural bytes keep the packet well-formed (a length one bit
    // shorter, another opcode with the same layout, SE or M toggled) and were caught.
    // About 12 per sample frame (146 over the samples' 12 layouts; 500+ with the real ones).
    assert!(
        structural_bad >= 10 * samples.len() as u64,
        "only {structural_bad} structural flips gave bad over {} frames",
        samples.len()
    );
    eprintln!(
        "{} frames, {flips} flips, {structural_bad} structural flips bad",
        samples.len()
    );
}

#[test]
fn flipping_variant_fields_keeps_the_icrc_good() {
    let cfg = DecodeConfig::default();
    for (name, orig, len) in sample_frames() {
        let l = layout(&orig).unwrap();
        let mut cases: Vec<(&str, usize, u8)> = vec![
            ("TTL", l.ip + 8, 0xff),
            ("TTL low bit", l.ip + 8, 0x01),
            ("ECN -> CE", l.ip + 1, 0x03),
            ("ECN bit 0", l.ip + 1, 0x01),
            ("ECN bit 1", l.ip + 1, 0x02),
            ("DSCP", l.ip + 1, 0xfc),
            ("DSCP low bit", l.ip + 1, 0x04),
            ("IP checksum hi", l.ip + 10, 0xff),
            ("IP checksum lo", l.ip + 11, 0x5a),
            ("UDP checksum hi", l.udp + 6, 0xa5),
            ("UDP checksum lo", l.udp + 7, 0xff),
            ("BTH FECN", l.bth + 4, 0x80),
            ("BTH BECN", l.bth + 4, 0x40),
            ("BTH FECN+BECN", l.bth + 4, 0xc0),
            ("BTH Resv6a", l.bth + 4, 0x3f),
        ];
        for i in 0..12 {
            cases.push(("Ethernet address", i, 0xff));
        }
        let orig_p = roce(&decode(&orig, len, &cfg)).unwrap();
        for (what, i, mask) in cases {
            let mut b = orig.clone();
            b[i] ^= mask;
            let fr = decode(&b, len, &cfg);
            let p = roce(&fr).unwrap_or_else(|| panic!("{name}: {what}: not RoCE"));
            assert_eq!(
                p.icrc.status,
                IcrcStatus::Good,
                "{name}: {what} flipped: {:?}",
                p.icrc
            );
            assert_eq!(p.icrc.value, orig_p.icrc.value);
            let bth = p.bth.unwrap();
            let ob = orig_p.bth.unwrap();
            // The decoder must still see the flipped variant bits themselves.
            if i == l.bth + 4 {
                assert_eq!(bth.fecn, ob.fecn ^ (mask & 0x80 != 0), "{name}: {what}");
                assert_eq!(bth.becn, ob.becn ^ (mask & 0x40 != 0), "{name}: {what}");
            }
            if i == l.ip + 1 && mask == 0x03 {
                // Flipping both ECN bits: Not-ECT (00) ↔ CE (11), ECT(0) (10) ↔ ECT(1) (01).
                let want = match orig_p.ecn {
                    Some(Ecn::NotEct) => Ecn::Ce,
                    Some(Ecn::Ce) => Ecn::NotEct,
                    Some(Ecn::Ect0) => Ecn::Ect1,
                    Some(Ecn::Ect1) => Ecn::Ect0,
                    None => panic!("{name}: no ECN"),
                };
                assert_eq!(p.ecn, Some(want), "{name}");
            }
            if i == l.ip + 8 {
                assert_eq!(p.hop_limit, Some(orig[i] ^ mask));
            }
        }
    }
}

/// (bytes, original length) and the link type of every frame of any capture libpcap reads.
fn frames_any(path: &Path) -> (LinkType, Vec<(Vec<u8>, u32)>) {
    let mut cap = pcap::Capture::from_file(path).unwrap();
    let lt = LinkType::from_dlt(cap.get_datalink().0);
    let mut out = Vec::new();
    loop {
        match cap.next_packet() {
            Ok(p) => out.push((p.data.to_vec(), p.header.len)),
            Err(pcap::Error::NoMorePackets) => break,
            Err(e) => panic!("{}: {e}", path.display()),
        }
    }
    (lt, out)
}

/// The derived variants keep the RoCE bytes unchanged (captures README), so every complete
/// RoCEv2 frame is `good` whatever the framing (pcapng, Linux cooked v1/v2, 802.1Q, QinQ);
/// the snap-length-cut ones are `unchecked` because truncated, never `bad`. The synthetic
/// capture's README says all its ICRCs are valid (CE marks, CNPs with BECN included).
#[test]
fn derived_and_synthetic_icrcs() {
    need_shared!();
    let base = common::captures_root().display().to_string();
    let cfg = DecodeConfig::default();
    let mut files: Vec<PathBuf> = std::fs::read_dir(format!("{base}/derived"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.push(format!("{base}/synthetic/loss_ce_read.pcap").into());
    files.sort();
    assert!(files.len() >= 8);
    for f in files {
        let (lt, frames) = frames_any(&f);
        let (mut good, mut cut) = (0, 0);
        for (i, (b, len)) in frames.iter().enumerate() {
            let fr = decode_frame(lt, b, *len, &cfg);
            let Some(p) = fr.roce() else { continue };
            let what = format!("{} frame {}", f.display(), i + 1);
            assert!(p.malformed.is_none(), "{what}: {:?}", p.malformed);
            if (b.len() as u32) < *len {
                assert!(p.truncated, "{what}");
                assert_eq!(
                    p.icrc.status,
                    IcrcStatus::Unchecked(UncheckedReason::Truncated),
                    "{what}"
                );
                cut += 1;
            } else {
                assert!(!p.truncated, "{what}");
                assert_eq!(p.icrc.status, IcrcStatus::Good, "{what}: {:?}", p.icrc);
                good += 1;
            }
        }
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        if name.contains("snap") {
            assert!(cut > 0, "{name}: no frame cut by the snap length");
        } else {
            assert_eq!(cut, 0, "{name}");
        }
        assert!(good > 0, "{name}: no good ICRC");
    }
}
