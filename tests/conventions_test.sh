#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The conventions every smartio tool follows (docs/cli.md, "Common rules"):
# --help (exit 0) and --version on every command and subcommand, usage
# errors exit 2, one-line "did you mean" for a mistyped command, devices
# named by FDID / NAME / LENDER:NAME, JSON ids as hex strings and null for
# none, pool queries answered by any live host, and the daemons' logs kept
# (timestamped) across cluster down, printed by 'cluster logs'. TAP output.
set -euo pipefail

. "$(dirname "$0")/tap.sh"

NVME=$(realpath "$BUILD/tools/smartio-nvme/smartio-nvme")
SMARTIOD=$(realpath "$BUILD/src/daemon/smartiod")
VERSION=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$SRC/meson.build" | head -1)

# exits CODE DESCRIPTION COMMAND...: the command exits with CODE; output in $OUT.
exits() {
	local want=$1 desc=$2 rc=0
	shift 2
	"$@" >"$OUT" 2>&1 || rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$desc"; else echo "# exit $rc, not $want" >>"$OUT"; not_ok "$desc"; fi
}

# ---- --help, --version, bad options: every command and subcommand ----
CMDS=("cluster" "cluster up" "cluster down" "cluster status" "cluster restart" "cluster logs"
	"fault" "fault link" "fault crash" "fault hang" "fault resume" "fault restart" "fault reset"
	"exec" "lspci" "topo" "route" "ntb" "iommu" "sriov" "czodiac" "czodiac share" "czodiac unshare"
	"accel" "accel list" "accel info" "accel copy" "accel fill" "accel checksum"
	"accel pingpong" "accel bench"
	"nvme" "nvme list" "nvme identify" "nvme read" "nvme write" "nvme dd"
	"predict" "predict link" "predict path" "predict pingpong" "predict nvme-read"
	"predict paper" "predict figure" "mount" "umount" "devices" "borrow" "return"
	"plan" "web" "top" "diag" "events"
	"vm" "vm run" "vm list" "vm stop" "vm stats" "vm hot-add" "vm hot-remove" "vm migrate"
	"accel launch")
