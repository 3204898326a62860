//! The `gaps` table: one row per gap event, the items of the `gaps` array of `read --summary
//! --json`. Names and types follow the report tables' rule ([`super::report`]: `nak.frame` →
//! `nak_frame`, integers UInt64, names Utf8, columns in name order), but the columns are fixed,
//! like `messages`': a capture whose gaps have no NAK, retransmission or covering ACK (or that
//! has no gap at all) still has those columns, null, so that every capture's file has the same
//! schema and a folder of many hosts' exports reads as one table without `union_by_name`.

use arrow_array::{RecordBatch, UInt64Array};
use arrow_schema::{ArrowError, DataType, SchemaRef};

use super::Constants;
use super::columns::{Texts, part_if};
use crate::analyze::report::GapReport;

// The parts of a gap whose columns are null without them (`only` in `columns!`).
const NAK: u32 = 1;
const RETX: u32 = 1 << 1;
const ACK: u32 = 1 << 2;

/// The parts (`NAK`, `RETX`, `ACK`) gap `g` has.
fn parts(g: &GapReport) -> u32 {
    part_if(g.nak.is_some(), NAK)
        | part_if(g.retransmission.is_some(), RETX)
        | part_if(g.ack_frame.is_some(), ACK)
}

columns! {
    rows: GapReport;
    ack_frame: UInt64Array = DataType::UInt64, true, only ACK, |g| g.ack_frame;
    expected_psn: UInt64Array = DataType::UInt64, false, |g| Some(u64::from(g.expected_psn));
    flow: UInt64Array = DataType::UInt64, false, |g| Some(g.flow as u64);
    frame: UInt64Array = DataType::UInt64, false, |g| Some(g.frame);
    missing: UInt64Array = DataType::UInt64, false, |g| Some(u64::from(g.missing));
    nak_delay_ns: UInt64Array = DataType::UInt64, true, only NAK, |g| g.nak.and_then(|n| n.delay_ns);
    nak_frame: UInt64Array = DataType::UInt64, true, only NAK, |g| g.nak.map(|n| n.frame);
    nak_ts_ns: UInt64Array = DataType::UInt64, true, only NAK, |g| g.nak.map(|n| n.ts_ns);
    received_psn: UInt64Array = DataType::UInt64, false, |g| Some(u64::from(g.received_psn));
    retransmission_delay_ns: UInt64Array = DataType::UInt64, true, only RETX,
        |g| g.retransmission.and_then(|r| r.delay_ns);
    retransmission_frame: UInt64Array = DataType::UInt64, true, only RETX,
        |g| g.retransmission.map(|r| r.frame);
    retransmission_trigger: Texts = DataType::Utf8, true, only RETX,
        |g| g.retransmission.map(|r| r.trigger.name());
    retransmission_ts_ns: UInt64Array = DataType::UInt64, true, only RETX,
        |g| g.retransmission.map(|r| r.ts_ns);
    space: Texts = DataType::Utf8, false, |g| Some(g.space.name());
    ts_ns: UInt64Array = DataType::UInt64, false, |g| Some(g.ts_ns);
    verdict: Texts = DataType::Utf8, false, |g| Some(g.verdict.name());
}

/// The `gaps` table's Arrow schema: `capture`, `host`, then the gap's columns.
pub fn schema() -> SchemaRef {
    super::table_schema(fields())
}

/// `gaps` as a record batch of `schema` (from [`schema`]), after the `capture` and `host`
/// columns of `constants`.
///
/// # Errors
/// Arrow's error if the columns disagree with the schema (a bug).
pub fn batch(
    schema: &SchemaRef,
    gaps: &[GapReport],
    constants: &mut Constants,
) -> Result<RecordBatch, ArrowError> {
    let present = gaps.iter().fold(0, |m, g| m | parts(g));
    super::table_batch(schema, constants, gaps.len(), arrays(gaps, present))
}
