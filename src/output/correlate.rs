//! The text report of `correlate`: report tables ([`crate::output::fit`]), times in UTC, delays
//! in µs.

use std::io::{self, Write};

use super::fit::{Cell, Grid, right};
use crate::correlate::report::{CorruptRow, LinkRow, PacketRow, Report};
use crate::correlate::stats::DelaySummary;
use crate::decode::Opcode;

/// A count, red when non-zero.
fn bad(v: u64) -> Cell {
    crate::output::fit::num(v, true)
}

/// `ns` since the epoch as `YYYY-MM-DD hh:mm:ss.ffffff` UTC (civil-from-days, H. Hinnant's
/// algorithm).
pub fn utc(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let frac = ns.rem_euclid(1_000_000_000);
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:09}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60,
        frac
    )
}

/// ns as µs with three decimals.
pub fn us(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// How a capture is named in the tables: its file name without the folders, or the path as
/// given when two captures share a file name.
struct Names(Vec<(String, String)>);

impl Names {
    fn new(r: &Report) -> Names {
        let base = |f: &str| {
            std::path::Path::new(f)
                .file_name()
                .map_or(f.to_string(), |b| b.to_string_lossy().into_owned())
        };
        let unique = |f: &str| {
            r.captures
                .iter()
                .filter(|c| base(&c.file) == base(f))
                .count()
                == 1
        };
        Names(
            r.captures
                .iter()
                .map(|c| {
                    let shown = if unique(&c.file) {
                        base(&c.file)
                    } else {
                        c.file.clone()
                    };
                    (c.file.clone(), shown)
                })
                .collect(),
        )
    }

    fn get<'a>(&'a self, file: &'a str) -> &'a str {
        self.0
            .iter()
            .find(|(f, _)| f == file)
            .map_or(file, |(_, s)| s)
    }
}

/// Print the report at full width.
///
/// # Errors
/// Output I/O errors.
pub fn write(r: &Report, out: &mut dyn Write, color: bool) -> io::Result<()> {
    write_fit(r, out, color, None)
}

/// Columns of the captures table hidden first on a narrow terminal (issue 39).
const CAPTURES_DROP_ORDER: [&str; 4] = ["last", "± µs", "first (UTC, own clock)", "RoCE"];

/// Columns of the links table hidden first on a narrow terminal (issue 39): the delay's tail
/// before its median, then the counts that are rarely non-zero.
const LINKS_DROP_ORDER: [&str; 6] = [
    "max",
    "p99",
    "edge",
    "median",
    "corrupt",
    "upstream → downstream",
];

/// Columns of the lost / missed tables hidden first on a narrow terminal (issue 39).
const PACKETS_DROP_ORDER: [&str; 3] = ["frame", "seen in", "opcode"];

/// Columns of the corrupted table hidden first on a narrow terminal (issue 39).
const CORRUPTED_DROP_ORDER: [&str; 1] = ["opcode"];

/// Print the report fitted to a terminal `width` columns wide (`None`: full width): each table
/// hides its least important columns, saying so, or is stacked; the lines between them wrap.
///
/// # Errors
/// Output I/O errors.
pub fn write_fit(
    r: &Report,
    out: &mut dyn Write,
    color: bool,
    width: Option<u16>,
) -> io::Result<()> {
    crate::output::wrap::fitted(out, width, |out| sections(r, out, color, width))
}

/// The report's sections, in order.
fn sections(r: &Report, out: &mut dyn Write, color: bool, width: Option<u16>) -> io::Result<()> {
    let names = Names::new(r);
    crate::output::findings::write_list(
        &r.findings,
        out,
        color,
        crate::output::findings::FindingsShown::Top,
    )?;
    captures(r, out, color, width)?;
    links(r, &names, out, color, width)?;
    over_time(r, out)?;
    if !r.single_capture.is_empty() {
        let mut t = Grid::new(color, &["src → dst", "only in", "packets"]);
        for s in &r.single_capture {
            t.add_row(vec![
                Cell::new(pair(&s.src, &s.dst)),
                Cell::new(names.get(&s.file)),
                right(s.packets),
            ]);
        }
        writeln!(out, "\nPackets seen by one capture only (per direction)")?;
        t.write(out, width)?;
    }
    let list = List {
        names: &names,
        color,
        width,
    };
    packets(out, &list, "Lost on the link", &r.lost)?;
    packets(out, &list, "Missed by the upstream capture", &r.missed)?;
    corrupted(out, &list, &r.corrupted)?;
    if r.lists_truncated {
        writeln!(
            out,
            "\n(lists cut at 10000 entries; the link counts are complete)"
        )?;
    }
    Ok(())
}

fn captures(r: &Report, out: &mut dyn Write, color: bool, width: Option<u16>) -> io::Result<()> {
    let mut t = Grid::new(
        color,
        &[
            "file",
            "frames",
            "RoCE",
            "first (UTC, own clock)",
            "last",
            "offset µs",
            "± µs",
        ],
    )
    .hiding(&CAPTURES_DROP_ORDER);
    for (c, o) in r.captures.iter().zip(&r.clock_offsets) {
        let time = |v: Option<u64>| v.map_or("-".into(), |v| utc(v as i64));
        t.add_row(vec![
            Cell::new(c.file.as_str()),
            right(c.frames),
            right(c.roce),
            Cell::new(time(c.first_ns)),
            Cell::new(time(c.last_ns)),
            right(o.offset_ns.map_or("unknown".into(), |v| {
                format!("{}{}", if v >= 0 { "+" } else { "" }, us(v))
            })),
            right(o.error_ns.map_or("-".into(), us)),
        ]);
    }
    // The first capture's clock, unless it shares no traffic with the others.
    let reference = match r.clock_reference {
        0 => "the first capture's".to_string(),
        c => format!(
            "{}'s, the first of the largest group of captures that share traffic",
            r.captures[c].file
        ),
    };
    writeln!(
        out,
        "Captures (offset: this clock minus {reference}, NTP-style from packets crossing both ways)"
    )?;
    t.write(out, width)?;
    for e in r.captures.iter().filter_map(|c| c.read_error.as_deref()) {
        writeln!(out, "cut short: {e} (the frames before it are correlated)")?;
    }
    Ok(())
}

fn delay_cells(d: &Option<DelaySummary>) -> Vec<Cell> {
    match d {
        Some(d) => [d.min, d.median, d.p99, d.max]
            .map(|v| right(us(v)))
            .to_vec(),
        None => vec![right("-"), right("-"), right("-"), right("-")],
    }
}

fn links(
    r: &Report,
    names: &Names,
    out: &mut dyn Write,
    color: bool,
    width: Option<u16>,
) -> io::Result<()> {
    let mut t = Grid::new(
        color,
        &[
            "src → dst",
            "upstream → downstream",
            "matched",
            "lost",
            "missed",
            "corrupt",
            "ambiguous",
            "edge",
            "delay min µs",
            "median",
            "p99",
            "max",
        ],
    )
    .hiding(&LINKS_DROP_ORDER);
    for l in &r.links {
        let mut row = vec![
            Cell::new(link_name(l)),
            Cell::new(format!(
                "{} → {}",
                names.get(&l.upstream),
                names.get(&l.downstream)
            )),
            right(l.matched),
            bad(l.lost),
            bad(l.missed_by_upstream),
            bad(l.corrupted),
            right(l.ambiguous),
            right(l.unmatched_at_edges),
        ];
        row.extend(delay_cells(&l.one_way_delay_ns));
        t.add_row(row);
    }
    writeln!(out, "\nLinks (one row per direction seen by two captures)")?;
    t.write(out, width)
}

fn over_time(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "\nOne-way delay over time (mean µs in each tenth of the link's span)"
    )?;
    for l in &r.links {
        let Some(d) = &l.one_way_delay_ns else {
            continue;
        };
        let means: Vec<String> = d
            .over_time
            .iter()
            .map(|i| {
                i.mean
                    .map_or("-".into(), |m| format!("{:.1}", m as f64 / 1e3))
            })
            .collect();
        writeln!(out, "  {}: {}", link_name(l), means.join(" "))?;
    }
    Ok(())
}

