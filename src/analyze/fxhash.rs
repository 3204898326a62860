//! The hasher of the flow table and the other per-packet maps: rustc's Fx hash, from the
//! maintained `rustc-hash` crate (a multiply-rotate hash, several times faster than SipHash on
//! the small keys used here). Flow keys come from captured packets, so a hostile capture could
//! force collisions; the tables stay correct, only slower, and `max_flows` bounds their size.

/// Fx hasher state.
pub use rustc_hash::FxHasher;

/// `BuildHasher` for [`FxHasher`].
pub type FxBuild = rustc_hash::FxBuildHasher;
