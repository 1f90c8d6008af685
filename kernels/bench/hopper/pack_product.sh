#!/usr/bin/env bash
# Packs the release build's GPU-facing programs for the lent GPU machine, which has CUDA but no
# Qt: the GPU suites (tst_cuda_tensor_core, tst_cuda_tensor_core_backward, tst_cuda_backward),
# flashviz-cli and flashviz-gpu-bench with the shared libraries ldd lists for them (Qt, ICU, ...;
# not the C/C++ runtime, CUDA or cuBLAS, which that machine has), as one .tar.xz (carry it;
# unpack it with kernels/bench/device_env.sh's unpack_product). WITH_SCENES=1 adds the app suites
# with GPU-only tests (tst_gpu_scene, tst_cli), Qt's offscreen platform plugin and a font. (The window itself
# does not fit the 64 MiB a call carries: its video export brings FFmpeg's libraries.)
#
#   [WITH_SCENES=1] kernels/bench/hopper/pack_product.sh BUILD_DIR OUT.tar.xz
set -euo pipefail
build=$1 tarball=$2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/product/lib"
programs=("$build/tests/kernels/tst_cuda_tensor_core" "$build/tests/kernels/tst_cuda_tensor_core_backward"
  "$build/tests/kernels/tst_cuda_backward" "$build/app/cli/flashviz-cli" "$build/kernels/flashviz-gpu-bench")
libraries_of=("${programs[@]}")
if [ "${WITH_SCENES:-0}" = 1 ]; then
  programs+=("$build/tests/app/tst_gpu_scene" "$build/tests/app/tst_cli")
  plugin=$(qtpaths6 --query QT_INSTALL_PLUGINS)/platforms/libqoffscreen.so
  mkdir -p "$stage/product/plugins/platforms" "$stage/product/fonts"
  cp "$plugin" "$stage/product/plugins/platforms/"
  cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf "$stage/product/fonts/"
  libraries_of=("${programs[@]}" "$plugin")
fi
cp "${programs[@]}" "$stage/product/"
ldd "${libraries_of[@]}" | awk '/=> \// {print $1, $3}' | sort -u | while read -r name path; do
    case "$name" in
    libc.so*|libm.so*|libstdc++*|libgcc_s*|libpthread*|libdl.so*|librt.so*|ld-linux*|libcuda*|libcublas*) ;;
    *) cp -L "$path" "$stage/product/lib/" ;;
    esac
done
mkdir -p "$(dirname "$tarball")"
tar -C "$stage" -cJf "$tarball" product
echo "$tarball: $(du -h "$tarball" | cut -f1), $(ls "$stage/product/lib" | wc -l) libraries"
