#!/usr/bin/env bash
# One device call for the Hopper kernel's trace mode and its checks: the product's tensor-core
# suite (every variant, the trace mode's test), compute-sanitizer's memcheck, racecheck and
# synccheck on the traced and the plain Hopper kernels, and the traces FlashViz ships
# (resources/traces/hopper-h100.json), recorded by the product's own CLI.
#
#   kernels/bench/hopper/trace_run.sh PRODUCT_TARBALL HOPPER_CHECK_BIN OUT_DIR
# (PRODUCT_TARBALL from pack_product.sh, HOPPER_CHECK_BIN from build.sh.)
set -u -o pipefail
tarball=$1 harness=$2 out=$3
mkdir -p "$out"
. "$(cd "$(dirname "$0")/.." && pwd)/device_env.sh"
unpack_product "$tarball"
work=$(mktemp -d)
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/summary.txt"

# The traces FlashViz ships: every variant with the mask it is built for, n = 1024.
timeout 120 "$product/flashviz-cli" hopper-trace --all-variants --out "$out/hopper-h100.json" \
  >"$out/hopper-trace.txt" 2>&1 || status=1
grep -E "^wgmma|block time|plain kernel" "$out/hopper-trace.txt" | tee -a "$out/summary.txt"

timeout 240 "$product/tst_cuda_tensor_core" >"$out/suite.log" 2>&1 || status=1
grep -E "^(Totals|FAIL!)" -A1 "$out/suite.log" | tee -a "$out/summary.txt"
grep -E "QINFO.*hopperTraceMode" "$out/suite.log" | head -14 | tee -a "$out/summary.txt"

# compute-sanitizer on small shapes: the trace mode's test (traced kernels) and the harness's
# --sanitize shapes (plain kernels).
export FLASHVIZ_GPU_TEST_SANITIZER=1
for tool in memcheck synccheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$product/tst_cuda_tensor_core" hopperTraceMode \
    >"$work/tst-$tool.log" 2>&1
  echo "tst_cuda_tensor_core hopperTraceMode, $tool: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$work/tst-$tool.log"); $(grep -m1 Totals "$work/tst-$tool.log"))" | tee -a "$out/summary.txt"
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 "$harness" --sanitize >"$work/harness-$tool.log" 2>&1
  echo "hopper_check --sanitize, $tool: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$work/harness-$tool.log"))" | tee -a "$out/summary.txt"
done
tail -n 40 "$work"/tst-*.log "$work"/harness-*.log >"$out/sanitizer-tails.log"
exit $status
