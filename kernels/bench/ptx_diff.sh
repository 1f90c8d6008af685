#!/usr/bin/env bash
# Shows that a change to kernels/cuda left every kernel's code as it was, with nvcc alone (no GPU,
# no cuobjdump): compiles every .cu of two source trees to PTX for sm_80 and sm_90, splits the
# PTX into its kernels and device functions, and compares them by name. Identical PTX gives
# identical machine code (ptxas is deterministic), so what the kernels compute and how fast they
# run is unchanged. Exit 0 when every kernel of the old tree is in the new one, unchanged.
# Basic-block labels (numbered by the function's place in its file) and the path hash in the
# names of anonymous-namespace kernels are masked. nvcc 13.0 does not always give the same PTX
# for the largest unrolled kernels twice from the same source (two compilations of one
# flash_launch.cu differed in 2294 lines): PTX_DIFF_RUNS=N compiles each tree N times and takes
# a kernel as unchanged when any old compilation equals any new one.
#
#   [PTX_DIFF_RUNS=2] kernels/bench/ptx_diff.sh OLD_TREE NEW_TREE   (each a repository checkout)
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_TREE NEW_TREE" >&2; exit 2; }
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
work=${PTX_DIFF_DIR:-$(mktemp -d)}
[ -n "${PTX_DIFF_DIR:-}" ] || trap 'rm -rf "$work"' EXIT

# Every kernel and device function of a tree, one file per (architecture, name), comments and
# the compiler's header dropped.
ptx_of() { # tree, folder
    local tree=$1 out=$2
    rm -rf "$out/keep"
    mkdir -p "$out/keep" "$out/split"
    find "$tree/kernels/cuda" -name '*.cu' | sort | while read -r cu; do
        "$nvcc" -I"$tree" -isystem=/usr/include/eigen3 -O3 -DNDEBUG -std=c++17 -Xcompiler=-fPIC \
            --generate-code=arch=compute_80,code=[compute_80,sm_80] \
            --generate-code=arch=compute_90,code=[compute_90,sm_90] \
            -x cu -c "$cu" -o "$out/keep/$(basename "$cu").o" --keep --keep-dir "$out/keep"
    done
    for ptx in "$out"/keep/*.ptx; do
        local arch
        arch=$(grep -m1 '^\.target' "$ptx" | awk '{print $2}' | tr -d ',')
        # Kernels in an anonymous namespace carry a hash of their file's path: masked.
        sed -E -e 's/[0-9]+_GLOBAL__N__[0-9a-f]+_[0-9]+_[A-Za-z0-9_]+_cu_[0-9a-f]{8}/_GLOBAL__N_/g' \
            -e 's/\$L__BB[0-9]+_/$L__BB_/g' "$ptx" |
        awk -v dir="$out/split" -v arch="$arch" '
            /^\/\// { next }
            /^\.(visible |weak )?\.?(entry|func)/ {
                name = $0; sub(/\(.*/, "", name); n = split(name, parts, " "); name = parts[n]
                file = dir "/" arch "." name
            }
            file != "" { print > file }
            /^}/ { file = "" }'

    done
}
runs=${PTX_DIFF_RUNS:-1}
for r in $(seq "$runs"); do
    ptx_of "$1" "$work/old$r"
    ptx_of "$2" "$work/new$r"
done
same=0 changed=0 missing=0
for f in "$work"/old1/split/*; do
    k=$(basename "$f")
    if [ ! -f "$work/new1/split/$k" ]; then
        echo "missing in the new tree: $k"; missing=$((missing + 1))
        continue
    fi
    match=0
    for a in $(seq "$runs"); do
        for b in $(seq "$runs"); do
            cmp -s "$work/old$a/split/$k" "$work/new$b/split/$k" && match=1
        done
    done
    if [ "$match" -eq 1 ]; then
        same=$((same + 1))
    else
        echo "changed: $k ($(diff "$f" "$work/new1/split/$k" | grep -c '^[<>]') lines differ)"
        changed=$((changed + 1))
    fi
done
added=$(comm -13 <(ls "$work/old1/split") <(ls "$work/new1/split") | wc -l)
echo "PTX functions (per architecture): $same identical, $changed changed, $missing missing, $added new"
[ "$changed" -eq 0 ] && [ "$missing" -eq 0 ]
