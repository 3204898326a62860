"""Read a folder of `roce-inspect export` outputs with DuckDB and Polars, two Parquet readers
independent of the `parquet` crate that wrote them, and print as JSON:

- `packets_per_flow`: the packets per flow DuckDB counts from the `packets` tables of the whole
  folder read as ONE dataset (Hive partitions), and `flows`: the `flows` tables' own rows;
- `rows`: for each of `packets` and `messages`, each reader's rows of every capture, as column
  name -> value (timestamps as ns since the epoch), packets in frame order and messages in the
  file's order, for the caller to compare with `read --json` value by value.

Run by tests/export.rs; exits 3 after one line when the Python `duckdb` or `polars` package is
missing (`make deps` installs them)."""

import json
import os
import sys

try:
    import duckdb
    import polars as pl
except ImportError as e:
    print(f"skipped: the Python {e.name} package is not installed (make deps installs it)")
    sys.exit(3)

root = sys.argv[1]
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


rows = {"duckdb": {}, "polars": {}}
for table in ["packets", "messages"]:
    for reader, read in [("duckdb", duckdb_rows), ("polars", polars_rows)]:
        rows[reader][table] = {}
    base = os.path.join(root, table)
    for part in sorted(os.listdir(base)):
        capture = part.removeprefix("capture=")
        path = os.path.join(base, part, "part-0.parquet")
        for reader, read in [("duckdb", duckdb_rows), ("polars", polars_rows)]:
            rows[reader][table][capture] = read(path, table)
print(json.dumps({"packets_per_flow": per_flow, "flows": flows, "rows": rows}))
