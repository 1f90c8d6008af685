#!/usr/bin/env bash
# CI's proof that the README's set-up works on a machine with nothing installed. As root:
#   test  `scripts/setup.sh test` in a fresh minimal Debian 12 root, from a clean copy of the
#         checkout (every suite, then the sanitizer build, fuzzing and the monkey test), then
#         `scripts/setup.sh package` there, which makes the .deb;
#   run   `scripts/setup.sh run` in a second fresh root, so that run's own, shorter package list
#         is proven too (without a display it builds and prints the terminal demos);
#   deb   the .deb installed with apt into a third fresh root, both programs run from there;
#   cuda  where this machine has a CUDA toolkit (the roots have none, as a user's machine
#         without CUDA), `scripts/setup.sh build` here, so that the kernels still compile.
# A package missing from setup.sh's lists fails here. Only the untouched minbase root is cached
# (a tarball, a week at most), so the check is as strict as a first run.
#
#   scripts/fresh-root.sh [test|run|deb|cuda|all]   (default all; deb needs test's .deb)
set -euo pipefail

stages=${1:-all}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${FLASHVIZ_FRESH_ROOT_DIR:-/var/tmp/flashviz-fresh-root}
cache=${FLASHVIZ_FRESH_ROOT_CACHE:-/var/cache/flashviz-ci}
suite=bookworm

say() { echo "== [fresh root] $(date +%T) $*"; }
fail() { echo "fresh-root.sh: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || { echo "fresh-root.sh: run as root (debootstrap and chroot need it)" >&2; exit 2; }
mkdir -p "$work"
work=$(cd "$work" && pwd -P)
# Bind mounts of /dev live inside the roots: a work folder on a memory file system could share
# one with them, and then removing a root could reach the host's files.
case "$(stat -f -c %T "$work")" in
tmpfs | devtmpfs | ramfs) fail "$work is on a memory file system; set FLASHVIZ_FRESH_ROOT_DIR to a disk folder" ;;
esac

# The Debian mirror this machine's apt uses, so that the roots see the same packages.
debian_mirror() {
    local uri
    uri=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' |
          grep -v security | head -1 || true)
    [ -n "$uri" ] || uri=$(grep -hs '^deb ' /etc/apt/sources.list | awk '{print $2}' | grep -v security | head -1 || true)
    echo "${uri:-http://deb.debian.org/debian}"
}

security_mirror() {
    local uri
    uri=$(grep -hs '^URIs:.*security' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | head -1 || true)
    [ -n "$uri" ] || uri=$(grep -hs '^deb .*security' /etc/apt/sources.list | awk '{print $2}' | head -1 || true)
    echo "${uri:-http://deb.debian.org/debian-security}"
}

base_tarball() {
    local tarball="$cache/$suite-minbase.tar"
    if [ -f "$tarball" ] && [ -n "$(find "$tarball" -mtime -7)" ]; then
        echo "$tarball"
        return
    fi
    if ! command -v debootstrap >/dev/null; then
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >&2
    fi
    mkdir -p "$cache"
    local tmp="$work/debootstrap"
    remove_root "$tmp"
    say "debootstrap --variant=minbase $suite" >&2
    debootstrap --variant=minbase "$suite" "$tmp" "$(debian_mirror)" >"$work/debootstrap.log" 2>&1 ||
        { tail -20 "$work/debootstrap.log" >&2; exit 1; }
    tar -C "$tmp" -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
    remove_root "$tmp"
    echo "$tarball"
}

# Everything mounted below $work, from /proc/self/mountinfo (whose paths escape spaces).
mounts_below() { # dir
    awk -v p="$1" '{ gsub(/\\040/, " ", $5); if ($5 == p || index($5, p "/") == 1) print $5 }' \
        /proc/self/mountinfo
}

unmount_below() { # dir
    local m
    # Deepest first; the /dev binds are slaves, so unmounting them never reaches the host's.
    for m in $(mounts_below "$1" | sort -r); do
        mount --make-rslave "$m" 2>/dev/null || true
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
}