fn link_name(l: &LinkRow) -> String {
    pair(&l.src, &l.dst)
}

fn pair(src: &str, dst: &str) -> String {
    format!("{src} → {dst}")
}

/// The columns that name a packet in the lost and corrupted tables.
const PACKET_KEY: [&str; 4] = ["src → dst", "dest QP", "PSN", "opcode"];

/// The cells of [`PACKET_KEY`].
fn packet_key(src: &str, dst: &str, dest_qp: u32, psn: u32, opcode: u8) -> Vec<Cell> {
    vec![
        Cell::new(pair(src, dst)),
        right(format!("{dest_qp:#08x}")),
        right(psn),
        Cell::new(Opcode(opcode).label()),
    ]
}

/// How the packet lists are written: the captures' short names, colour, the terminal's width.
struct List<'a> {
    names: &'a Names,
    color: bool,
    width: Option<u16>,
}

fn packets(out: &mut dyn Write, list: &List<'_>, title: &str, v: &[PacketRow]) -> io::Result<()> {
    let names = list.names;
    if v.is_empty() {
        return writeln!(out, "\n{title}: none");
    }
    let mut t = Grid::new(
        list.color,
        &[&PACKET_KEY[..], &["seen in", "frame", "missing in"]].concat(),
    )
    .hiding(&PACKETS_DROP_ORDER);
    for p in v {
        let mut row = packet_key(&p.src, &p.dst, p.dest_qp, p.psn, p.opcode);
        row.extend([
            Cell::new(names.get(&p.seen_in)),
            right(p.frame),
            Cell::new(names.get(&p.missing_in)),
        ]);
        t.add_row(row);
    }
    writeln!(out, "\n{title}: {}", v.len())?;
    t.write(out, list.width)
}

fn corrupted(out: &mut dyn Write, list: &List<'_>, v: &[CorruptRow]) -> io::Result<()> {
    if v.is_empty() {
        return Ok(());
    }
    let names = list.names;
    let header = [&PACKET_KEY[..], &["upstream (frame)", "downstream (frame)"]].concat();
    let mut t = Grid::new(list.color, &header).hiding(&CORRUPTED_DROP_ORDER);
    for p in v {
        let mut row = packet_key(&p.src, &p.dst, p.dest_qp, p.psn, p.opcode);
        row.extend([
            Cell::new(format!("{} ({})", names.get(&p.upstream), p.frame_upstream)),
            Cell::new(format!(
                "{} ({})",
                names.get(&p.downstream),
                p.frame_downstream
            )),
        ]);
        t.add_row(row);
    }
    writeln!(
        out,
        "\nCorrupted on the link (same BTH, different ICRC): {}",
        v.len()
    )?;
    t.write(out, list.width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_and_us() {
        // date -u -d @1782371699.079084 → 2026-06-25 07:14:59 (GNU date).
        assert_eq!(
            utc(1_782_371_699_079_084_000),
            "2026-06-25 07:14:59.079084000"
        );
        assert_eq!(utc(0), "1970-01-01 00:00:00.000000000");
        assert_eq!(us(-1500), "-1.500");
        assert_eq!(us(1_234_567), "1234.567");
    }
}
