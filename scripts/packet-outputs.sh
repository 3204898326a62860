#!/usr/bin/env bash
# Save every per-packet output format of every sample (and of the captures in EXTRA_DIR, when
# given) into a directory, to compare two builds byte for byte (issue 40: outputs unchanged by a
# refactor; scripts/report-outputs.sh does the same for the reports):
#
#   scripts/packet-outputs.sh BIN OUTDIR [EXTRA_DIR]
#   diff -r OUTDIR_BEFORE OUTDIR_AFTER
#
# Formats: the one-line summaries, `--all`, `-V`, `--json`, `--json --marks --all`, `--marks`,
# `-V --marks`, `-T fields` with every field of `--list-fields` (sorted by name), `--summary
# --json`, `--messages --json`, the Parquet export (each table as CSV through DuckDB when python3
# can import `duckdb`, else the files' bytes), `--html` and every `plot --kind` as SVG. Standard
# error and the exit status are saved beside standard output; the outputs of EXTRA_DIR's
# captures are named `extra-NAME.*`.
set -euo pipefail
shopt -s nullglob

if [[ $# -lt 2 ]]; then
    echo "usage: $0 BIN OUTDIR [EXTRA_DIR]" >&2
    exit 2
fi
bin=$(realpath "$1")
out=$(realpath -m "$2")
extra=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
pq=$(mktemp -d)
trap 'rm -rf "$pq"' EXIT

# Each capture and the name its outputs take.
files=()
names=()
for f in "$root"/samples/*.pcap "$root"/samples/*.pcapng; do
    files+=("$f")
    names+=("$(basename "$f")")
done
if [[ -n $extra ]]; then
    for f in "$extra"/*.pcap "$extra"/*.pcapng; do
        files+=("$f")
        names+=("extra-$(basename "$f")")
    done
fi

# One output: NAME then the arguments after the binary.
run() {
    local name=$1
    shift
    "$bin" "$@" >"$out/$name" 2>"$out/$name.err" || echo "exit $?" >>"$out/$name.err"
}

list=$("$bin" read --list-fields)
fields=()
while IFS=$'\t' read -r name _; do
    fields+=(-e "$name")
done < <(LC_ALL=C sort <<<"$list")
if [[ ${#fields[@]} -eq 0 ]]; then
    echo "$0: $bin read --list-fields listed no field" >&2
    exit 1
fi

duck=0
python3 -c 'import duckdb' 2>/dev/null && duck=1

for i in "${!files[@]}"; do
    f=${files[$i]}
    b=${names[$i]}
    run "$b.text" read --color never "$f"
    run "$b.all" read --color never --all "$f"
    run "$b.V" read --color never -V --all "$f"
    run "$b.marks" read --color never --marks "$f"
    run "$b.V-marks" read --color never -V --marks "$f"
    run "$b.json" read --json "$f"
    run "$b.json-marks-all" read --json --marks --all "$f"
    run "$b.fields" read -T fields -E header=y "${fields[@]}" --all "$f"
    run "$b.summary-json" read -q --summary --json "$f"
    run "$b.messages-json" read -q --messages --json "$f"
    run "$b.html" read -q --html "$out/$b.report.html" "$f"
    for k in psn rate latency messages nccl; do
        run "$b.plot-$k" plot --kind "$k" -o "$out/$b.$k.svg" "$f"
    done
    # The dataset folder: TABLE/capture=NAME/part-0.parquet.
    rm -rf "${pq:?}"/*
    run "$b.export" export --parquet "$pq" "$f"
    for t in "$pq"/*/capture=*/*.parquet; do
        table=$(basename "$(dirname "$(dirname "$t")")")
        if [[ $duck == 1 ]]; then
            python3 - "$t" >"$out/$b.$table.csv" <<'PY'
import sys, duckdb
con = duckdb.connect()
rel = con.execute("select * from read_parquet(?)", [sys.argv[1]])
print(",".join(d[0] for d in rel.description))
for row in rel.fetchall():
    print(",".join("" if v is None else str(v) for v in row))
PY
        else
            cp "$t" "$out/$b.$table.parquet"
        fi
    done
done
echo "outputs of ${#files[@]} captures in $out"
