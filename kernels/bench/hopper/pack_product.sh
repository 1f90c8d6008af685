#!/usr/bin/env bash
# Packs the release build's GPU-facing programs for the lent GPU machine, which has CUDA but no
# Qt: tst_cuda_tensor_core, tst_cuda_tensor_core_backward, flashviz-cli and flashviz-gpu-bench with the shared libraries ldd
# lists for them (Qt, ICU, ...; not the C/C++ runtime, CUDA or cuBLAS, which that machine has),
# as one .tar.xz (carry it; unpack and run with LD_LIBRARY_PATH=product/lib, as run.sh does).
#
#   kernels/bench/hopper/pack_product.sh BUILD_DIR OUT.tar.xz
set -euo pipefail
build=$1 tarball=$2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/product/lib"
programs=("$build/tests/kernels/tst_cuda_tensor_core" "$build/tests/kernels/tst_cuda_tensor_core_backward" "$build/app/cli/flashviz-cli" "$build/kernels/flashviz-gpu-bench")
cp "${programs[@]}" "$stage/product/"
ldd "${programs[@]}" | awk '/=> \// {print $1, $3}' | sort -u | while read -r name path; do
    case "$name" in
    libc.so*|libm.so*|libstdc++*|libgcc_s*|libpthread*|libdl.so*|librt.so*|ld-linux*|libcuda*|libcublas*) ;;
    *) cp -L "$path" "$stage/product/lib/" ;;
    esac
done
mkdir -p "$(dirname "$tarball")"
tar -C "$stage" -cJf "$tarball" product
echo "$tarball: $(du -h "$tarball" | cut -f1), $(ls "$stage/product/lib" | wc -l) libraries"
