# Sourced by the device scripts (the GPU machine has CUDA and PyTorch, no Qt): the shared
# libraries a carried build needs, written once.

# LD_LIBRARY_PATH for binaries whose libraries (Qt, ICU, ...) were carried in DIR/lib: those
# first, then the CUDA toolkit's and, where the toolkit lacks cuBLAS 13, the copy in PyTorch's
# wheel. Also QT_QPA_PLATFORM=offscreen for the Qt Test suites.
use_carried_libraries() {
  local libpath="$1/lib" d pip_cublas
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && libpath="$libpath:$d"
  done
  if ! ldconfig -p 2>/dev/null | grep -q 'libcublas.so.13' &&
     ! ls /usr/local/cuda/lib64/libcublas.so.13 >/dev/null 2>&1; then
    pip_cublas=$(python3 -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__))' 2>/dev/null)
    [ -n "$pip_cublas" ] && libpath="$libpath:$(dirname "$(find "$pip_cublas" -name 'libcublas.so.13' | head -1)")"
  fi
  export LD_LIBRARY_PATH="$libpath${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" QT_QPA_PLATFORM=offscreen
  # Carried window suites (pack_product.sh WITH_SCENES=1): Qt's offscreen plugin and a font.
  [ -d "$1/plugins" ] && export QT_PLUGIN_PATH="$1/plugins"
  [ -d "$1/fonts" ] && export QT_QPA_FONTDIR="$1/fonts"
  return 0
}

# Unpacks a product tarball (kernels/bench/hopper/pack_product.sh) into a fresh folder, sets
# $product to it and uses its libraries.
unpack_product() {
  local work
  work=$(mktemp -d)
  tar -C "$work" -xJf "$1"
  product=$work/product
  use_carried_libraries "$product"
}

# The start every device script shares: the output folder $out (its argument), the budget helper
# `left` (seconds left of $BUDGET, 300 by default, from now), the GPU's name, clocks and driver
# in $out/gpu.txt, and the carried product unpacked from .device/pack/product.tar.xz.
# `pack_outputs` then puts $out into the one tarball $out.tar (a call returns at most 8 files).
device_preamble() {
  out=$1
  device_start=$(date +%s)
  mkdir -p "$out"
  nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee "$out/gpu.txt"
  unpack_product .device/pack/product.tar.xz
}
left() { echo $(( ${BUDGET:-300} - ($(date +%s) - ${device_start:-$(date +%s)}) )); }
pack_outputs() { tar -C "$(dirname "$out")" -cf "$out.tar" "$(basename "$out")" && rm -rf "$out"; }

# The GPU's SM clock, power and clock-event reasons every 100 ms into $out/smi.csv, until
# `stop_clock_samples`; `mark NAME-start` / `mark NAME-end` bracket a phase, and
# `clock_summary` prints each phase's median clock, mean power and the reasons seen (samples in
# the phase's first 3 s, its set-up, left out).
start_clock_samples() {
  local reasons=clocks_event_reasons.active
  nvidia-smi --query-gpu=$reasons --format=csv,noheader > /dev/null 2>&1 || reasons=clocks_throttle_reasons.active
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,$reasons --format=csv,noheader -lms 100 > "$out/smi.csv" 2>&1 &
  clock_sampler=$!
}
stop_clock_samples() { kill "$clock_sampler"; }
mark() { echo "$1 $(date +%s.%N)" >> "$out/marks.txt"; }
clock_summary() {
  python3 - "$out" <<'PY'
import sys, datetime, statistics
out = sys.argv[1]
marks = {}
for line in open(f"{out}/marks.txt"):
    name, t = line.split(); marks[name] = float(t)
rows = []
for line in open(f"{out}/smi.csv"):
    f = [x.strip() for x in line.split(",")]
    try:
        ts = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        rows.append((ts, float(f[1].split()[0]), float(f[2].split()[0]), f[4]))
    except (ValueError, IndexError):
        pass
for name in sorted({k.rsplit("-", 1)[0] for k in marks}):
    a, b = marks[name + "-start"], marks[name + "-end"]
    s = [r for r in rows if a + 3 <= r[0] <= b]
    if not s: print(name, "no samples"); continue
    print(f"{name}: {len(s)} samples, SM clock median {statistics.median(r[1] for r in s):.0f} MHz, "
          f"power mean {statistics.mean(r[2] for r in s):.0f} W, reasons {sorted(set(r[3] for r in s))}")
PY
}
