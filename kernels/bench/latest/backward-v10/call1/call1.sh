#!/usr/bin/env bash
# Session 22, call 1: two new d = 64 rows after the default: a third stage for the tiles row, and
# 128 query rows a step with dQ split by rows (FlashAttention-3's d = 64 tile). (1) the GPU suites
# on this tree (the two default-name assertions never run on a GPU); (2) racecheck, memcheck,
# synccheck on both new rows; (3) every d = 64 variant, fp16 and bf16, both masks; (4) PyTorch's
# d = 64 in the same call; (5) Nsight Compute on the default and the rows row.
# Everything in one tarball ($1.tar).
set -u
here=kernels/bench
. $here/device_env.sh
BUDGET=${BUDGET:-540}
device_preamble "$1"
s=$product/tst_cuda_tensor_core_backward
for t in tst_cuda_tensor_core_backward tst_cuda_backward tst_gpu_scene; do
  timeout 150 $product/$t > $out/$t.log 2>&1; echo "$t: exit $? $(grep Totals $out/$t.log)"
  grep -E "^FAIL" -A6 $out/$t.log | head -30
done
grep -E "QINFO.*(defaultIs|differ between)" $out/tst_cuda_tensor_core_backward.log | cut -c1-200
for row in _s3_dqturns_tiles _dqrows_tiles; do
  echo "$row: $(grep -E "^(PASS|FAIL).*$row" $out/tst_cuda_tensor_core_backward.log | awk '{print $1}' | sort | uniq -c | tr '\n' ' ') worst $(grep "$row" $out/tst_cuda_tensor_core_backward.log | grep -o 'ratio [0-9.]*' | sort -k2 -n | tail -1)"
done
echo "worst ratio overall: $(grep -o 'ratio [0-9.]*' $out/tst_cuda_tensor_core_backward.log | sort -k2 -n | tail -1)"
timeout 40 $product/tst_cli runBackwardOnCudaRunsTheCheckAsked > $out/tst_cli.log 2>&1; echo "tst_cli: exit $? $(grep Totals $out/tst_cli.log)"
for tool in racecheck memcheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $s "everyVariant:wgmma_bwd_d64_bc128_br64_wg2_s3_dqturns_tiles bf16" "everyVariant:wgmma_bwd_d64_bc128_br128_wg2_s2_dqrows_tiles fp16" > $out/san-$tool.log 2>&1
  echo "$tool: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $out/san-$tool.log)) $(grep Totals $out/san-$tool.log)"
done
echo "left $(left) s"
for c in "" --causal; do
  timeout 90 $product/flashviz-gpu-bench --tc fp16,bf16 --backward-variants --no-fp32 --no-baseline --d 64 --n 4096,8192,16384 --repeats 10 $c > $out/variants$c.txt 2>&1
  echo "== variants ${c:-non-causal} (exit $?)"; grep -E "^64 " $out/variants$c.txt | grep -E "wgmma_bwd.*(tiles|turns)" | awk '{printf "%s %s %s %s\n",$1,$2,$3,$5}' | sed 's/tcbwd-//'
  timeout 80 python3 $here/sdpa_bench.py --dtypes fp16,bf16 --backward --d 64 --n 4096,8192,16384 --repeats 10 $c > $out/torch$c.txt 2>&1
  echo "== torch ${c:-non-causal} (exit $?)"; grep -- "-bwd" $out/torch$c.txt | awk '{print $1, $2, $5, $8}'
  echo "left $(left) s"
done
for split in 2 3; do
  [ $(left) -lt 50 ] && { echo "ncu split $split skipped"; continue; }
  timeout 45 ncu --kernel-name-base mangled --kernel-name "regex:hopperBackwardKernel.*Li64ELi2ELNS_7kernels7DqSplitE${split}ELb1.*TcElementE1ELb0" --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    $product/flashviz-gpu-bench --tc bf16 --backward-variants --no-fp32 --no-baseline --d 64 --n 4096 --repeats 1 > $out/ncu-d64-split$split.txt 2>&1
  echo "ncu d64 split $split: exit $?"; grep -E "Duration|Compute \(SM\) Throughput|L1/TEX Cache|L2 Cache Throughput|Issue Slots Busy|highest-utilized|Warp Cycles Per Issued" $out/ncu-d64-split$split.txt | cut -c1-120 | head -10
done
pack_outputs
echo "left $(left) s"
