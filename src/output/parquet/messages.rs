//! The `messages` table: one row per reassembled message, the items of the `messages` array
//! of `read --summary --json --messages` with typed columns. The names follow the report
//! tables' rule ([`super::report`]: a nested object's keys joined to its key with `_`, as
//! `reth.dma_len` → `reth_dma_len`, columns in name order) and so do the types (integers
//! UInt64, flags Boolean, names Utf8), but the columns are fixed, like `packets`': a field
//! that no message of a capture has (`feth_*` without FLUSH, `request_*` without READ) is a
//! column of nulls, so that every capture's file has the same schema. The table has one row
//! per message of a long run, so it is built while the capture is read, on a writer thread
//! (no spill, no second pass).

use arrow_array::{BooleanArray, RecordBatch, UInt64Array};
use arrow_schema::{ArrowError, DataType, SchemaRef};

use super::Constants;
use super::columns::{Texts, part_if};
use crate::analyze::message::Message;

// The parts of a message whose columns are null without them (`only` in `columns!`).
const IMM: u32 = 1;
const RETH: u32 = 1 << 1;
const FETH: u32 = 1 << 2;
/// READ requests and re-issues (`request_*`, `read_latency_ns`, `reissue_frame`).
const READ: u32 = 1 << 3;

/// The parts (`IMM`, `RETH`, …) message `m` has.
fn parts(m: &Message) -> u32 {
    part_if(m.imm_data.is_some(), IMM)
        | part_if(m.reth.is_some(), RETH)
        | part_if(m.feth.is_some(), FETH)
        | part_if(
            m.request_frame.is_some()
                || m.request_ts_ns.is_some()
                || m.read_latency_ns.is_some()
                || m.reissue_frame.is_some(),
            READ,
        )
}

columns! {
    rows: Message;
    bytes: UInt64Array = DataType::UInt64, false, |m| Some(m.bytes);
    complete: BooleanArray = DataType::Boolean, false, |m| Some(m.complete);
    dma_len_mismatch: BooleanArray = DataType::Boolean, false, |m| Some(m.dma_len_mismatch);
    duration_ns: UInt64Array = DataType::UInt64, false, |m| Some(m.duration_ns);
    end_ts_ns: UInt64Array = DataType::UInt64, false, |m| Some(m.end_ts_ns);
    feth_placement_type: UInt64Array = DataType::UInt64, true, only FETH,
        |m| m.feth.map(|f| u64::from(f.placement_type));
    feth_selectivity: UInt64Array = DataType::UInt64, true, only FETH,
        |m| m.feth.map(|f| u64::from(f.selectivity));
    first_frame: UInt64Array = DataType::UInt64, false, |m| Some(m.first_frame);
    first_psn: UInt64Array = DataType::UInt64, false, |m| Some(u64::from(m.first_psn));
    flow: UInt64Array = DataType::UInt64, false, |m| Some(m.flow as u64);
    id: UInt64Array = DataType::UInt64, false, |m| Some(m.id);
    imm_data: UInt64Array = DataType::UInt64, true, only IMM, |m| m.imm_data.map(u64::from);
    immediate: BooleanArray = DataType::Boolean, false, |m| Some(m.immediate);
    kind: Texts = DataType::Utf8, false, |m| Some(m.kind.name());
    last_frame: UInt64Array = DataType::UInt64, false, |m| Some(m.last_frame);
    last_psn: UInt64Array = DataType::UInt64, false, |m| Some(u64::from(m.last_psn));
    packets: UInt64Array = DataType::UInt64, false, |m| Some(u64::from(m.packets));
    read_latency_ns: UInt64Array = DataType::UInt64, true, only READ, |m| m.read_latency_ns;
    reissue_frame: UInt64Array = DataType::UInt64, true, only READ, |m| m.reissue_frame;
    reissues: UInt64Array = DataType::UInt64, false, |m| Some(u64::from(m.reissues));
    request_frame: UInt64Array = DataType::UInt64, true, only READ, |m| m.request_frame;
    request_ts_ns: UInt64Array = DataType::UInt64, true, only READ, |m| m.request_ts_ns;
    reth_dma_len: UInt64Array = DataType::UInt64, true, only RETH,
        |m| m.reth.map(|r| u64::from(r.dma_len));
    reth_rkey: UInt64Array = DataType::UInt64, true, only RETH,
        |m| m.reth.map(|r| u64::from(r.rkey));
    reth_va: UInt64Array = DataType::UInt64, true, only RETH, |m| m.reth.map(|r| r.va);
    start_ts_ns: UInt64Array = DataType::UInt64, false, |m| Some(m.start_ts_ns);
    status: Texts = DataType::Utf8, false, |m| Some(m.status.name());
}

/// The `messages` table's Arrow schema: `capture`, `host`, then the message's columns.
pub fn schema() -> SchemaRef {
    super::table_schema(fields())
}

