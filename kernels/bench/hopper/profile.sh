#!/usr/bin/env bash
# Where the Hopper kernel's time goes, and how far apart two timings of one kernel land: Nsight
# Compute on the default d = 128 and d = 64 variants (bf16 / fp16, full mask, n = 8192: speed of
# light, the pipes' utilisation, warp stalls), then the d = 128 full-mask table twice with 30
# repeats beside PyTorch's backends twice. One device call.
#
#   kernels/bench/hopper/profile.sh BIN_DIR OUT_DIR      (BIN_DIR from build.sh)
set -u -o pipefail
bin=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
root=$(cd "$(dirname "$0")/../../.." && pwd)
export PYTHONUNBUFFERED=1
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
"$ncu" --query-metrics 2>/dev/null | grep -iE "gmma|tensor_op" | head -20 >"$out/metrics.txt"
profile() { # name, mangled-name regex, hopper_check arguments...
  local name=$1 regex=$2
  shift 2
  timeout 150 "$ncu" --kernel-name-base mangled --kernel-name "regex:$regex" --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
    --section Occupancy "$bin/hopper_check" --time-only --repeats 1 "$@" >"$out/ncu-$name.txt" 2>&1
  echo "ncu $name: exit $?"
  grep -E "Compute \(SM\) Throughput|Memory Throughput|Duration|Issue Slots Busy|Tensor|Stall|Warp Cycles Per Issued|Achieved Occupancy|Registers Per Thread" "$out/ncu-$name.txt" | head -30
}
profile d128-bf16 'hopperFlashKernel.*HopperTileILi128ELi128ELi2ELi2ELb1ELb1EEELNS0_9TcElementE1ELb0' \
  --d 128 --n 8192 --full-only
profile d64-fp16 'hopperFlashKernel.*HopperTileILi64ELi128ELi3ELi2ELb1ELb0EEELNS0_9TcElementE0ELb0' \
  --d 64 --n 8192 --full-only
for pass in 1 2; do
  timeout 120 "$bin/hopper_check" --time-only --d 128 --full-only --n 8192,16384 --repeats 30 \
    >"$out/time$pass.log" 2>&1
  grep -E "overlap_pingpong|sm80" "$out/time$pass.log" | grep -v TFLOP
  timeout 150 python3 "$root/kernels/bench/sdpa_bench.py" --d 128 --n 8192,16384 --dtypes fp16,bf16 \
    --repeats 30 >"$out/torch$pass.log" 2>&1
  grep -E "cudnn" "$out/torch$pass.log"
done
