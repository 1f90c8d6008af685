#!/usr/bin/env bash
# Why the Hopper kernel's warps wait: Nsight Compute's warp-state breakdown (stall reasons per
# issued instruction) for the default d = 128 and d = 64 variants (full mask, n = 8192), and
# the SASS opcode mix. One device call.
#
#   kernels/bench/hopper/stalls.sh BIN_DIR OUT_DIR      (BIN_DIR from build.sh)
set -u -o pipefail
bin=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
stalls() { # name, mangled-name regex, hopper_check arguments...
  local name=$1 regex=$2
  shift 2
  timeout 150 "$ncu" --kernel-name-base mangled --kernel-name "regex:$regex" --launch-count 1 \
    --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum,sm__inst_executed_pipe_tensor_op_gmma.sum' \
    --page raw --csv "$bin/hopper_check" --time-only --repeats 1 "$@" >"$out/stalls-$name.csv" 2>&1
  echo "ncu $name: exit $?"
  python3 - "$out/stalls-$name.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 3]
head = next((r for r in rows if "ID" in r[0] or r[0] == "ID"), None)
if head is None:
    print(open(sys.argv[1]).read()[-2000:]); sys.exit()
data = rows[rows.index(head) + 2] if len(rows) > rows.index(head) + 2 else rows[-1]
pairs = [(h, d) for h, d in zip(head, data) if h.startswith(("smsp__", "sm__"))]
def num(x):
    try: return float(x.replace(",", ""))
    except ValueError: return 0.0
stalls = sorted(((num(d), h) for h, d in pairs if "stalled" in h), reverse=True)
for v, h in stalls[:10]:
    print(f"  {v:7.3f}  {h.replace('smsp__average_warps_issue_stalled_', '').replace('_per_issue_active.ratio', '')}")
for h, d in pairs:
    if "stalled" not in h: print(f"  {h}: {d}")
PY
}
stalls d128-bf16 'hopperFlashKernel.*HopperTileILi128ELi128ELi2ELi2ELb1ELb1EEELNS0_9TcElementE1ELb0' \
  --d 128 --n 8192 --full-only
stalls d64-fp16 'hopperFlashKernel.*HopperTileILi64ELi128ELi3ELi2ELb1ELb0EEELNS0_9TcElementE0ELb0' \
  --d 64 --n 8192 --full-only
