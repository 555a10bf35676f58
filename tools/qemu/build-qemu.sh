#!/usr/bin/env bash
# Build QEMU (x86_64 system emulator, TCG) from Debian's qemu source package
# with smartio's own PCI device, tools/qemu/smartio-mdev.c, compiled in.
# Nothing is vendored: the source comes through `apt-get source` (deb-src twins
# of the configured apt sources, tools/lib/debsrc.sh), our file is copied into
# the unpacked tree and added to hw/misc/meson.build there (its memory
# backend also to qapi/qom.json, tools/qemu/qom-schema.py). The tree and its
# build live in a cache directory outside this repository and are reused; the
# finished binary is installed under a name keyed by QEMU's version and our
# file's hash, so a changed device file rebuilds (incrementally) and a
# changed QEMU version starts over.
#
# usage: build-qemu.sh [--print-path]
#   prints the path of the binary on its last line
#   --print-path: only print where the binary for the current inputs is (or
#                 would be) and exit 0 if it exists, 1 if not
# env: SMARTIO_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/smartio)
set -euo pipefail
me=build-qemu.sh
die() { echo "$me: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
dev="$here/smartio-mdev.c"
cache=${SMARTIO_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/smartio}

# The QEMU version: the one Debian ships with the firmware we boot with
# (qemu-system-data), else the candidate of qemu-system-x86.
ver=$(dpkg-query -W -f='${source:Version}' qemu-system-data 2>/dev/null || true)
[ -n "$ver" ] || ver=$(apt-cache show qemu-system-x86 2>/dev/null | sed -n 's/^Version: //p' | head -n1)
[ -n "$ver" ] || die "cannot tell Debian's qemu version (apt-get install qemu-system-data)"
hash=$(cat "$dev" "$here/qom-schema.py" | sha256sum | cut -c1-12)
safever=$(echo "${ver#*:}" | tr -c 'A-Za-z0-9.+\n' '_')
bin="$cache/qemu-$safever-$hash/qemu-system-x86_64"
if [ "${1:-}" = "--print-path" ]; then
	echo "$bin"
	[ -x "$bin" ]
	exit
fi
if [ -x "$bin" ]; then
	echo "$me: QEMU $ver with smartio-mdev $hash already built"
	ln -sfn "$bin" "$cache/qemu-system-x86_64"
	echo "$bin"
	exit 0
fi

for c in dpkg-source apt-get ninja python3 flex bison pkg-config; do
	command -v "$c" >/dev/null || die "$c is missing (make deps-vm)"
done
if ! pkg-config --exists glib-2.0 pixman-1 || ! [ -f /usr/include/libfdt.h ]; then
	die "glib/pixman/libfdt headers missing (apt-get install libglib2.0-dev libpixman-1-dev libfdt-dev)"
fi

# shellcheck source=../lib/debsrc.sh
. "$here/../lib/debsrc.sh"

src="$cache/qemu-src-$safever"
tree="$src/tree"
if ! [ -f "$src/configured" ]; then
	rm -rf "$src"
	fetch_source "$src" qemu "$ver" "$tree"
	# Our device joins the other miscellaneous PCI devices.
	echo "softmmu_ss.add(when: 'CONFIG_PCI', if_true: files('smartio-mdev.c'))" \
		>>"$tree/hw/misc/meson.build"
	cp "$dev" "$tree/hw/misc/smartio-mdev.c"
	echo "$me: configure (x86_64-softmmu, TCG only)"
	(mkdir -p "$tree/build" && cd "$tree/build" &&
		../configure --target-list=x86_64-softmmu --without-default-features \
			--enable-tcg --enable-fdt=system --disable-docs --disable-werror) \
		>"$src/configure.log" 2>&1 ||
		{ tail -20 "$src/configure.log" >&2; die "QEMU's configure failed (log: $src/configure.log)"; }
	touch "$src/configured"
fi
# -object validates types against the QAPI schema: our memory backend joins it.
python3 "$here/qom-schema.py" "$tree" || die "cannot add memory-backend-smartio to qapi/qom.json"
# Copy only when changed, so ninja rebuilds only when our file did.
cmp -s "$dev" "$tree/hw/misc/smartio-mdev.c" || cp "$dev" "$tree/hw/misc/smartio-mdev.c"
echo "$me: building QEMU $ver in $tree/build (minutes the first time)"
start=$(date +%s)
ninja -C "$tree/build" -j"${SMARTIO_QEMU_JOBS:-2}" qemu-system-x86_64 >"$src/build.log" 2>&1 ||
	{ grep -B2 -A8 -m3 'error' "$src/build.log" >&2 || tail -30 "$src/build.log" >&2
	  die "QEMU build failed (log: $src/build.log)"; }
mkdir -p "$(dirname "$bin")"
cp "$tree/build/qemu-system-x86_64" "$bin.tmp"
mv "$bin.tmp" "$bin"
# The stable name smartio vm run looks for.
ln -sfn "$bin" "$cache/qemu-system-x86_64"
echo "$me: built in $(( $(date +%s) - start )) s"
echo "$bin"
