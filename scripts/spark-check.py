#!/usr/bin/env python3
"""Run README's PySpark queries on a local Spark over a folder of `roce-inspect export` output and
check each capture's per-flow packet counts and RoCE frame count against `read --summary --json`.

    scripts/spark-check.py DIR CAPTURE...      (needs `pip install pyspark` and Java 17)

DIR is the `--parquet` folder the CAPTUREs were exported into (by their file names). Exit status
0 when every capture matches, 1 otherwise.
"""
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

    bad = 0
    for path in captures:
        cap = os.path.basename(path)
        rep = json.loads(subprocess.check_output([BIN, "read", path, "--summary", "--json"]))
        want = sorted((f["src"], f["dst"], f["dest_qp"], f["packets"]) for f in rep["flows"])
        rows = flows.where(F.col("capture") == cap).select("src", "dst", "dest_qp", "packets").collect()
        got = sorted((r.src, r.dst, int(r.dest_qp), int(r.packets)) for r in rows)
        n = packets.where(F.col("capture") == cap).count()
        if got != want or n != rep["frames"]["roce"]:
            bad += 1
            print(f"{cap}: Spark has {len(got)} flows and {n} packets, --summary --json "
                  f"{len(want)} flows and {rep['frames']['roce']} packets", file=sys.stderr)
    spark.stop()
    print(f"spark-check: {len(captures) - bad} of {len(captures)} captures match")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
