# SPDX-License-Identifier: MIT
# Shared by the shell integration tests: locate the binaries, give the test a
# private cluster directory that is torn down on exit, and TAP helpers.
# Source it after `set -euo pipefail`; call tap_done last.
#   SMARTIO_BUILD_DIR  build tree (default ./build)
#   SMARTIO_SOURCE_DIR source tree (default .)

BUILD=${SMARTIO_BUILD_DIR:-./build}
SRC=${SMARTIO_SOURCE_DIR:-.}
SMARTIO=$(realpath "$BUILD/tools/smartio/smartio")
[ -x "$SMARTIO" ] || { echo "Bail out! no smartio binary at $SMARTIO (set SMARTIO_BUILD_DIR)"; exit 2; }

WORK=$(mktemp -d)
export SMARTIO_CLUSTER=$WORK/c
unset SMARTIO_HOST

tap_cleanup() {
	if [ -e "$SMARTIO_CLUSTER/topology.yaml" ]; then
		"$SMARTIO" cluster down >/dev/null 2>&1 || true
	fi
	rm -rf "$WORK"
}
trap tap_cleanup EXIT

n=0
failed=0
OUT=$WORK/out

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	if [ -s "$OUT" ]; then sed 's/^/#   /' "$OUT" | head -40; fi
}
# check DESCRIPTION COMMAND...: the command must succeed; its output goes to $OUT.
check() {
	local desc=$1
	shift
	if "$@" >"$OUT" 2>&1; then ok "$desc"; else not_ok "$desc"; fi
}
# todo DESCRIPTION REASON COMMAND...: as check, for a known open bug (TAP's
# TODO): a failure prints "not ok N - DESCRIPTION # TODO REASON" and is not
# counted as one (.ci/run-tests reports it apart); a success is an "ok".
todo() {
	local desc=$1 why=$2
	shift 2
	n=$((n + 1))
	if "$@" >"$OUT" 2>&1; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc # TODO $why"
		if [ -s "$OUT" ]; then sed 's/^/#   /' "$OUT" | head -40; fi
	fi
}
# check_fails DESCRIPTION COMMAND...: the command must fail.
check_fails() {
	local desc=$1
	shift
	if "$@" >"$OUT" 2>&1; then not_ok "$desc (it succeeded)"; else ok "$desc"; fi
}
# has PATTERN...: every extended regex occurs in $OUT.
has() {
	local p
	for p in "$@"; do grep -Eq -- "$p" "$OUT" || { echo "# missing: $p" >>"$OUT"; return 1; }; done
}
# hasnt PATTERN...: none of them occurs in $OUT.
hasnt() {
	local p
	for p in "$@"; do
		if grep -Eq -- "$p" "$OUT"; then echo "# unexpected: $p" >>"$OUT"; return 1; fi
	done
}
expect() { local desc=$1; shift; if has "$@"; then ok "$desc"; else not_ok "$desc"; fi; }
expect_not() { local desc=$1; shift; if hasnt "$@"; then ok "$desc"; else not_ok "$desc"; fi; }
# json_check DESCRIPTION FILE PYTHON-EXPRESSION-ON-d
json_check() {
	if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' \
		"$2" "$3" >>"$OUT" 2>&1; then ok "$1"; else not_ok "$1"; fi
}
# After 'cluster down': only the daemons' logs are left in the cluster directory.
only_logs_left() {
	[ -z "$(ls -A "$SMARTIO_CLUSTER" 2>/dev/null | grep -Ev '^host-[0-9]+\.log$')" ] &&
		ls "$SMARTIO_CLUSTER"/host-*.log >/dev/null 2>&1
}
# The plan line and the exit status.
tap_done() {
	echo "1..$n"
	if [ "$failed" -ne 0 ]; then
		echo "# $failed of $n checks failed"
		exit 1
	fi
}
