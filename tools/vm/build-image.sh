#!/usr/bin/env bash
# The guest image for `smartio vm run` and tests/vm_test.sh, built, never
# committed: Debian's cloud kernel (apt-get download + dpkg-deb -x; it has the
# NVMe driver, the 16550 console and ext4 built in) and an initramfs made with
# cpio from busybox-static plus this host's mkfs.ext4, nvme and fio with the
# shared libraries ldd names. The init runs the shell command given base64-
# encoded on the kernel command line (smartio.cmd=...), prints
# "SMARTIO-EXIT <status>" and powers off.
#
# usage: build-image.sh OUTDIR [PROGRAM...]
#        (writes OUTDIR/vmlinuz, OUTDIR/initrd.img, OUTDIR/programs: the PROGRAMs' names)
# PROGRAMs (smartio's guest tools, built by meson: tools/vm/guest) go to
# /usr/bin of the guest with their libraries.
# Reuses what is there while the kernel version, this script and the
# programs are unchanged.
set -euo pipefail
me=build-image.sh
die() { echo "$me: $*" >&2; exit 1; }
out=${1:?usage: build-image.sh OUTDIR [PROGRAM...]}
shift
guest_progs=()
for p in "$@"; do
	[ -x "$p" ] || die "$p: no such program (ninja -C build first)"
	guest_progs+=("$(cd "$(dirname "$p")" && pwd)/$(basename "$p")")
done
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

for c in apt-get dpkg-deb cpio gzip ldd; do
	command -v "$c" >/dev/null || die "$c is missing"
done
[ -x /bin/busybox ] || die "busybox is missing (apt-get install busybox-static)"
file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' ||
	die "/bin/busybox is not static (apt-get install busybox-static)"
tools=""
for t in mkfs.ext4 nvme fio sha256sum; do
	p=$(command -v "$t") || die "$t is missing (apt-get install e2fsprogs nvme-cli fio)"
	tools="$tools $p"
done

kpkg=linux-image-cloud-amd64
kver=$(apt-cache show "$kpkg" 2>/dev/null | sed -n 's/^Depends: \(linux-image-[^ ,]*\).*/\1/p' | head -n1)
[ -n "$kver" ] || die "apt does not know $kpkg (apt-get update?)"
key="$kver $(cat "$0" "$here/init.sh" ${guest_progs[@]+"${guest_progs[@]}"} | sha256sum | cut -c1-12)"
if [ -f "$out/key" ] && [ "$(cat "$out/key")" = "$key" ] && [ -f "$out/vmlinuz" ] &&
	[ -f "$out/initrd.img" ]; then
	echo "$me: image ($kver) already built in $out"
	exit 0
fi
rm -f "$out/key"
work="$out/work"
rm -rf "$work"
mkdir -p "$work/dl" "$work/kernel"

echo "$me: apt-get download $kver"
(cd "$work/dl" && apt-get download -q "$kver") >"$work/download.log" 2>&1 ||
	{ tail -5 "$work/download.log" >&2; die "apt-get download $kver failed (network?)"; }
dpkg-deb -x "$work"/dl/"$kver"_*.deb "$work/kernel"
k=$(ls "$work"/kernel/boot/vmlinuz-* | head -n1)
[ -f "$k" ] || die "no vmlinuz in $kver"
cp "$k" "$out/vmlinuz.tmp"

# The initramfs tree.
r="$work/root"
mkdir -p "$r"/{bin,sbin,dev,proc,sys,tmp,mnt,etc,usr/bin,usr/sbin}
cp /bin/busybox "$r/bin/busybox"
for a in $(/bin/busybox --list); do
	[ -e "$r/bin/$a" ] || ln -s busybox "$r/bin/$a"
done
# The host's tools with their libraries, at the same paths.
for t in $tools; do
	cp -L "$t" "$r$t" 2>/dev/null || { mkdir -p "$r$(dirname "$t")"; cp -L "$t" "$r$t"; }
	for lib in $(ldd "$t" | awk '/=> \//{print $3} /^[[:space:]]*\/.*ld-linux/{print $1}'); do
		mkdir -p "$r$(dirname "$lib")"
		[ -e "$r$lib" ] || cp -L "$lib" "$r$lib"
	done
done
# smartio's guest tools.
for p in ${guest_progs[@]+"${guest_progs[@]}"}; do
	install -m 0755 "$p" "$r/usr/bin/$(basename "$p")"
	for lib in $(ldd "$p" | awk '/=> \//{print $3} /^[[:space:]]*\/.*ld-linux/{print $1}'); do
		mkdir -p "$r$(dirname "$lib")"
		[ -e "$r$lib" ] || cp -L "$lib" "$r$lib"
	done
done
# fio loads its engines from libraries; libaio is the one the guest job uses.
mkdir -p "$r/usr/lib/x86_64-linux-gnu"
for lib in /usr/lib/x86_64-linux-gnu/libaio.so.1* /lib/x86_64-linux-gnu/libaio.so.1*; do
	if [ -e "$lib" ]; then cp -L "$lib" "$r/usr/lib/x86_64-linux-gnu/"; fi
done
[ -e "$r/lib64" ] || ln -s usr/lib64 "$r/lib64" 2>/dev/null || true
echo 'root:x:0:0:root:/:/bin/sh' >"$r/etc/passwd"
install -m 0755 "$here/init.sh" "$r/init"

(cd "$r" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initrd.img.tmp"
mv "$out/vmlinuz.tmp" "$out/vmlinuz"
mv "$out/initrd.img.tmp" "$out/initrd.img"
rm -rf "$work"
# The guest tools it holds (tests/vm_test.sh looks for them here).
for p in ${guest_progs[@]+"${guest_progs[@]}"}; do basename "$p"; done >"$out/programs"
echo "$key" >"$out/key"
echo "$me: $out/vmlinuz and $out/initrd.img ($(du -h "$out/initrd.img" | cut -f1))"
