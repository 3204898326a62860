#!/usr/bin/env python3
"""Run README's PySpark queries on a local Spark over a folder of `roce-inspect export` output and
check each capture's per-flow packet counts and RoCE frame count against `read --summary --json`,
and every value of its `packets` and `messages` rows against `read --json` and `--summary --json
--messages`.

    scripts/spark-check.py DIR CAPTURE...      (needs `pip install pyspark` and Java 17)

DIR is the `--parquet` folder the CAPTUREs were exported into (by their file names). Exit status
0 when every capture matches, 1 otherwise.
"""
import decimal
import json
import os
import subprocess
import sys

from pyspark.sql import SparkSession, functions as F

BIN = os.environ.get("ROCE_INSPECT", os.path.join(os.path.dirname(__file__), "..", "target", "release", "roce-inspect"))


def main(root, captures):
    spark = (SparkSession.builder.appName("roce").master("local[2]")
             .config("spark.sql.legacy.parquet.nanosAsLong", "true")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")

    # README's queries: top QPs by retransmissions, CE fraction per host per second.
    flows = spark.read.option("mergeSchema", "true").parquet(f"{root}/flows")
    (flows.groupBy("host", "src", "dst", "dest_qp")
          .agg(F.sum("psn_retransmitted").alias("retransmitted"))
          .orderBy(F.desc("retransmitted")).show(10))
    packets = spark.read.parquet(f"{root}/packets")
    (packets.where(F.col("ecn").isNotNull())
            .withColumn("second", (F.col("ts") / 1_000_000_000).cast("long"))
            .groupBy("host", "second")
            .agg(F.count("*").alias("packets"),
                 F.avg((F.col("ecn") == "ce").cast("double")).alias("ce_fraction"))
            .orderBy("host", "second").show(10))

    messages = spark.read.parquet(f"{root}/messages")
    bad = 0
    for path in captures:
        cap = os.path.basename(path)
        rep = json.loads(subprocess.check_output(
            [BIN, "read", path, "--summary", "--json", "--messages"]))
        want = sorted((f["src"], f["dst"], f["dest_qp"], f["packets"]) for f in rep["flows"])
        rows = flows.where(F.col("capture") == cap).select("src", "dst", "dest_qp", "packets").collect()
        got = sorted((r.src, r.dst, int(r.dest_qp), int(r.packets)) for r in rows)
        n = packets.where(F.col("capture") == cap).count()
        if got != want or n != rep["frames"]["roce"]:
            bad += 1
            print(f"{cap}: Spark has {len(got)} flows and {n} packets, --summary --json "
                  f"{len(want)} flows and {rep['frames']['roce']} packets", file=sys.stderr)
        # Every value of every packet and message, as Spark reads it, against the JSON.
        lines = subprocess.check_output([BIN, "read", path, "--json"]).decode().splitlines()
        json_packets = [flat(p) for p in map(json.loads, lines) if p.get("roce")]
        spark_packets = [r.asDict() for r in
                         packets.where(F.col("capture") == cap).orderBy("frame").collect()]
        bad += compare(cap, "packets", spark_packets, json_packets)
        spark_messages = [r.asDict() for r in messages.where(F.col("capture") == cap).collect()]
        bad += compare(cap, "messages", spark_messages, [flat(m) for m in rep["messages"]])
    spark.stop()
    print(f"spark-check: {len(captures) - bad} of {len(captures)} captures match")
    return 1 if bad else 0


def flat(item, prefix="", out=None):
    """A JSON object flattened as the tables are: nested keys joined with `_`; the packets'
    `ts_ns` is the `ts` column, `encap` its JSON text, `truncated` false when absent."""
    out = {} if out is None else out
    for k, v in item.items():
        name = f"{prefix}_{k}" if prefix else k
        if isinstance(v, dict):
            flat(v, name, out)
        elif isinstance(v, list):
            out[name] = json.dumps(v, separators=(",", ":"))
        else:
            out[name] = v
    if not prefix and "ts_ns" in out:
        out["ts"] = out.pop("ts_ns")
        out.setdefault("truncated", False)
    return out


def compare(cap, table, rows, want):
    """1 when Spark's rows differ from the JSON items (in order: packets by frame, messages as
    the one small file holds them; a key the JSON lacks must be null in the table), else 0."""
    if len(rows) != len(want):
        print(f"{cap} {table}: Spark has {len(rows)} rows, the JSON {len(want)}", file=sys.stderr)
        return 1
    for i, (r, w) in enumerate(zip(rows, want)):
        # UINT64 columns come back as Decimal(20, 0).
        r = {k: int(v) if isinstance(v, decimal.Decimal) else v for k, v in r.items()}
        for k, v in r.items():
            if k in ("capture", "host"):
                continue
            wv = w.get(k)
            if k == "encap" and v is not None:
                v, wv = json.loads(v), json.loads(wv) if wv is not None else None
            if v != wv:
                print(f"{cap} {table} row {i}: {k} is {v!r} in Spark, {wv!r} in the JSON",
                      file=sys.stderr)
                return 1
        missing = [k for k, v in w.items() if v is not None and k not in r]
        if missing:
            print(f"{cap} {table} row {i}: no column {missing}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
