#!/usr/bin/env bash
# Runs everything FlashViz checks on an NVIDIA GPU, in one go: the kernel tests (tests/kernels),
# compute-sanitizer memcheck, racecheck and synccheck over them, the GPU benchmark and PyTorch's fp32
# scaled_dot_product_attention on the same shapes. Logs and a summary go to the output folder.
#
#   scripts/gpu-check.sh [--bin DIR] [--out DIR] [--skip-tests] [--skip-sanitizers]
#                        [--skip-bench] [--skip-torch] [--bench-args "ARGS"]
#
# --bin DIR   prebuilt tst_cuda_* and flashviz-gpu-bench (with any shared libraries they need in
#             DIR/lib); without it the script builds them in build-gpu/ (the tests need Qt 6
#             Test; without Qt only the benchmark is built, from kernels/bench/CMakeLists.txt).
# --out DIR   where logs go (default: $OUT if set, else gpu-check-out/).
# GPU_CHECK_TIMEOUT (seconds, default 900) caps each test binary, sanitizer run and benchmark.
set -u -o pipefail
cap=${GPU_CHECK_TIMEOUT:-900}

root=$(cd "$(dirname "$0")/.." && pwd)
bin=""
out="${OUT:-$root/gpu-check-out}"
run_tests=1 run_sanitizers=1 run_bench=1 run_torch=1
bench_args="--variants"
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin=$(cd "$2" && pwd); shift ;;
    --out) out="$2"; shift ;;
    --skip-tests) run_tests=0 ;;
    --skip-sanitizers) run_sanitizers=0 ;;
    --skip-bench) run_bench=0 ;;
    --skip-torch) run_torch=0 ;;
    --bench-args) bench_args="$2"; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

tests=(tst_cuda_device tst_cuda_flash tst_cuda_trace tst_cuda_backward tst_cuda_standard
       tst_cuda_errors tst_cuda_tensor_core tst_cuda_tensor_core_backward tst_cuda_lost_context)

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm,temperature.gpu,power.draw \
  --format=csv 2>&1 | tee "$out/nvidia-smi.txt" || { echo "no NVIDIA GPU here" >&2; exit 1; }

# ---- binaries ----
if [ -z "$bin" ]; then
  build="$root/build-gpu"
  if cmake -S "$root" -B "$build" -G Ninja -DFLASHVIZ_CORE_ONLY=ON -DFLASHVIZ_NATIVE_ARCH=OFF \
       -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1; then
    cmake --build "$build" --target "${tests[@]}" flashviz-gpu-bench >"$out/build.log" 2>&1 \
      || { tail -30 "$out/build.log"; exit 1; }
    bin="$out/bin"; mkdir -p "$bin"
    for t in "${tests[@]}"; do cp "$build/tests/kernels/$t" "$bin/"; done
    cp "$build/kernels/flashviz-gpu-bench" "$bin/"
  else
    note "tests: not built (the project needs Qt 6 Test: $(grep -m1 -i 'qt6' "$out/configure.log"))"
    run_tests=0 run_sanitizers=0
    cmake -S "$root/kernels/bench" -B "$build-bench" -G Ninja >"$out/configure-bench.log" 2>&1 &&
      cmake --build "$build-bench" >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
    bin="$out/bin"; mkdir -p "$bin"
    cp "$build-bench/flashviz-gpu-bench" "$bin/"
  fi
fi

# Shared libraries: carried ones first, then the CUDA toolkit's, then the pip cuBLAS if needed.
. "$root/kernels/bench/device_env.sh"
use_carried_libraries "$bin"

status=0
# ---- tests ----
if [ $run_tests = 1 ]; then
  for t in "${tests[@]}"; do
    timeout "$cap" "$bin/$t" >"$out/$t.log" 2>&1; rc=$?
    [ $rc = 0 ] || status=1
    note "test $t: rc=$rc $(grep -m1 '^Totals' "$out/$t.log")"
    grep -E '^(FAIL!|XPASS)' -A3 "$out/$t.log" | head -40
  done
  grep -h 'QINFO' "$out/tst_cuda_device.log" | head -3
fi

# ---- compute-sanitizer over the tests, small shapes only ----
if [ $run_sanitizers = 1 ]; then
  if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck synccheck; do
      for t in "${tests[@]}"; do
        FLASHVIZ_GPU_TEST_SANITIZER=1 timeout "$cap" compute-sanitizer --tool "$tool" --error-exitcode 97 \
          "$bin/$t" >"$out/$tool-$t.log" 2>&1; rc=$?
        [ $rc = 0 ] || status=1
        note "$tool $t: rc=$rc $(grep -m1 '^Totals' "$out/$tool-$t.log") $(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY' "$out/$tool-$t.log")"
      done
    done
  else
    note "sanitizers: compute-sanitizer not found"
  fi
fi

# ---- benchmark and PyTorch ----
if [ $run_bench = 1 ]; then
  # shellcheck disable=SC2086
  timeout "$cap" "$bin/flashviz-gpu-bench" $bench_args --csv "$out/flash.csv" 2>&1 | tee "$out/bench.log"
  rc=${PIPESTATUS[0]}
  [ $rc = 0 ] || status=1
  note "benchmark: rc=$rc"
fi
if [ $run_torch = 1 ]; then
  flash_csv=()
  [ -f "$out/flash.csv" ] && flash_csv=(--flash-csv "$out/flash.csv")
  PYTHONUNBUFFERED=1 timeout "$cap" python3 "$root/kernels/bench/sdpa_bench.py" --csv "$out/torch.csv" \
    "${flash_csv[@]}" 2>&1 | tee "$out/torch.log"
  rc=${PIPESTATUS[0]}
  [ $rc = 0 ] || status=1
  note "pytorch: rc=$rc"
fi

echo; echo "==== summary ($out) ===="; cat "$summary"
exit $status
