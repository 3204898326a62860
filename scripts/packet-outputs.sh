#!/usr/bin/env bash
# Save every per-packet output format of every sample (and of the captures in EXTRA_DIR, when
# given) into a directory, to compare two builds byte for byte (issue 40: outputs unchanged by a
# refactor; scripts/report-outputs.sh does the same for the reports):
#
#   scripts/packet-outputs.sh BIN OUTDIR [EXTRA_DIR]
#   diff -r OUTDIR_BEFORE OUTDIR_AFTER
#
# Formats: the one-line summaries, `--all`, `-V`, `--json`, `--json --marks --all`, `--marks`,
# `-V --marks`, `-T fields` with every field of `--list-fields` (sorted by name), `--summary --json`,
# `--messages --json`, the Parquet export (each table as CSV through DuckDB when `duckdb` is
# importable by python3, else the files' bytes), `--html` and every `plot --kind` as SVG.
# Standard error and the exit status are saved beside standard output.
set -euo pipefail

bin=$(realpath "$1")
out=$(realpath -m "$2")
extra=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"

files=("$root"/samples/*.pcap "$root"/samples/*.pcapng)
if [[ -n $extra ]]; then
    for f in "$extra"/*.pcap "$extra"/*.pcapng; do
        [[ -e $f ]] && files+=("$f")
    done
fi

# One output: NAME then the arguments after the binary.
run() {
    local name=$1
    shift
    "$bin" "$@" >"$out/$name" 2>"$out/$name.err" || echo "exit $?" >>"$out/$name.err"
}

fields=()
while IFS=$'\t' read -r name _; do
    fields+=(-e "$name")
done < <("$bin" read --list-fields | LC_ALL=C sort)

duck=0
python3 -c 'import duckdb' 2>/dev/null && duck=1

for f in "${files[@]}"; do
    b=$(basename "$f")
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
    # The report's time of writing is its only varying text: left out.
    run "$b.html" read -q --html "$out/$b.report.html" "$f"
    if [[ -e $out/$b.report.html ]]; then
        grep -v -i 'generated' "$out/$b.report.html" >"$out/$b.report.html.stable" || true
        rm -f "$out/$b.report.html"
    fi
    for k in psn rate latency messages nccl; do
        run "$b.plot-$k" plot --kind "$k" -o "$out/$b.$k.svg" "$f"
    done
    pq=$(mktemp -d)
    run "$b.export" export --parquet "$pq" "$f"
    for t in "$pq"/*.parquet; do
        [[ -e $t ]] || continue
        if [[ $duck == 1 ]]; then
            python3 - "$t" >"$out/$b.$(basename "$t").csv" <<'PY'
import sys, duckdb
con = duckdb.connect()
rel = con.sql(f"select * from read_parquet('{sys.argv[1]}')")
print(",".join(rel.columns))
for row in rel.fetchall():
    print(",".join("" if v is None else str(v) for v in row))
PY
        else
            cp "$t" "$out/$b.$(basename "$t")"
        fi
    done
    rm -rf "$pq"
done
echo "outputs of ${#files[@]} captures in $out"
