"""Read a folder of `roce-inspect export` outputs with DuckDB and Polars, two Parquet readers
independent of the `parquet` crate that wrote them, and print as JSON:

- `packets_per_flow`: the packets per flow DuckDB counts from the `packets` tables of the whole
  folder read as ONE dataset (Hive partitions), and `flows`: the `flows` tables' own rows;
- `rows`: for each of `packets` and `messages`, each reader's rows of every capture, as column
  name -> value (timestamps as ns since the epoch), packets in frame order and messages in the
  file's order, for the caller to compare with `read --json` value by value.

Run by tests/export.rs. A reader whose Python package is missing is left out and named in
`skipped`; with neither, the script exits 3 after one line (`make deps` installs both)."""

import json
import os
import sys

try:
    import duckdb
except ImportError:
    duckdb = None
try:
    import polars as pl
except ImportError:
    pl = None
if duckdb is None and pl is None:
    print("skipped: the Python duckdb and polars packages are not installed (make deps installs them)")
    sys.exit(3)

root = sys.argv[1]
per_flow, flows = None, None
if duckdb is not None:
    con = duckdb.connect()
    per_flow = con.sql(
        f"""select capture, host, src, dst, bth_dest_qp as dest_qp, count(*) as packets
            from read_parquet('{root}/packets/**/*.parquet', hive_partitioning=true)
            where bth_dest_qp is not null
            group by all order by all"""
    ).fetchall()
    flows = con.sql(
        f"""select capture, host, src, dst, dest_qp, packets
            from read_parquet('{root}/flows/**/*.parquet', hive_partitioning=true, union_by_name=true)
            order by all"""
    ).fetchall()


def duckdb_rows(path, table):
    """Every row of one file, in frame order (packets) or the file's order (messages)."""
    ts = ", epoch_ns(ts) as ts" if table == "packets" else ""
    exclude = "exclude (ts, file_row_number)" if table == "packets" else "exclude (file_row_number)"
    order = "frame" if table == "packets" else "file_row_number"
    rel = con.sql(
        f"""select * {exclude}{ts}
            from read_parquet('{path}', file_row_number=true, hive_partitioning=false)
            order by {order}"""
    )
    return [dict(zip(rel.columns, r)) for r in rel.fetchall()]


def polars_rows(path, table):
    df = pl.read_parquet(path, hive_partitioning=False)
    if table == "packets":
        df = df.with_columns(pl.col("ts").dt.epoch("ns")).sort("frame")
    return df.to_dicts()


readers = [(name, read) for name, read, module in
           [("duckdb", duckdb_rows, duckdb), ("polars", polars_rows, pl)] if module is not None]
rows = {name: {} for name, _ in readers}
for table in ["packets", "messages"]:
    for name, _ in readers:
        rows[name][table] = {}
    base = os.path.join(root, table)
    for part in sorted(os.listdir(base)):
        capture = part.removeprefix("capture=")
        path = os.path.join(base, part, "part-0.parquet")
        for name, read in readers:
            rows[name][table][capture] = read(path, table)
skipped = [name for name, module in [("duckdb", duckdb), ("polars", pl)] if module is None]
print(json.dumps({"packets_per_flow": per_flow, "flows": flows, "rows": rows,
                  "skipped": skipped}))
