#!/usr/bin/env bash
# Every command of README.md and docs/tutorial.md runs, as a newcomer would
# run them (TAP, one test point per command).
#
# From a fresh `git clone` of the tree's HEAD (uncommitted changes are not in
# it), in a private HOME (so `make install PREFIX=$HOME/.local` and the
# README's `export PATH="$HOME/.local/bin:$PATH"` touch nothing of the user's),
# it runs the commands of every ```sh block of README.md and then of
# docs/tutorial.md, in order, in one bash at the top of the clone: the
# README's own install block does the install and sets PATH. A command that
# exits non-zero fails the test with its output, and stops it (later ones
# depend on it). The cluster directory is private ($SMARTIO_CLUSTER).
#
# Markers, an HTML comment on the line before a block (tests/readme_doc_cmds.py):
#   <!-- not-tested: WHY -->          not run (`make demo`, `make test`)
#   <!-- test: needs-fio-engine -->   skipped unless the fio engine is built
#   <!-- test: needs-fuse -->         skipped unless FUSE can be used
# The fio engine is built in the clone only if this build has it
# ($SMARTIO_BUILD_DIR/tools/fio: `make fio-engine`); its configured fio source
# is copied, so the clone needs no network. `make` installs no packages here
# (MAKEFLAGS empties DEB_PACKAGES): a missing one fails the build instead.
set -uo pipefail

SRC=$(realpath "${SMARTIO_SOURCE_DIR:-.}")
BUILD=$(realpath "${SMARTIO_BUILD_DIR:-build}")
tmp=$(mktemp -d)
clone=$tmp/src

cleanup() {
	local pid d
	# Mounts, clusters and stray processes of the run, whatever state it stopped in.
	awk -v t="$tmp" 'index($2, t) == 1 { print $2 }' /proc/mounts | while read -r m; do
		fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	for d in $(find "$tmp" -name 'host-*.pid' -printf '%h\n' 2>/dev/null | sort -u); do
		"$clone/build/tools/smartio/smartio" cluster down --dir "$d" >/dev/null 2>&1
	done
	for pid in $(pgrep -f "$tmp" 2>/dev/null); do
		[ "$pid" != $$ ] && kill "$pid" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

rev=$(git -C "$SRC" rev-parse HEAD) || { echo "Bail out! $SRC is not a git tree"; exit 2; }
if ! { git clone -q --no-checkout "$SRC" "$clone" && git -C "$clone" fetch -q "$SRC" HEAD &&
	git -C "$clone" checkout -q FETCH_HEAD; }; then
	echo "Bail out! cannot clone $SRC"
	exit 2
fi
echo "# testing HEAD ${rev:0:12} of $SRC in a fresh clone"
git -C "$SRC" diff --quiet HEAD -- README.md docs 2>/dev/null ||
	echo "# note: README.md or docs/ have uncommitted changes; the committed ones are tested"

# The fio engine: built here only if this build has it (no network in tests).
have_fio=0
if [ -f "$BUILD/tools/fio/smartio-fio.so" ] && [ -f "$BUILD/tools/fio/fio-src/version" ]; then
	if meson setup "$clone/build" "$clone" --werror -Dfio_engine=true >"$tmp/setup.log" 2>&1; then
		mkdir -p "$clone/build/tools/fio/fio-src"
		cp -r "$BUILD/tools/fio/fio-src/tree" "$BUILD/tools/fio/fio-src/version" \
			"$clone/build/tools/fio/fio-src/"
		have_fio=1
	else
		echo "Bail out! meson setup of the clone failed:"; sed 's/^/# /' "$tmp/setup.log"
		exit 2
	fi
fi
have_fuse=0
if [ -w /dev/fuse ] && { [ "$(id -u)" -eq 0 ] || command -v fusermount3 >/dev/null; }; then
	have_fuse=1
fi

# The commands, as one bash script run at the top of the clone.
python3 "$SRC/tests/readme_doc_cmds.py" "$clone/README.md" "$clone/docs/tutorial.md" \
	>"$tmp/cmds.tsv" || { echo "Bail out! cannot read the docs"; exit 2; }
[ -s "$tmp/cmds.tsv" ] || { echo "Bail out! no commands found"; exit 2; }
mkdir -p "$tmp/home" "$tmp/tmp" "$tmp/out"
{
	cat <<'PRELUDE'
set -o pipefail
trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT
__n=0
__run() {   # __run WHERE COMMAND: eval'd here, so variables, cd and jobs persist
	__n=$((__n + 1))
	eval "$2" >"$__out/$__n.txt" 2>&1 </dev/null
	__rc=$?
	if [ "$__rc" -ne 0 ]; then
		echo "not ok $__n - $1: $2"
		echo "# exit status $__rc; its output:"
		sed 's/^/#   /' "$__out/$__n.txt"
		echo "1..$__n"
		exit 1
	fi
	echo "ok $__n - $1: $2"
}
__skip() {  # __skip WHERE COMMAND WHY
	__n=$((__n + 1))
	echo "ok $__n - $1: $2 # SKIP $3"
}
PRELUDE
	while IFS=$'\t' read -r where needs cmd; do
		where=${where#"$clone"/}
		if [ "$needs" = fio-engine ] && [ "$have_fio" != 1 ]; then
			printf '__skip %q %q %q\n' "$where" "$cmd" \
				"the fio engine was not built (make fio-engine, then make test)"
		elif [ "$needs" = fuse ] && [ "$have_fuse" != 1 ]; then
			printf '__skip %q %q %q\n' "$where" "$cmd" "FUSE is not available here"
		elif [ "$needs" != - ] && [ "$needs" != fio-engine ] && [ "$needs" != fuse ]; then
			echo "echo 'Bail out! $where: unknown marker needs-$needs'; exit 2"
		else
			printf '__run %q %q\n' "$where" "$cmd"
		fi
	done <"$tmp/cmds.tsv"
	# shellcheck disable=SC2016  # expanded by run.sh
	echo 'echo "1..$__n"'
} >"$tmp/run.sh"

# ccache keeps its cache and configuration where the real HOME has them.
ccache_env=()
if command -v ccache >/dev/null; then
	ccache_env=(CCACHE_DIR="$(ccache -k cache_dir 2>/dev/null)")
	cfg=$(ccache -p 2>/dev/null | sed -n 's/^(\(\/[^)]*ccache\.conf\)).*/\1/p' | head -n1)
	[ -n "$cfg" ] && ccache_env+=(CCACHE_CONFIGPATH="$cfg")
fi

cd "$clone" || exit 2
env -u SMARTIO_HOST -u PKG_CONFIG_PATH -u SMARTIOD -u LD_PRELOAD \
	HOME="$tmp/home" TMPDIR="$tmp/tmp" SMARTIO_CLUSTER="$tmp/cluster" \
	MAKEFLAGS="DEB_PACKAGES= FIO_DEB_PACKAGES=" __out="$tmp/out" "${ccache_env[@]}" \
	timeout 600 bash "$tmp/run.sh"
