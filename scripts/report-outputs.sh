#!/usr/bin/env bash
# Save the text output of every report of every sample into a directory, to compare two builds
# byte for byte (issue 40: one table renderer, output unchanged):
#
#   scripts/report-outputs.sh BIN OUTDIR [EXTRA_CAPTURE_DIR]
#   diff -r OUTDIR_BEFORE OUTDIR_AFTER
#
# Reports: `read -q`, `-q --messages`, `-q --gaps`, `--summary`, `-q --wide` of every sample;
# `correlate` of each pair of the all-reduce samples and of all three; `nccl` of the
# nccl_node*.pcap files in EXTRA_CAPTURE_DIR (what `cargo run --example make_nccl -- DIR`
# writes), when given. Each runs piped (full width) and in a pseudo-terminal (util-linux
# `script`, width set with `stty`, as tests/report_fit.rs does) of 60, 80, 100 and 120 columns,
# there with `--color never` and `--color always`. Standard error and the exit status are saved
# beside standard output.
set -euo pipefail

bin=$(realpath "$1")
out=$2
extra=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"

samples=()
for f in "$root"/samples/*.pcap "$root"/samples/*.pcapng; do
    samples+=("$f")
done

# One report: NAME then the arguments after the binary.
run() {
    local name=$1
    shift
    local args=("$@")
    "$bin" "${args[@]}" >"$out/$name.pipe" 2>"$out/$name.pipe.err" || echo "exit $?" >>"$out/$name.pipe.err"
    local q=""
    for a in "$bin" "${args[@]}"; do
        q+=" '${a//\'/\'\\\'\'}'"
    done
    # `nccl` has no --color.
    local colors=(never always)
    if [[ ${args[0]} == nccl ]]; then
        colors=(auto)
    fi
    for cols in 60 80 100 120; do
        for color in "${colors[@]}"; do
            local c=" --color $color"
            [[ $color == auto ]] && c=""
            COLUMNS= script -q -e -c "stty cols $cols rows 50 && $q$c" /dev/null \
                >"$out/$name.tty$cols.$color" 2>&1 || echo "exit $?" >>"$out/$name.tty$cols.$color"
        done
    done
}

for s in "${samples[@]}"; do
    base=$(basename "$s")
    port=()
    if [[ $base == vxlan.pcap ]]; then
        port=(--vxlan-port 8472)
    fi
    run "$base.q" read "$s" -q "${port[@]}"
    run "$base.messages" read "$s" -q --messages "${port[@]}"
    run "$base.gaps" read "$s" -q --gaps "${port[@]}"
    run "$base.summary" read "$s" --summary "${port[@]}"
    run "$base.wide" read "$s" -q --wide "${port[@]}"
done

n=("$root"/samples/allreduce_node0.pcap "$root"/samples/allreduce_node1.pcap "$root"/samples/allreduce_node2.pcap)
run correlate.01 correlate "${n[0]}" "${n[1]}"
run correlate.02 correlate "${n[0]}" "${n[2]}"
run correlate.12 correlate "${n[1]}" "${n[2]}"
run correlate.012 correlate "${n[@]}"
run correlate.012.wide correlate "${n[@]}" --wide

if [[ -n $extra ]]; then
    run nccl nccl "$extra"/nccl_node*.pcap
    run nccl.q read "$extra"/nccl_node0.pcap -q
fi
echo "$(find "$out" -type f | wc -l) files in $out"
