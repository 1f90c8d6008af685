#!/usr/bin/env bash
# One call on a GPU machine for the measured-traffic resource (issue #19): builds the standalone
# benchmark (kernels/bench/CMakeLists.txt) for this GPU, then runs ncu_traffic.py, which reads the
# hardware counters of every method at every size and the L2 / DRAM read rates.
#
#   kernels/bench/traffic_gpu_run.sh OUT_DIR [ncu_traffic.py options]
set -u -o pipefail
out=$1
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${TRAFFIC_BUILD_DIR:-/tmp/flashviz-build-bench}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv \
  | tee "$out/nvidia-smi.txt"
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
start=$(date +%s)
# -Xptxas=-v: the build log lists each kernel's registers and spill bytes (local memory).
if ! { cmake -S "$root/kernels/bench" -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES="$arch" \
         -DCMAKE_CUDA_FLAGS="-Xptxas=-v" &&
       cmake --build "$build" -j "$(nproc)"; } >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  exit 1
fi
echo "built for sm_$arch in $(( $(date +%s) - start )) s"
python3 "$root/kernels/bench/ncu_traffic.py" --bench "$build/flashviz-gpu-bench" \
  --l2 "$build/flashviz-l2-bandwidth" --out "$out/traffic.json" --logs /tmp/traffic-logs "$@"
status=$?
tar czf "$out/traffic-logs.tgz" -C /tmp traffic-logs
grep -A8 '"bandwidth"' "$out/traffic.json" | head -6
exit $status
