//! `--mirror-time`: capture times from ERSPAN type III hardware timestamps instead of the
//! collector's clock (draft-foschiano-erspan-03 §4.2: 32-bit timestamp, granularity 0 =
//! 100 µs, 1 = 100 ns, 2 = IEEE 1588, 3 = user-configured; the platform-specific subheader of
//! platform IDs 0, 3, 5, 6, 7 carries the upper 32 bits, seconds for IEEE 1588, as Wireshark's
//! `packet-erspan.c` reads them).
//!
//! - IEEE 1588 with the seconds word: absolute, `seconds × 10⁹ + ns`.
//! - IEEE 1588 without it: the ns within the second, placed in the second nearest to the
//!   capture time.
//! - 100 µs / 100 ns ticks (64-bit with the upper word, else 32-bit and unwrapped across
//!   frames): a free-running counter with no epoch, so each mirror engine's counter is anchored
//!   at the capture time of its first frame and advances by its own ticks from there.
//! - User-configured units are unknown: the capture time stays.

use super::{EncapLayer, Erspan3};
use crate::decode::Address;

/// Most mirror engines (outer source address, hardware ID, granularity) tracked; frames of
/// further engines keep their capture time.
pub const MAX_ENGINES: usize = 64;

const NS: u64 = 1_000_000_000;

/// One mirror engine's counter.
#[derive(Clone, Copy, Debug)]
struct Engine {
    key: (Address, u8, u8),
    /// Capture time (ns) and extended tick count of the engine's first frame.
    anchor: (u64, u64),
    /// Extended tick count of the engine's latest frame.
    last: u64,
}

/// Converts ERSPAN III timestamps to ns since the Unix epoch; bounded memory.
#[derive(Clone, Debug, Default)]
pub struct MirrorClock {
    engines: Vec<Engine>,
    /// Frames whose time came from the mirror.
    pub used: u64,
    /// ERSPAN III frames that kept the capture time (user-configured granularity, a bad
    /// IEEE 1588 ns value, too many engines).
    pub kept: u64,
}

impl MirrorClock {
    /// A clock with no engine seen yet.
    pub fn new() -> MirrorClock {
        MirrorClock::default()
    }

    /// The time (ns since the epoch) for a frame mirrored by `layer` with ERSPAN III header `e`,
    /// captured at `capture_ns`; `capture_ns` itself when the timestamp is not usable.
    pub fn time_ns(&mut self, layer: &EncapLayer, e: &Erspan3, capture_ns: u64) -> u64 {
        match self.convert(layer, e, capture_ns) {
            Some(t) => {
                self.used += 1;
                t
            }
            None => {
                self.kept += 1;
                capture_ns
            }
        }
    }

    fn convert(&mut self, layer: &EncapLayer, e: &Erspan3, capture_ns: u64) -> Option<u64> {
        let upper = e.timestamp_upper();
        let unit = match e.granularity {
            0 => 100_000,
            1 => 100,
            2 => return ieee1588(e.timestamp, upper, capture_ns),
            _ => return None,
        };
        let key = (layer.src, e.hw_id, e.granularity);
        let pos = match self.engines.iter().position(|g| g.key == key) {
            Some(p) => p,
            None if self.engines.len() < MAX_ENGINES => {
                let t = ticks(e.timestamp, upper, None);
                self.engines.push(Engine {
                    key,
                    anchor: (capture_ns, t),
                    last: t,
                });
                self.engines.len() - 1
            }
            None => return None,
        };
        let g = &mut self.engines[pos];
        let t = ticks(e.timestamp, upper, Some(g.last));
        g.last = t;
        let delta = (i128::from(t) - i128::from(g.anchor.1)) * unit;
        u64::try_from(i128::from(g.anchor.0) + delta).ok()
    }
}

/// IEEE 1588: `lower` is ns within the second (< 10⁹), `upper` the seconds.
fn ieee1588(lower: u32, upper: Option<u32>, capture_ns: u64) -> Option<u64> {
    let ns = u64::from(lower);
    if ns >= NS {
        return None;
    }
    if let Some(s) = upper {
        return Some(u64::from(s) * NS + ns);
    }
    let s = capture_ns / NS;
    [s.saturating_sub(1), s, s + 1]
        .into_iter()
        .map(|s| s * NS + ns)
        .min_by_key(|t| t.abs_diff(capture_ns))
}

/// The extended tick count: 64-bit from the two words, else the 32-bit count unwrapped to the
/// value nearest `last`.
fn ticks(lower: u32, upper: Option<u32>, last: Option<u64>) -> u64 {
    if let Some(u) = upper {
        return (u64::from(u) << 32) | u64::from(lower);
    }
    let Some(last) = last else {
        return u64::from(lower);
    };
    let base = last & !0xffff_ffff;
    let c = base | u64::from(lower);
    if c + (1 << 31) < last {
        c + (1 << 32)
    } else if c > last + (1 << 31) && base > 0 {
        c - (1 << 32)
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::super::{EncapKind, GreInfo};
    use super::*;

    fn e3(timestamp: u32, granularity: u8, subheader: Option<(u32, u32)>) -> Erspan3 {
        Erspan3 {
            vlan: 0,
            cos: 0,
            bso: 0,
            truncated: false,
            session: 1,
            timestamp,
            sgt: 0,
            pdu: true,
            frame_type: 0,
            hw_id: 1,
            egress: false,
            granularity,
            subheader,
        }
    }

    fn layer(e: Erspan3) -> EncapLayer {
        let gre = GreInfo {
            protocol: 0x22eb,
            checksum: None,
            key: None,
            seq: Some(0),
        };
        EncapLayer {
            src: Address::V4([10, 0, 0, 1]),
            dst: Address::V4([10, 0, 0, 2]),
            kind: EncapKind::Erspan3(gre, e),
        }
    }

    fn at(c: &mut MirrorClock, e: Erspan3, capture: u64) -> u64 {
        c.time_ns(&layer(e), &e, capture)
    }

    #[test]
    fn ieee1588_with_seconds_is_absolute() {
        let mut c = MirrorClock::new();
        // Platform ID 5: seconds in the second word.
        let e = e3(123_456_789, 2, Some((5 << 26, 1_700_000_000)));
        assert_eq!(at(&mut c, e, 42), 1_700_000_000 * NS + 123_456_789);
        assert_eq!((c.used, c.kept), (1, 0));
    }

    #[test]
    fn ieee1588_without_seconds_takes_the_nearest_second() {
        let mut c = MirrorClock::new();
        // Captured 0.1 s after the second boundary; the mirror stamped 0.95 s into the
        // previous second.
        let e = e3(950_000_000, 2, None);
        assert_eq!(
            at(&mut c, e, 1_000 * NS + 100_000_000),
            999 * NS + 950_000_000
        );
        let bad = e3(1_000_000_000, 2, None);
        assert_eq!(at(&mut c, bad, 7), 7);
        assert_eq!(c.kept, 1);
    }

    #[test]
    fn ticks_anchor_at_first_capture_and_unwrap() {
        let mut c = MirrorClock::new();
        // 100 ns ticks near the 32-bit wrap: +10 ticks across the wrap is +1 µs.
        assert_eq!(at(&mut c, e3(0xffff_fffb, 1, None), 5 * NS), 5 * NS);
        assert_eq!(at(&mut c, e3(5, 1, None), 9 * NS), 5 * NS + 1_000);
        // 100 µs ticks on another engine granularity: own anchor.
        assert_eq!(at(&mut c, e3(10, 0, None), 7 * NS), 7 * NS);
        assert_eq!(at(&mut c, e3(12, 0, None), 8 * NS), 7 * NS + 200_000);
        // A slightly earlier stamp (reordered mirror copies) goes back in time.
        assert_eq!(at(&mut c, e3(3, 1, None), 0), 5 * NS + 800);
    }

    #[test]
    fn custom_granularity_keeps_capture_time() {
        let mut c = MirrorClock::new();
        assert_eq!(at(&mut c, e3(1, 3, None), 77), 77);
    }

    #[test]
    fn unwrap_helper() {
        assert_eq!(ticks(1, None, Some(0xffff_fff0)), 0x1_0000_0001);
        assert_eq!(ticks(0xffff_fff0, None, Some(0x1_0000_0001)), 0xffff_fff0);
        assert_eq!(ticks(7, Some(2), None), (2 << 32) | 7);
    }
}
