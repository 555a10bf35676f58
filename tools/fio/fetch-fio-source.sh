#!/usr/bin/env bash
# Fetch the Debian source package of the installed fio, unpack it (with
# Debian's patches) and configure it the way debian/rules does, so that the
# headers and config-host.h an external ioengine is compiled against are those
# of the fio binary that will load it. Nothing is vendored: this runs at build
# time (meson -Dfio_engine=true, or `make fio-engine`).
#
# The source comes through the machine's own package manager: a private apt
# configuration under OUTDIR whose only entries are deb-src twins of the
# machine's configured deb entries (/etc/apt/sources.list, sources.list.d/*.list
# and *.sources), then `apt-get source`, which checks the files against the
# signed Sources index. Nothing of the system's apt state is changed.
#
# usage: fetch-fio-source.sh OUTDIR [STAMP_HEADER]
#   OUTDIR        the source tree goes to OUTDIR (replaced when the version differs)
#   STAMP_HEADER  written last: a header naming the fio version (the build's target)
set -euo pipefail

out=${1:?usage: fetch-fio-source.sh OUTDIR [STAMP_HEADER]}
stamp=${2:-}
me=fetch-fio-source.sh

die() { echo "$me: $*" >&2; exit 1; }

command -v fio >/dev/null || die "fio is not installed (apt-get install fio)"
command -v dpkg-source >/dev/null || die "dpkg-source is missing (apt-get install dpkg-dev)"
command -v apt-get >/dev/null || die "apt-get is missing: this needs a Debian system"

