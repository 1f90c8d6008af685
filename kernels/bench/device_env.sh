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
