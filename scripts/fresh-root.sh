#!/usr/bin/env bash
# CI's proof that the README's set-up works on a machine with nothing installed. As root:
#   1. `scripts/setup.sh test` in a fresh minimal Debian 12 root, from a clean copy of the
#      checkout (every suite, then the sanitizer build, fuzzing and the monkey test), and
#      `scripts/setup.sh package` there, which makes the .deb;
#   2. `scripts/setup.sh run` in a second fresh root, so that run's own, shorter package list is
#      proven too (without a display it builds and prints the terminal demos);
#   3. the .deb installed with apt into a third fresh root, and both programs run from the
#      installed paths.
# A package missing from setup.sh's lists fails here. Only the untouched minbase root is cached
# (a tarball, a week at most), so the check is as strict as a first run.
#
#   scripts/fresh-root.sh [test|run|deb|all]   (default all; test also makes the .deb for deb)
set -euo pipefail

stages=${1:-all}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${FLASHVIZ_FRESH_ROOT_DIR:-/var/tmp/flashviz-fresh-root}
cache=${FLASHVIZ_FRESH_ROOT_CACHE:-/var/cache/flashviz-ci}
suite=bookworm

[ "$(id -u)" -eq 0 ] || { echo "fresh-root.sh: run as root (debootstrap and chroot need it)" >&2; exit 2; }

say() { echo "== [fresh root] $(date +%T) $*"; }

# The Debian mirror this machine's apt uses, so that the roots see the same packages.
debian_mirror() {
    local uri
    uri=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' |
          grep -v security | head -1 || true)
    [ -n "$uri" ] || uri=$(grep -hs '^deb ' /etc/apt/sources.list | awk '{print $2}' | head -1 || true)
    echo "${uri:-http://deb.debian.org/debian}"
}

base_tarball() {
    local tarball="$cache/$suite-minbase.tar"
    if [ -f "$tarball" ] && [ -n "$(find "$tarball" -mtime -7)" ]; then
        echo "$tarball"
        return
    fi
    command -v debootstrap >/dev/null || {
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >&2
    }
    mkdir -p "$cache"
    local tmp="$work/debootstrap"
    rm -rf --one-file-system "$tmp"
    say "debootstrap --variant=minbase $suite" >&2
    debootstrap --variant=minbase "$suite" "$tmp" "$(debian_mirror)" >"$work/debootstrap.log" 2>&1 ||
        { tail -20 "$work/debootstrap.log" >&2; exit 1; }
    tar -C "$tmp" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
    rm -rf --one-file-system "$tmp"
    echo "$tarball"
}

mounted=()
unmount_all() {
    local m
    for m in "${mounted[@]}"; do
        umount -R "$m" 2>/dev/null || umount -lR "$m" 2>/dev/null || true
    done
    mounted=()
}
trap unmount_all EXIT