# deb-src twins of every enabled deb entry, one-line and deb822 forms alike.
derive_sources() {      # derive_sources DIR
	local d=$1 f
	mkdir -p "$d/sources.list.d"
	: >"$d/sources.list"
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -n 's/^[[:space:]]*deb\([[:space:]]\)/deb-src\1/p' "$f" >>"$d/sources.list"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# Keep the stanzas whose Types name deb (and are not disabled), as deb-src.
		awk 'BEGIN { RS = ""; ORS = "\n\n" }
		     {
			if ($0 ~ /(^|\n)[Ee]nabled:[[:space:]]*no/) next
			n = split($0, l, "\n"); keep = 0; s = ""
			for (i = 1; i <= n; i++) {
				if (l[i] ~ /^Types:/) {
					if (l[i] ~ /[[:space:]]deb([[:space:]]|$)/) keep = 1
					l[i] = "Types: deb-src"
				}
				s = s l[i] "\n"
			}
			if (keep) print s
		     }' "$f" >"$d/sources.list.d/$(basename "$f")"
	done
	grep -qs . "$d/sources.list" "$d"/sources.list.d/*.sources ||
		die "no deb entries in /etc/apt/sources.list or /etc/apt/sources.list.d: cannot find fio's source"
}

apt_src() {             # apt_src DIR apt-get-args...: apt-get on the private configuration
	local d=$1
	shift
	apt-get -q -o Dir::Etc::SourceList="$d/sources.list" \
		-o Dir::Etc::SourceParts="$d/sources.list.d" \
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" \
		-o Debug::NoLocking=true -o APT::Sandbox::User="$(id -un)" "$@"
}
# The source package and version of the installed binary package.
src=$(dpkg-query -W -f='${source:Package}' fio 2>/dev/null) ||
	die "fio is not installed from a Debian package (dpkg does not know it)"
ver=$(dpkg-query -W -f='${source:Version}' fio)
upver=${ver#*:}                 # no epoch in file names
upver=${upver%-*}               # upstream version
[ -n "$src" ] && [ -n "$ver" ] || die "cannot tell fio's source package"
tree="$out/tree"

if [ -f "$out/version" ] && [ "$(cat "$out/version")" = "$ver" ] && [ -f "$tree/config-host.h" ]; then
	echo "$me: fio $ver source already configured in $tree"
else
	rm -rf "$out"
	mkdir -p "$out/dl" "$out/apt/lists/partial" "$out/apt/cache/archives/partial"
	derive_sources "$out/apt"
	dsc="${src}_${ver#*:}.dsc"
	echo "$me: apt-get source $src=$ver (deb-src entries derived from the configured sources)"
	apt_src "$out/apt" update >"$out/apt-update.log" 2>&1 ||
		{ tail -5 "$out/apt-update.log" >&2; die "apt-get update of the deb-src entries failed (network?)"; }
	(cd "$out/dl" && apt_src "$out/apt" source --download-only "$src=$ver") \
		>"$out/apt-source.log" 2>&1 ||
		{ tail -5 "$out/apt-source.log" >&2; die "apt-get source $src=$ver failed: is that version still in the configured sources?"; }
	[ -f "$out/dl/$dsc" ] || die "apt-get source did not fetch $dsc"
	# apt-get checked every file against the signed Sources index; dpkg-source
	# checks them against the .dsc again and applies Debian's patches.
	(cd "$out/dl" && dpkg-source --no-copy -x "$dsc" "$tree") >"$out/dpkg-source.log" 2>&1 ||
		{ cat "$out/dpkg-source.log" >&2; die "dpkg-source -x failed"; }
	# debian/rules: ./configure --disable-native --prefix=/usr --enable-gfio --enable-libnbd
	args=$(sed -n 's/^[[:space:]]*\.\/configure[[:space:]]*//p' "$tree/debian/rules" | head -n1)
	[ -n "$args" ] || die "no ./configure line in debian/rules"
	echo "$me: configure $args"
	# shellcheck disable=SC2086
	if ! (cd "$tree" && ./configure $args) >"$out/configure.log" 2>&1; then
		# gfio (the GTK front end) needs GTK+ 2 headers; it defines nothing
		# any header reads, so without them configure runs without it.
		if grep -q "gtk" "$out/configure.log" && [[ " $args " == *" --enable-gfio "* ]]; then
			args=${args/--enable-gfio/}
			echo "$me: no GTK+ 2 headers: configure $args (gfio only builds the GUI)"
			# shellcheck disable=SC2086
			(cd "$tree" && ./configure $args) >"$out/configure.log" 2>&1 ||
				{ tail -20 "$out/configure.log" >&2; die "fio's configure failed"; }
		else
			tail -20 "$out/configure.log" >&2
			die "fio's configure failed"
		fi
	fi
	echo "$ver" >"$out/version"
fi

# Structures an engine touches (thread_data, io_u) have members that depend on
# these options: they must match the installed binary, which says what it has.
engines=$(fio --enghelp 2>/dev/null | tr -d '\t' | tr '\n' ' ')
missing=""
check() {       # check CONFIG_X "engine name" package
	if [[ " $engines " == *" $2 "* ]] && ! grep -q "^#define $1\$" "$tree/config-host.h"; then
		missing="$missing $3"
	fi
}
check CONFIG_LIBAIO libaio libaio-dev
check CONFIG_POSIXAIO posixaio libc6-dev
check CONFIG_RDMA rdma "librdmacm-dev libibverbs-dev"
if fio --cmdhelp=numa_cpu_nodes 2>/dev/null | grep -q numa_cpu_nodes &&
	! grep -q '^#define CONFIG_LIBNUMA$' "$tree/config-host.h"; then
	missing="$missing libnuma-dev"
fi
if [ -n "$missing" ]; then
	rm -f "$out/version"
	die "the installed fio was built with features whose headers are missing here, so" \
		"its structures would not match: apt-get install$missing, then run again"
fi

if [ -n "$stamp" ]; then
	printf '/* Generated by tools/fio/fetch-fio-source.sh */\n#define SFIO_FIO_VERSION "%s"\n' \
		"$ver" >"$stamp.tmp"
	mv "$stamp.tmp" "$stamp"
fi
echo "$me: fio $ver ready in $tree"