# Processes started inside a root (a build, a test) are ended with it, also when CI stops us.
kill_inside() { # dir
    local p
    for p in /proc/[0-9]*; do
        case "$(readlink "$p/root" 2>/dev/null)" in
        "$1" | "$1"/*) kill -9 "${p#/proc/}" 2>/dev/null || true ;;
        esac
    done
}

cleanup() {
    kill_inside "$work"
    unmount_below "$work"
}
trap cleanup EXIT
trap 'echo "fresh-root.sh: interrupted" >&2; exit 130' INT TERM

remove_root() { # dir
    [ -d "$1" ] || return 0
    kill_inside "$1"
    unmount_below "$1"
    [ -z "$(mounts_below "$1")" ] || fail "$1 still has mounts; not removing it"
    rm -rf --one-file-system "$1"
}

# A new root from the base tarball at $fresh: Debian's own sources (from this machine's mirror,
# nothing else of its apt set-up but the Acquire settings, such as a proxy), /proc, /sys, /dev.
fresh=
new_root() { # name
    local dir="$work/root-$1"
    fresh=$dir
    remove_root "$dir"
    mkdir -p "$dir"
    tar -C "$dir" -xf "$(base_tarball)"
    cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
    rm -f "$dir/etc/apt/sources.list"
    cat >"$dir/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $(debian_mirror)
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $(security_mirror)
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    grep -hs '^Acquire::' /etc/apt/apt.conf /etc/apt/apt.conf.d/* >"$dir/etc/apt/apt.conf.d/99host-acquire" || true
    mount -t proc proc "$dir/proc"
    mount -t sysfs sysfs "$dir/sys"
    mount --rbind --make-rslave /dev "$dir/dev"
}

# A clean copy of the checkout: the files git tracks and the new ones it does not ignore (on
# CI's clean clone, that is the commit). FLASHVIZ_FRESH_ROOT_FROM=HEAD takes the last commit
# alone, leaving work in progress out.
copy_checkout() { # dir
    mkdir -p "$1"
    local git=(git -c safe.directory="$root" -C "$root")
    if [ "${FLASHVIZ_FRESH_ROOT_FROM:-}" = HEAD ]; then
        "${git[@]}" archive HEAD | tar -C "$1" -xf -
        return
    fi
    "${git[@]}" ls-files -z --cached --others --exclude-standard |
        tar -C "$root" --null --ignore-failed-read -T - -cf - | tar -C "$1" -xf -
}

in_root() { # dir, command
    chroot "$1" /usr/bin/env -i HOME=/root LANG=C.UTF-8 CI=true TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        FLASHVIZ_FUZZ_SECONDS="${FLASHVIZ_FUZZ_SECONDS:-60}" \
        FLASHVIZ_MONKEY_SECONDS="${FLASHVIZ_MONKEY_SECONDS:-150}" \
        /bin/bash -c "set -euo pipefail; $2"
}

stage_test() {
    new_root test
    local dir=$fresh
    copy_checkout "$dir/src/flashviz"
    say "scripts/setup.sh test (no package installed but minbase)"
    in_root "$dir" "cd /src/flashviz && scripts/setup.sh test" ||
        fail "scripts/setup.sh test failed in the fresh root (kept for a look: $dir)"
    say "scripts/setup.sh package"
    in_root "$dir" "cd /src/flashviz && scripts/setup.sh package"
    mkdir -p "$work/packages"
    rm -f "$work"/packages/*.deb
    cp "$dir"/src/flashviz/build-package/flashviz_*.deb "$work/packages/"
    remove_root "$dir"
}

stage_run() {
    new_root run
    local dir=$fresh
    copy_checkout "$dir/src/flashviz"
    say "scripts/setup.sh run (no display: it prints the demos)"
    in_root "$dir" "cd /src/flashviz && scripts/setup.sh run >/tmp/run.log
                    grep -q 'DEMO 1' /tmp/run.log || { echo 'run printed no demos' >&2; exit 1; }
                    tail -3 /tmp/run.log" ||
        fail "scripts/setup.sh run failed in the fresh root (kept for a look: $dir)"
    remove_root "$dir"
}

stage_deb() {
    local deb
    deb=$(ls "$work"/packages/flashviz_*.deb 2>/dev/null | head -1)
    [ -n "$deb" ] || fail "no .deb in $work/packages (the test stage makes it)"
    new_root deb
    local dir=$fresh
    cp "$deb" "$dir/tmp/"
    cp "$root/tests/fuzz/corpus/fuzz_npy/valid-f8-2d.npy" "$dir/tmp/x.npy"
    say "apt-get install ./$(basename "$deb") (made $(date -r "$deb" +%T))"
    in_root "$dir" "
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /tmp/$(basename "$deb") >/dev/null
        command -v flashviz flashviz-cli
        flashviz --version
        flashviz-cli demos >/tmp/demos.txt
        grep -q 'DEMO 9' /tmp/demos.txt || { echo 'flashviz-cli demos printed no demo 9' >&2; exit 1; }
        echo \"flashviz-cli demos: \$(wc -l </tmp/demos.txt) lines\"
        flashviz -platform offscreen --screenshot /tmp/installed.png --size 1280x800
        [ \"\$(head -c 8 /tmp/installed.png | od -An -tx1 | tr -d ' \\n')\" = 89504e470d0a1a0a ] ||
            { echo 'flashviz wrote no PNG' >&2; exit 1; }
        echo \"PNG written: \$(wc -c </tmp/installed.png) bytes\"
        # The export's encoders (libx264, the GIF palette filters) and the .npy reader, installed.
        flashviz -platform offscreen --export /tmp/installed.mp4 --to 3 --size 640x360
        flashviz -platform offscreen --export /tmp/installed.gif --to 3 --size 640x360
        [ \"\$(head -c 8 /tmp/installed.mp4 | tail -c 4)\" = ftyp ] || { echo 'no MP4 written' >&2; exit 1; }
        [ \"\$(head -c 6 /tmp/installed.gif)\" = GIF89a ] || { echo 'no GIF written' >&2; exit 1; }
        flashviz-cli run --q /tmp/x.npy --k /tmp/x.npy --v /tmp/x.npy --br 2 --bc 2 | grep 'inputs from'
        ls /usr/share/mime/packages/io.github.flashviz.flashviz.xml
        ls /usr/share/applications/io.github.flashviz.flashviz.desktop \
           /usr/share/metainfo/io.github.flashviz.flashviz.metainfo.xml \
           /usr/share/icons/hicolor/scalable/apps/io.github.flashviz.flashviz.svg" ||
        fail "the installed package failed (kept for a look: $dir)"
    cp "$dir/tmp/installed.png" "$work/installed.png"
    remove_root "$dir"
}

stage_cuda() {
    if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
        say "no CUDA toolkit on this machine: the CUDA backend is not built"
        return
    fi
    say "scripts/setup.sh build here, with the CUDA toolkit (the kernels compile; no GPU runs them)"
    "$root/scripts/setup.sh" build
}

start=$SECONDS
case "$stages" in
test) stage_test ;;
run) stage_run ;;
deb) stage_deb ;;
cuda) stage_cuda ;;
all)
    rm -f "$work"/packages/*.deb
    stage_test
    stage_run
    stage_deb
    stage_cuda
    ;;
*) echo "usage: $0 [test|run|deb|cuda|all]" >&2; exit 2 ;;
esac
say "done in $((SECONDS - start)) s"