# Every command 'smartio --help' lists is checked here: a new one must join CMDS.
missing=()
for c in $("$SMARTIO" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p'); do
	found=0
	for k in "${CMDS[@]}"; do [ "$k" = "$c" ] && found=1; done
	[ $found = 1 ] || missing+=("$c")
done
printf '%s\n' "${missing[@]}" >"$OUT"
if [ ${#missing[@]} -eq 0 ]; then ok "every command of 'smartio --help' is in this test's list"
else not_ok "commands missing from this test's list"; fi
bad_help=() bad_version=() bad_opt=()
for c in "${CMDS[@]}"; do
	# shellcheck disable=SC2086
	"$SMARTIO" $c --help >/dev/null 2>&1 || bad_help+=("$c")
	# shellcheck disable=SC2086
	[ "$("$SMARTIO" $c --version 2>&1)" = "smartio $VERSION" ] || bad_version+=("$c")
	rc=0
	# shellcheck disable=SC2086
	"$SMARTIO" $c --no-such-option >/dev/null 2>&1 || rc=$?
	[ "$rc" -eq 2 ] || bad_opt+=("$c: $rc")
done
for c in manager identify dd bench; do
	"$NVME" $c --help >/dev/null 2>&1 || bad_help+=("smartio-nvme $c")
	[ "$("$NVME" $c --version 2>&1)" = "smartio-nvme (smartio) $VERSION" ] ||
		bad_version+=("smartio-nvme $c")
	rc=0
	"$NVME" $c --no-such-option >/dev/null 2>&1 || rc=$?
	[ "$rc" -eq 2 ] || bad_opt+=("smartio-nvme $c: $rc")
done
printf '%s\n' "${bad_help[@]}" >"$OUT"
if [ ${#bad_help[@]} -eq 0 ]; then ok "every command's --help exits 0"; else not_ok "--help fails"; fi
printf '%s\n' "${bad_version[@]}" >"$OUT"
if [ ${#bad_version[@]} -eq 0 ]; then ok "every command's --version prints the version"
else not_ok "--version"; fi
printf '%s\n' "${bad_opt[@]}" >"$OUT"
if [ ${#bad_opt[@]} -eq 0 ]; then ok "an unknown option exits 2 everywhere"; else not_ok "bad option"; fi
check "smartio --version" "$SMARTIO" --version
expect "... smartio VERSION (meson's project version)" "^smartio $VERSION\$"
check "smartiod --version" "$SMARTIOD" --version
expect "... names the program" "^smartiod \\(smartio\\) $VERSION\$"
check "smartio-nvme --version" "$NVME" --version

# ---- did you mean ----
exits 2 "mistyped command exits 2" "$SMARTIO" borow 0x80400 --host 0
expect "... one line: did you mean 'borrow'?" "^smartio: unknown command 'borow'; did you mean 'borrow'\\?\$"
[ "$(wc -l <"$OUT")" -le 2 ] && ok "... without the whole usage" || not_ok "... without the whole usage"
exits 2 "mistyped subcommand" "$SMARTIO" cluster stauts
expect "... did you mean 'status'?" "did you mean 'status'\\?"
exits 2 "nvme subcommand" "$SMARTIO" nvme idnetify
expect "... did you mean 'identify'?" "did you mean 'identify'\\?"
exits 2 "smartio-nvme command" "$NVME" bnech
expect "... did you mean 'bench'?" "did you mean 'bench'\\?"
for typo in wbe:web tpo:topo dig:diag evnets:events plna:plan; do
	exits 2 "mistyped ${typo#*:}" "$SMARTIO" "${typo%%:*}"
	expect "... did you mean '${typo#*:}'?" "^smartio: unknown command '${typo%%:*}'; did you mean '${typo#*:}'\\?\$"
done
exits 2 "nothing near: no guess" "$SMARTIO" xyzzy
expect "... points to --help" "unknown command 'xyzzy' \\('smartio --help' lists the commands\\)"

# ---- usage errors vs failures ----
exits 2 "missing --host is a usage error (ntb)" "$SMARTIO" ntb
exits 2 "missing --host is a usage error (accel)" "$SMARTIO" accel list
exits 1 "no cluster is a failure" "$SMARTIO" lspci --host 0

# ---- cluster: devices by name, JSON, fallback to a live host ----
check "cluster up" "$SMARTIO" cluster up
check "exec: a --version after -- is the command's" "$SMARTIO" exec --host 0 -- printf '%s\n' --version
expect "... passed through" "^--version\$"
check "exec: ... also without --" "$SMARTIO" exec --host 0 printf '%s\n' --version
expect "... passed through" "^--version\$"
check "devices --json" "$SMARTIO" devices --json
cp "$OUT" "$WORK/devices.json"
json_check "devices --json: hex fdid strings, borrower null" "$WORK/devices.json" \
	'all(e["fdid"].startswith("0x") and len(e["fdid"]) == 10 and e["borrower"] is None for e in d) and {"0x00080400", "0x000c0300"} <= {e["fdid"] for e in d}'
exits 2 "borrow nvme0: two lenders have one" "$SMARTIO" borrow nvme0 --host 0
expect "... says to qualify it" "more than one lender" "LENDER:nvme0"
check "borrow lender-a:nvme0 (host name)" "$SMARTIO" borrow lender-a:nvme0 --host 0
expect "... the NVMe of lender-a" "nvme0 from host 1 is f0:00.0"
check "borrow 2:gpu0 (host id)" "$SMARTIO" borrow 2:gpu0 --host 0
check "borrow gpu1 (unique name)" "$SMARTIO" borrow gpu1 --host 0
check "borrow 0x80500 (hex fdid)" "$SMARTIO" borrow 0x80500 --host 0
check "return 525568 (decimal fdid of 0x80500)" "$SMARTIO" return 525568 --host 0 --unbind
check "borrow lender-b:nvme0 for host 1" "$SMARTIO" borrow lender-b:nvme0 --host 1
check "return nvme0 --host 1: the one host 1 borrowed" "$SMARTIO" return nvme0 --host 1 --unbind
expect "... lender-b's" "returned 0x000c0200"
exits 2 "borrow a name nobody has" "$SMARTIO" borrow nosuch --host 0
expect "... says so" "no device 'nosuch' in the pool"
"$SMARTIO" devices --json >"$WORK/devices.json" 2>"$OUT" || true
json_check "devices --json: borrower a host id when lent" "$WORK/devices.json" \
	'[e["borrower"] for e in d if e["fdid"] == "0x00080400"] == [0]'
check "topo --json" "$SMARTIO" topo --json
cp "$OUT" "$WORK/topo.json"
json_check "topo --json: hosts, ports, cables" "$WORK/topo.json" \
	'[h["name"] for h in d["hosts"]] == ["borrower", "lender-a", "lender-b"] and d["hosts"][0]["ports"][0]["cable"]["cswitch"] == "mxs0" and d["hosts"][0]["ram"].startswith("0x")'
check "ntb --json" "$SMARTIO" ntb --host 1 --json
cp "$OUT" "$WORK/ntb.json"
json_check "ntb --json: link, tables, hex addresses" "$WORK/ntb.json" \
	'd["link_up"] is True and d["bar_addr"].startswith("0x") and d["lut_entries"] == 64'
check "iommu --json" "$SMARTIO" iommu --host 0 --json
cp "$OUT" "$WORK/iommu.json"
json_check "iommu --json: total and recent faults" "$WORK/iommu.json" \
	'd["host"] == 0 and d["total"] == len(d["recent"]) == 0'
exits 2 "--json where it means nothing is refused" "$SMARTIO" ntb --host 1 --json link up
exits 2 "borrow --json is refused" "$SMARTIO" borrow gpu1 --host 0 --json

kill -9 "$(cat "$SMARTIO_CLUSTER/host-0.pid")"
exits 0 "devices with host 0 down: another host answers" "$SMARTIO" devices
expect "... the pool" "0x00080400" "0x000c0300"
expect_not "... quietly (stdout and stderr)" "answered"
exits 0 "devices --verbose says which host answered" "$SMARTIO" devices --verbose
expect "... on stderr" "host 1 answered \\(host 0 is down\\)"
exits 1 "devices --host 0 (down): an error" "$SMARTIO" devices --host 0
expect "... naming the host and the restart" "host 0 .* is down" "smartio cluster restart --host 0"
exits 1 "cluster up on a partly dead cluster" "$SMARTIO" cluster up
expect "... says to use restart" "partly running: 2 of 3 hosts up" "cluster restart --host 0"
check "cluster restart --host 0 (crashed)" "$SMARTIO" cluster restart --host 0
expect "... started" "host 0 started .*it was not running"
check "cluster status: all up again" "$SMARTIO" cluster status

# ---- logs ----
check "cluster logs" "$SMARTIO" cluster logs
expect "... every host, prefixed, timestamped" \
	"^host 0: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z smartiod\\[host 0\\]: borrower up" \
	"^host 1: [0-9T:.Z-]+ smartiod\\[host 1\\]: lender-a up" \
	"^host 0: [0-9T:.Z-]+ ---- smartio cluster restart --host 0"
check "cluster logs --host 2" "$SMARTIO" cluster logs --host 2
expect_not "... host 2 only" "^host [01]:"
check "cluster down" "$SMARTIO" cluster down
expect "... says the logs are kept" "logs kept in .*host-N.log"
check "logs survive cluster down" only_logs_left
check "cluster logs after down" "$SMARTIO" cluster logs --host 1
expect "... still there" "lender-a up"
check "cluster up in the same directory" "$SMARTIO" cluster up
check "cluster logs: both runs" "$SMARTIO" cluster logs --host 1
[ "$(grep -c "smartiod\[host 1\]: lender-a up" "$OUT")" -eq 2 ] && ok "... the old run kept, the new appended" ||
	not_ok "... the old run kept, the new appended"
check "cluster down" "$SMARTIO" cluster down
exits 1 "cluster logs of a host without a log" "$SMARTIO" cluster logs --host 7

tap_done
