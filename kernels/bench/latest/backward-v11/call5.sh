#!/usr/bin/env bash
# Session 23, call 5: the GPU suites on the final tree where call 3 timed it (an H200 if lent):
# the forward's and the backward's tensor-core suites, tst_cuda_backward, tst_gpu_scene, tst_cli's
# GPU test; compute-sanitizer racecheck, memcheck and synccheck on the four backward defaults
# (one type each) and on the forward defaults' every-variant shapes. One tarball ($1.tar).
set -u
here=kernels/bench
. $here/device_env.sh
BUDGET=${BUDGET:-300}
device_preamble "$1"
for t in tst_cuda_tensor_core tst_cuda_tensor_core_backward tst_cuda_backward tst_gpu_scene; do
  timeout 120 $product/$t > $out/$t.log 2>&1; echo "$t: exit $? $(grep Totals $out/$t.log)"
  grep -E "^FAIL" -A6 $out/$t.log | head -20
done
echo "worst backward ratio: $(grep -o 'ratio [0-9.]*' $out/tst_cuda_tensor_core_backward.log | sort -k2 -n | tail -1)"
timeout 40 $product/tst_cli runBackwardOnCudaRunsTheCheckAsked > $out/tst_cli.log 2>&1; echo "tst_cli: exit $? $(grep Totals $out/tst_cli.log)"
echo "left $(left) s"
bwd=("everyVariant:wgmma_bwd_d64_bc128_br128_wg2_s2_dqrows_tiles fp16" "everyVariant:wgmma_bwd_d128_bc128_br64_wg2_s2_dqturns_tiles bf16")
fwd=()
for k in wgmma_d64_br192_bc128_wg3_s2_overlap wgmma_d64_br128_bc128_wg2_s4_overlap_pingpong wgmma_d128_br128_bc128_wg2_s2_overlap_pingpong; do
  for shape in "113x203 causal" "1023x1024" "300x129 causal"; do fwd+=("everyVariant:$k bf16 $shape"); done
done
for tool in racecheck memcheck synccheck; do
  [ $(left) -lt 40 ] && { echo "$tool skipped"; continue; }
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $product/tst_cuda_tensor_core_backward "${bwd[@]}" > $out/san-bwd-$tool.log 2>&1
  echo "backward $tool: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $out/san-bwd-$tool.log)) $(grep Totals $out/san-bwd-$tool.log)"
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $product/tst_cuda_tensor_core "${fwd[@]}" > $out/san-fwd-$tool.log 2>&1
  echo "forward $tool: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $out/san-fwd-$tool.log)) $(grep Totals $out/san-fwd-$tool.log)"
done
pack_outputs
echo "left $(left) s"
