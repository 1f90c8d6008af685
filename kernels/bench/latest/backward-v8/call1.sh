#!/usr/bin/env bash
# Session 21: (1) the backward suite whole after the launch refactor (one variant table, shared
# dispatch, grid and dK/dV store) with the new "dQ in turns" rows; (2) the forward suites' tensor
# core rows (their dispatch changed too); (3) every backward variant timed, both masks;
# (4) racecheck, memcheck, synccheck on the turns rows; (5) PyTorch beside; (6) ncu on the
# d = 64 rows if time is left.
set -u
out=$1
here=kernels/bench
start=$(date +%s); left() { echo $(( ${BUDGET:-480} - ($(date +%s) - start) )); }
. $here/device_env.sh
unpack_product .device/pack/product.tar.xz
mkdir -p $out
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
s=$product/tst_cuda_tensor_core_backward
timeout 150 $s > $out/tcbwd.log 2>&1; echo "tst_cuda_tensor_core_backward: exit $? $(grep Totals $out/tcbwd.log)"
grep -E "^FAIL" -A4 $out/tcbwd.log | head -30; grep -E "QINFO.*defaultIs" $out/tcbwd.log | cut -c1-160
grep -E "dqturns" $out/tcbwd.log | grep -E "^(PASS|FAIL)" | head -8
echo "left $(left) s"
for c in "" --causal; do
  timeout 70 $product/flashviz-gpu-bench --tc bf16 --backward-variants --no-fp32 --no-baseline --d 64,128 --n 4096,8192,16384 --repeats 10 $c > $out/var$c.txt 2>&1
  echo "== variants ${c:-non-causal} (exit $?)"; grep -E "^(64|128) " $out/var$c.txt | awk '{printf "%s %s %s %s %s\n",$1,$2,$3,$4,$5}'
  grep -E "CHECK|rror" $out/var$c.txt | head -5
done
echo "left $(left) s"
for tool in racecheck memcheck synccheck; do
  [ $(left) -lt 150 ] && { echo "$tool skipped ($(left) s left)"; continue; }
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $s "everyVariant:wgmma_bwd_d64_bc128_br64_wg2_s2_dqturns bf16" "everyVariant:wgmma_bwd_d128_bc128_br64_wg2_s2_dqturns fp16" > $out/san-$tool.log 2>&1
  echo "$tool: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $out/san-$tool.log)) $(grep Totals $out/san-$tool.log)"
done
[ $(left) -gt 130 ] && { timeout 60 $product/tst_cuda_tensor_core > $out/tcfwd.log 2>&1; echo "tst_cuda_tensor_core: exit $? $(grep Totals $out/tcfwd.log)"; grep -E "^FAIL" -A4 $out/tcfwd.log | head -12; }
for c in "" --causal; do
  [ $(left) -lt 60 ] && { echo "torch skipped ($(left) s left)"; continue; }
  timeout 45 python3 $here/sdpa_bench.py --dtypes bf16 --backward --d 64,128 --n 4096,8192,16384 --repeats 10 $c > $out/torch$c.txt 2>&1
  echo "== torch ${c:-non-causal}"; grep -- "-bwd" $out/torch$c.txt
done
for split in E0 E2; do
  [ $(left) -lt 60 ] && { echo "ncu $split skipped ($(left) s left)"; continue; }
  timeout $(( $(left) - 20 )) ncu --kernel-name-base mangled --kernel-name "regex:hopperBackwardKernel.*Li64ELi2ELNS_7kernels7DqSplit${split}.*TcElementE1ELb0" --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    $product/flashviz-gpu-bench --tc bf16 --backward-variants --no-fp32 --no-baseline --d 64 --n 4096 --repeats 1 > $out/ncu-d64-$split.txt 2>&1
  echo "ncu d64 $split: exit $?"; grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Executed Ipc Active|Issue Slots Busy|SM Busy|L2 Hit|Stall|Warp Cycles Per Issued" $out/ncu-d64-$split.txt | cut -c1-120 | head -16
done
echo "left $(left) s"
