"""Read a folder of `roce-inspect export` outputs as ONE dataset with DuckDB (Hive partitions)
and print, as JSON, the packets per flow counted by DuckDB from the `packets` table, and the
`flows` table's own rows. Run by tests/export.rs; exits 3 after one line when the Python
`duckdb` package is missing (`make deps` installs it)."""

import json
import sys

try:
    import duckdb
except ImportError:
    print("skipped: the Python duckdb package is not installed (make deps installs it)")
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
print(json.dumps({"packets_per_flow": per_flow, "flows": flows}))