/// `msgs` as a record batch of `schema` (from [`schema`]), after the
/// `capture` and `host` columns of `constants`.
///
/// # Errors
/// Arrow's error if the columns disagree with the schema (a bug).
pub fn batch(
    schema: &SchemaRef,
    msgs: &[Message],
    constants: &mut Constants,
) -> Result<RecordBatch, ArrowError> {
    let present = msgs.iter().fold(0, |m, x| m | parts(x));
    super::table_batch(schema, constants, msgs.len(), arrays(msgs, present))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::message::{FethInfo, MessageKind, MessageStatus, RethInfo};
    use crate::output::parquet::flat::{Leaf, flatten};
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    use arrow_array::types::UInt64Type;

    /// A message with every optional field set (so that every key has a value in JSON).
    fn full() -> Message {
        Message {
            id: 11,
            flow: 3,
            kind: MessageKind::Read,
            immediate: true,
            imm_data: Some(0xdead_beef),
            first_psn: 0xff_fffe,
            last_psn: 1,
            first_frame: 10,
            last_frame: 14,
            packets: 4,
            bytes: 4096,
            start_ts_ns: 1_700_000_000_000_000_001,
            end_ts_ns: 1_700_000_000_000_000_901,
            duration_ns: 900,
            reth: Some(RethInfo {
                va: 0xffff_0000_1234_5678,
                rkey: 0x8000_0001,
                dma_len: 4097,
            }),
            dma_len_mismatch: true,
            request_frame: Some(9),
            request_ts_ns: Some(1_700_000_000_000_000_000),
            read_latency_ns: Some(901),
            complete: false,
            status: MessageStatus::NakRemoteAccess,
            feth: Some(FethInfo {
                selectivity: 2,
                placement_type: 9,
            }),
            reissues: 2,
            reissue_frame: Some(12),
        }
    }

    /// Check the batch of `msgs` against each message's flattened JSON form.
    fn check_batch(msgs: &[Message]) {
        let b = batch(&schema(), msgs, &mut Constants::new("c.pcap", "h")).unwrap();
        let cell = |name: &str, row: usize| -> String {
            let col = b.column_by_name(name).unwrap();
            if col.is_null(row) {
                return "Null".to_string();
            }
            match col.data_type() {
                DataType::UInt64 => format!("U64({})", col.as_primitive::<UInt64Type>().value(row)),
                DataType::Boolean => format!("Bool({})", col.as_boolean().value(row)),
                DataType::Utf8 => format!("Str({:?})", col.as_string::<i32>().value(row)),
                t => panic!("{name}: unexpected type {t}"),
            }
        };
        let names: Vec<String> = b.schema().fields()[2..]
            .iter()
            .map(|f| f.name().clone())
            .collect();
        for (row, m) in msgs.iter().enumerate() {
            let mut leaves = Vec::new();
            let mut path = String::new();
            flatten(m, &mut path, &mut |name: &str, l: Leaf<'_>| {
                leaves.push((name.to_string(), format!("{l:?}")));
            })
            .unwrap();
            leaves.sort();
            if m.reth.is_some() && m.feth.is_some() && m.imm_data.is_some() {
                let want: Vec<&String> = leaves.iter().map(|(n, _)| n).collect();
                assert_eq!(names.iter().collect::<Vec<_>>(), want);
            }
            for (name, leaf) in &leaves {
                if names.contains(name) {
                    assert_eq!(&cell(name, row), leaf, "row {row} column {name}");
                } else {
                    // An object that is null in JSON: its columns are null.
                    assert_eq!(leaf, "Null", "row {row}: {name} has no column");
                    let prefix = format!("{name}_");
                    let cols: Vec<_> = names.iter().filter(|n| n.starts_with(&prefix)).collect();
                    assert!(!cols.is_empty(), "{name}: no columns");
                    for c in cols {
                        assert_eq!(cell(c, row), "Null", "row {row} column {c}");
                    }
                }
            }
        }
    }

    /// The columns are those the report tables' flattening gives the message's JSON form
    /// (serde's, independent of the macro above), in name order, with the types it infers and
    /// the same values; a message without its optional parts has nulls there.
    #[test]
    fn columns_are_the_flattened_json_of_a_message() {
        let mut bare = full();
        bare.imm_data = None;
        bare.reth = None;
        bare.feth = None;
        bare.request_frame = None;
        bare.request_ts_ns = None;
        bare.read_latency_ns = None;
        bare.reissue_frame = None;
        // Every optional part alone, none, all: each message in a batch of its own (so that
        // the columns of parts it lacks are made as nulls at once) and all in one batch.
        let f = full();
        let mut msgs = vec![f, bare];
        for set in 0..7 {
            let mut m = bare;
            match set {
                0 => m.imm_data = f.imm_data,
                1 => m.reth = f.reth,
                2 => m.feth = f.feth,
                3 => m.request_frame = f.request_frame,
                4 => m.request_ts_ns = f.request_ts_ns,
                5 => m.read_latency_ns = f.read_latency_ns,
                _ => m.reissue_frame = f.reissue_frame,
            }
            msgs.push(m);
        }
        let mut batches: Vec<Vec<Message>> = msgs.iter().map(|m| vec![*m]).collect();
        batches.push(msgs.clone());
        for msgs in &batches {
            check_batch(msgs);
        }
        let b = batch(&schema(), &msgs, &mut Constants::new("c.pcap", "h")).unwrap();
        let col = |n: &str| b.column_by_name(n).unwrap().clone();
        assert_eq!(col("capture").as_string::<i32>().value(1), "c.pcap");
        assert_eq!(col("host").as_string::<i32>().value(0), "h");
        assert!(col("feth_selectivity").is_null(1));
    }
}
