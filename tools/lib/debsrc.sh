# shellcheck shell=bash
# Shared by the build-time fetchers of Debian source packages (tools/fio,
# tools/qemu): a private apt configuration whose only entries are deb-src twins
# of the machine's configured deb entries (/etc/apt/sources.list,
# sources.list.d/*.list and *.sources). `apt-get source` through it checks the
# files against the signed Sources index; nothing of the system's apt state is
# changed. Source this file; the caller defines die().

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
		die "no deb entries in /etc/apt/sources.list or /etc/apt/sources.list.d: cannot find a source package"
}

apt_src() {             # apt_src DIR apt-get-args...: apt-get on the private configuration
	local d=$1
	shift
	apt-get -q -o Dir::Etc::SourceList="$d/sources.list" \
		-o Dir::Etc::SourceParts="$d/sources.list.d" \
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" \
		-o Debug::NoLocking=true -o APT::Sandbox::User="$(id -un)" "$@"
}

# fetch_source OUTDIR SRC VER TREE: apt-get source SRC=VER into OUTDIR/dl and
# unpack it with Debian's patches into TREE (logs under OUTDIR).
fetch_source() {
	local out=$1 src=$2 ver=$3 tree=$4 dsc
	mkdir -p "$out/dl" "$out/apt/lists/partial" "$out/apt/cache/archives/partial"
	derive_sources "$out/apt"
	dsc="${src}_${ver#*:}.dsc"
	echo "${me:-debsrc}: apt-get source $src=$ver (deb-src entries derived from the configured sources)"
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
}
