#!/usr/bin/env bash
# Session 23, call 1: the staggered walk (kernels::HopperBackwardConfig::staggered: without the
# mask key block j starts at query block j and wraps around, so a head's key blocks add dQ to
# different tiles at once), two rows after the table's others, one per d, beside the defaults.
# (1) the GPU suites on this tree (session 22's call 2, never run: the defaults' names on a GPU);
# (2) racecheck, memcheck, synccheck on both new rows; (3) without the mask, the defaults and the
# staggered rows, fp16 and bf16, d = 64 and 128, two rounds with PyTorch between them; (4) under
# the mask, the defaults and PyTorch (every point of the issue's table in one call); (5) Nsight
# Compute on d = 128's default and staggered row at n = 16384. One tarball ($1.tar).
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
row=_staggered
echo "$row: $(grep -E "^(PASS|FAIL).*$row" $out/tst_cuda_tensor_core_backward.log | awk '{print $1}' | sort | uniq -c | tr '\n' ' ') worst $(grep "$row" $out/tst_cuda_tensor_core_backward.log | grep -o 'ratio [0-9.]*' | sort -k2 -n | tail -1)"
echo "worst ratio overall: $(grep -o 'ratio [0-9.]*' $out/tst_cuda_tensor_core_backward.log | sort -k2 -n | tail -1)"
timeout 40 $product/tst_cli runBackwardOnCudaRunsTheCheckAsked > $out/tst_cli.log 2>&1; echo "tst_cli: exit $? $(grep Totals $out/tst_cli.log)"
for tool in racecheck memcheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $s "everyVariant:wgmma_bwd_d64_bc128_br128_wg2_s2_dqrows_tiles_staggered fp16" "everyVariant:wgmma_bwd_d128_bc128_br64_wg2_s2_dqturns_tiles_staggered bf16" > $out/san-$tool.log 2>&1
  echo "$tool: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $out/san-$tool.log)) $(grep Totals $out/san-$tool.log)"
done
echo "left $(left) s"
match=wg2_s2_dqrows_tiles,br64_wg2_s2_dqturns_tiles
bench() { # $1 file suffix, then flags
  local f=$1; shift
  timeout 100 $product/flashviz-gpu-bench --tc fp16,bf16 --no-fp32 --no-baseline --d 64,128 --n 4096,8192,16384 --repeats 10 "$@" > $out/flashviz$f.txt 2>&1
  echo "== FlashViz $f (exit $?)"; grep -E "^(64|128) " $out/flashviz$f.txt | grep tcbwd- | awk '{printf "%s %s %s %s\n",$1,$2,$3,$5}' | sed 's/tcbwd-//'
}
torch() { # $1 file suffix, then flags
  local f=$1; shift
  timeout 120 python3 $here/sdpa_bench.py --dtypes fp16,bf16 --backward --d 64,128 --n 4096,8192,16384 --repeats 10 "$@" > $out/torch$f.txt 2>&1
  echo "== torch $f (exit $?)"; grep -- "-bwd" $out/torch$f.txt | awk '{print $1, $2, $5, $8}'
}
bench -round1 --backward-variants --backward-match $match; echo "left $(left) s"
torch ""; echo "left $(left) s"
[ $(left) -gt 200 ] && { bench -round2 --backward-variants --backward-match $match; echo "left $(left) s"; }
[ $(left) -gt 150 ] && { bench -causal --backward --causal; echo "left $(left) s"; }
[ $(left) -gt 110 ] && { torch -causal --causal; echo "left $(left) s"; }
for st in "Lb1ELb0EE" "Lb1ELb1EE"; do
  [ $(left) -lt 45 ] && { echo "ncu $st skipped"; continue; }
  timeout 40 ncu --kernel-name-base mangled --kernel-name "regex:hopperBackwardKernel.*Li128ELi2ELNS_7kernels7DqSplitE2E${st}ELNS0_9TcElementE1ELb0" --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    $product/flashviz-gpu-bench --tc bf16 --backward-variants --backward-match br64_wg2_s2_dqturns_tiles --no-fp32 --no-baseline --d 128 --n 16384 --once > $out/ncu-d128$st.txt 2>&1
  echo "ncu d128 $st: exit $?"; grep -E "Duration|Compute \(SM\) Throughput|L1/TEX Cache|L2 Cache Throughput|DRAM Throughput|L2 Hit|Warp Cycles Per Issued" $out/ncu-d128$st.txt | cut -c1-120 | head -10
done
pack_outputs
echo "left $(left) s"
