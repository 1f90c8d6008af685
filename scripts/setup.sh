#!/usr/bin/env bash
# FlashViz set-up on Debian 12: installs the packages that are missing, builds, then either starts
# the visualiser (`run`) or runs every test (`test`, what CI does).
#
#   scripts/setup.sh run [flashviz options]   build and start the GUI
#   scripts/setup.sh test                     build with warnings as errors, run all tests,
#                                             then the core tests under ASan + UBSan
set -euo pipefail

mode=${1:-run}
[ $# -gt 0 ] && shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)

packages=(build-essential cmake ninja-build pkg-config libeigen3-dev nlohmann-json3-dev
          qt6-base-dev qt6-charts-dev qt6-qpa-plugins libgl-dev)

install_missing() {
    local missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    echo "== installing: ${missing[*]}"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure_and_build() { # build-dir, extra cmake arguments...
    local dir=$1
    shift
    cmake -S "$root" -B "$dir" -G Ninja "$@"
    cmake --build "$dir" -j"$jobs"
}

case "$mode" in
run)
    install_missing
    configure_and_build "$root/build" -DCMAKE_BUILD_TYPE=Release
    if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
        echo "== no display found: showing the terminal demos instead of the window"
        exec "$root/build/app/cli/flashviz-cli" demos
    fi
    exec "$root/build/app/gui/flashviz" "$@"
    ;;
test)
    install_missing
    export QT_QPA_PLATFORM=offscreen
    echo "== build (warnings are errors) and run every test"
    configure_and_build "$root/build-ci" -DCMAKE_BUILD_TYPE=Release -DFLASHVIZ_WERROR=ON \
        -DFLASHVIZ_NATIVE_ARCH=OFF
    ctest --test-dir "$root/build-ci" --output-on-failure -j"$jobs"
    echo "== the engine and its tests under AddressSanitizer + UndefinedBehaviorSanitizer"
    configure_and_build "$root/build-sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DFLASHVIZ_WERROR=ON -DFLASHVIZ_SANITIZE=ON -DFLASHVIZ_CORE_ONLY=ON -DFLASHVIZ_WITH_CUDA=OFF \
        -DFLASHVIZ_NATIVE_ARCH=OFF
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        ctest --test-dir "$root/build-sanitize" --output-on-failure -j"$jobs"
    ;;
*)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac
