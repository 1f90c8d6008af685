#!/usr/bin/env bash
# FlashViz set-up on Debian 12: installs the packages that are missing, builds, then starts the
# visualiser (`run`), runs every test (`test`, what CI runs on a fresh Debian root) or makes the
# Debian package (`package`).
#
#   scripts/setup.sh run [flashviz options]   build and start the GUI
#   scripts/setup.sh test                     build with warnings as errors and run every suite;
#                                             build everything again with clang's AddressSanitizer
#                                             and UndefinedBehaviorSanitizer and run every suite,
#                                             the fuzz targets and the monkey test there
#   scripts/setup.sh package                  build build-package/flashviz_<version>_<arch>.deb
#   scripts/setup.sh build                    only the Release build of test (CI's CUDA check)
#
# Environment: FLASHVIZ_FUZZ_SECONDS (60) per fuzz target and FLASHVIZ_MONKEY_SECONDS (150) for
# the monkey test of the sanitizer build.
set -euo pipefail

mode=${1:-run}
[ $# -gt 0 ] && shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)

# Every package is named: apt installs without recommends, so nothing may come in as one
# (qt6-charts-dev needs libqt6opengl6-dev, which qt6-base-dev only recommends).
build_packages=(build-essential cmake ninja-build pkg-config libeigen3-dev nlohmann-json3-dev
                qt6-base-dev libqt6opengl6-dev qt6-charts-dev qt6-svg-dev qt6-qpa-plugins libgl-dev
                fonts-dejavu-core libavformat-dev libavcodec-dev libavfilter-dev libswscale-dev
                libavutil-dev)
# The sanitizer and fuzzing build (clang, its runtimes, llvm-symbolizer for the reports), the
# checks of the desktop entry, the MIME type and the AppStream metadata, what CPack's .deb needs,
# and xtensor, whose .npy writer makes the test files that FlashViz's own .npy reader must read.
test_packages=(clang libclang-rt-14-dev llvm appstream desktop-file-utils shared-mime-info
               dpkg-dev file xtensor-dev)

install_missing() { # package...
    local missing=()
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    say "installing: ${missing[*]}"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

say() { echo "== $(date +%T) $*"; }

configure_and_build() { # build-dir, extra cmake arguments...
    local dir=$1
    shift
    cmake -S "$root" -B "$dir" -G Ninja "$@"
    cmake --build "$dir" -j"$jobs"
}

# The Release build that the tests run and the package is made from: generic x86-64, so that
# the package runs on any machine, and warnings as errors.
build_release() {
    configure_and_build "$root/build-release" -DCMAKE_BUILD_TYPE=Release -DFLASHVIZ_WERROR=ON \
        -DFLASHVIZ_NATIVE_ARCH=OFF
}

run_sanitized_suites() {
    say "everything again with clang, AddressSanitizer + UndefinedBehaviorSanitizer, fuzzing"
    CC=clang CXX=clang++ configure_and_build "$root/build-sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DFLASHVIZ_WERROR=ON -DFLASHVIZ_SANITIZE=ON -DFLASHVIZ_FUZZ=ON -DFLASHVIZ_WITH_CUDA=OFF \
        -DFLASHVIZ_NATIVE_ARCH=OFF -DFLASHVIZ_FUZZ_SECONDS="${FLASHVIZ_FUZZ_SECONDS:-60}"
    # Leaks are reported (a leak fails its test) except those inside Qt and fontconfig
    # themselves, listed with their reasons in the suppression file.
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1 \
    LSAN_OPTIONS=suppressions="$root/tests/lsan-suppressions.txt":print_suppressions=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    FLASHVIZ_MONKEY_SECONDS="${FLASHVIZ_MONKEY_SECONDS:-150}" \
        ctest --test-dir "$root/build-sanitize" --output-on-failure -j"$jobs" -E '^fuzz_'
    # The fuzzers last, two at a time, so that they never starve the window's suites.
    say "fuzzing each parser for ${FLASHVIZ_FUZZ_SECONDS:-60} s"
    local log="$root/build-sanitize/fuzz.log"
    if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ctest --test-dir "$root/build-sanitize" -j"$jobs" -R '^fuzz_' -V >"$log" 2>&1; then
        grep -E -A40 'ERROR|runtime error|deadly signal|Failed' "$log" | head -150
        echo "fuzzing found a crash: the whole log is $log; libFuzzer saved the input beside it"
        return 1
    fi
    grep -E 'Done [0-9]+ runs|tests passed' "$log"
}

case "$mode" in
run)
    install_missing "${build_packages[@]}"
    configure_and_build "$root/build" -DCMAKE_BUILD_TYPE=Release -DFLASHVIZ_BUILD_TESTS=OFF
    if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
        say "no display found: showing the terminal demos instead of the window"
        exec "$root/build/app/cli/flashviz-cli" demos
    fi
    exec "$root/build/app/gui/shell/flashviz" "$@"
    ;;
test)
    install_missing "${build_packages[@]}" "${test_packages[@]}"
    export QT_QPA_PLATFORM=offscreen
    say "build (warnings are errors) and run every test"
    build_release
    ctest --test-dir "$root/build-release" --output-on-failure -j"$jobs"
    run_sanitized_suites
    ;;
build)
    # The tests are built too: their .npy files are written with xtensor.
    install_missing "${build_packages[@]}" xtensor-dev
    build_release
    ;;
package)
    # The CPU build: the CUDA backend would need the toolkit's libraries (libcudart, cuBLAS),
    # which no Debian package provides, so a .deb made with them would not start elsewhere.
    install_missing "${build_packages[@]}" dpkg-dev file
    # After `test` on a machine without the CUDA toolkit (CI's fresh root) the release build is
    # that build already (tests install nothing): it is packaged instead of built a second time.
    from="$root/build-package"
    cache="$root/build-release/CMakeCache.txt"
    if [ -f "$cache" ] && grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$cache" &&
        ! grep -q '^CMAKE_CUDA_COMPILER:[A-Z]*=/' "$cache"; then
        say "packaging the CUDA-less release build (build-release)"
        from="$root/build-release"
        cmake --build "$from" -j"$jobs"
    else
        configure_and_build "$from" -DCMAKE_BUILD_TYPE=Release -DFLASHVIZ_WERROR=ON \
            -DFLASHVIZ_NATIVE_ARCH=OFF -DFLASHVIZ_WITH_CUDA=OFF -DFLASHVIZ_BUILD_TESTS=OFF
    fi
    mkdir -p "$root/build-package"
    (cd "$from" && cpack -G DEB -B "$root/build-package")
    ls "$root"/build-package/flashviz_*.deb
    ;;
*)
    echo "usage: $0 run|test|package|build" >&2
    exit 2
    ;;
esac