# A new root from the base tarball with this machine's apt sources and settings, /proc, /sys
# and /dev mounted, at $fresh.
fresh=
new_root() { # name
    local dir="$work/root-$1"
    fresh=$dir
    remove_root "$dir"
    mkdir -p "$dir"
    tar -C "$dir" -xf "$(base_tarball)"
    cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
    rm -f "$dir/etc/apt/sources.list"
    cp -f /etc/apt/sources.list "$dir/etc/apt/" 2>/dev/null || true
    find /etc/apt/sources.list.d -maxdepth 1 \( -name '*.sources' -o -name '*.list' \) \
        -exec cp -f {} "$dir/etc/apt/sources.list.d/" \;
    cp -f /etc/apt/apt.conf.d/* "$dir/etc/apt/apt.conf.d/" 2>/dev/null || true
    cp -f /usr/share/keyrings/*.gpg "$dir/usr/share/keyrings/" 2>/dev/null || true
    mount -t proc proc "$dir/proc"
    mount -t sysfs sysfs "$dir/sys"
    mount --rbind /dev "$dir/dev" && mount --make-rslave "$dir/dev"
    mounted+=("$dir/proc" "$dir/sys" "$dir/dev")
}

remove_root() { # dir
    [ -d "$1" ] || return 0
    local m
    for m in proc sys dev; do umount -R "$1/$m" 2>/dev/null || true; done
    if findmnt -rn -o TARGET | grep -q "^$1/"; then
        echo "fresh-root.sh: $1 still has mounts; not removing it" >&2
        return 1
    fi
    rm -rf --one-file-system "$1"
}

# A clean copy of the checkout: the files git tracks and the new ones it does not ignore (on
# CI's clean clone, that is the commit). FLASHVIZ_FRESH_ROOT_FROM=HEAD takes the last commit
# alone, leaving work in progress out.
copy_checkout() { # dir
    mkdir -p "$1"
    if [ "${FLASHVIZ_FRESH_ROOT_FROM:-}" = HEAD ]; then
        git -C "$root" archive HEAD | tar -C "$1" -xf -
        return
    fi
    git -C "$root" ls-files -z --cached --others --exclude-standard |
        tar -C "$root" --null --ignore-failed-read -T - -cf - | tar -C "$1" -xf -
}

in_root() { # dir, command
    chroot "$1" /usr/bin/env -i HOME=/root LANG=C.UTF-8 CI=true TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        FLASHVIZ_FUZZ_SECONDS="${FLASHVIZ_FUZZ_SECONDS:-60}" \
        FLASHVIZ_MONKEY_SECONDS="${FLASHVIZ_MONKEY_SECONDS:-150}" \
        /bin/bash -c "$2"
}

stage_test() {
    new_root test
    local dir=$fresh
    copy_checkout "$dir/src/flashviz"
    say "scripts/setup.sh test (no package installed but minbase)"
    in_root "$dir" "cd /src/flashviz && scripts/setup.sh test"
    say "scripts/setup.sh package"
    in_root "$dir" "cd /src/flashviz && scripts/setup.sh package"
    mkdir -p "$work/packages"
    rm -f "$work"/packages/*.deb
    cp "$dir"/src/flashviz/build-package/flashviz_*.deb "$work/packages/"
    unmount_all
    remove_root "$dir"
}

stage_run() {
    new_root run
    local dir=$fresh
    copy_checkout "$dir/src/flashviz"
    say "scripts/setup.sh run (no display: it prints the demos)"
    in_root "$dir" "set -o pipefail; cd /src/flashviz && scripts/setup.sh run | tee /tmp/run.log >/dev/null &&
                    grep -q 'DEMO 1' /tmp/run.log && tail -3 /tmp/run.log"
    unmount_all
    remove_root "$dir"
}

stage_deb() {
    local dir deb
    deb=$(ls "$work"/packages/flashviz_*.deb 2>/dev/null | head -1)
    [ -n "$deb" ] || { echo "fresh-root.sh: no .deb in $work/packages (run the test stage)" >&2; exit 1; }
    new_root deb
    dir=$fresh
    cp "$deb" "$dir/tmp/"
    say "apt-get install ./$(basename "$deb")"
    in_root "$dir" "set -e
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends /tmp/$(basename "$deb") >/dev/null
        command -v flashviz flashviz-cli
        flashviz --version
        flashviz-cli demos | grep -c '^' | sed 's/^/flashviz-cli demos: lines printed: /'
        flashviz -platform offscreen --screenshot /tmp/installed.png --size 1280x800
        head -c 8 /tmp/installed.png | od -An -c | grep -q 'P   N   G' && echo 'PNG written'
        ls /usr/share/applications/io.github.flashviz.flashviz.desktop \
           /usr/share/metainfo/io.github.flashviz.flashviz.metainfo.xml \
           /usr/share/icons/hicolor/scalable/apps/io.github.flashviz.flashviz.svg"
    unmount_all
    remove_root "$dir"
}

mkdir -p "$work"
start=$SECONDS
case "$stages" in
test) stage_test ;;
run) stage_run ;;
deb) stage_deb ;;
all) stage_test; stage_run; stage_deb ;;
*) echo "usage: $0 [test|run|deb|all]" >&2; exit 2 ;;
esac
say "done in $((SECONDS - start)) s"
