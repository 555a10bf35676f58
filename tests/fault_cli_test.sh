#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# smartio fault on the default cluster (docs/cli.md "smartio fault"): each
# fault injected and its effect seen through real commands, its lines in
# DIR/faults.log and DIR/faults.jsonl, scheduling (--after, --at), usage
# errors (exit 2), and cluster restart / down keeping a dead host's log.
set -euo pipefail

. "$(dirname "$0")/tap.sh"

LOG=$SMARTIO_CLUSTER/faults.log
JSONL=$SMARTIO_CLUSTER/faults.jsonl
mono_now() { python3 -c 'import time; print(time.monotonic_ns())'; }
dpid() { cat "$SMARTIO_CLUSTER/host-$1.pid"; }

# ---- usage ----
usage_err() {
	local desc=$1 rc=0
	shift
	"$@" >"$OUT" 2>&1 || rc=$?
	if [ "$rc" -eq 2 ]; then ok "usage: $desc exits 2"; else not_ok "usage: $desc exits 2 (got $rc)"; fi
}
check "fault --help" "$SMARTIO" fault --help
expect "help names every fault" "link down\|up\|flap cable" "crash --host N" "hang --host N" \
	"resume --host N" "restart --host N" "reset --host N DEVICE" "faults.jsonl"
check "smartio --help lists fault" "$SMARTIO" --help
expect "fault in the command list" "^  fault "
usage_err "no fault" "$SMARTIO" fault
usage_err "unknown fault" "$SMARTIO" fault explode
usage_err "link sideways" "$SMARTIO" fault link sideways cable 0.0
usage_err "flap without --for" "$SMARTIO" fault link flap cable 0.0
usage_err "bad --for" "$SMARTIO" fault --for soon link flap cable 0.0
usage_err "bad --after" "$SMARTIO" fault --after later crash --host 1
usage_err "bad --at" "$SMARTIO" fault --at tomorrow crash --host 1
usage_err "crash without --host" env -u SMARTIO_HOST "$SMARTIO" fault crash
usage_err "restart --for" "$SMARTIO" fault --for 1s restart --host 1
usage_err "reset without a device" "$SMARTIO" fault reset --host 2
usage_err "cluster restart without --host" "$SMARTIO" cluster restart

check "cluster up (default topology)" "$SMARTIO" cluster up

# ---- link ----
check "ntb lut set auto 1 0x0" "$SMARTIO" ntb --host 0 lut set auto 1 0x0
WIN=$(sed -n 's/^window: local bus address \(0x[0-9a-f]*\),.*/\1/p' "$OUT")
check "route through the cable" "$SMARTIO" route --host 0 --addr "$WIN"
check "fault link down cable borrower.ntb0" "$SMARTIO" fault link down cable borrower.ntb0
expect "printed: link-down on host 0 ntb 0" "^[0-9]+\.[0-9]{9} mono [0-9]+\.[0-9]{9} link-down cable borrower\.ntb0: host 0 ntb 0 down$"
check_fails "route through the downed cable fails" "$SMARTIO" route --host 0 --addr "$WIN"
expect "route: link down" "link down"
check "fault link up cable 0.0 --json" "$SMARTIO" fault link up cable 0.0 --json
tail -n 1 "$OUT" >"$WORK/up.json"
json_check "--json: one fault object" "$WORK/up.json" \
	'd["fault"] == "link-up" and d["hosts"] == [0] and d["real_ns"] > 0 and d["mono_ns"] > 0'
check "route works after link up" "$SMARTIO" route --host 0 --addr "$WIN"
check_fails "adapter with no such host" "$SMARTIO" fault link down adapter nohost.ntb0
expect "no such host explained" "no host 'nohost'"
check_fails "unused switch port" "$SMARTIO" fault link down port mxs0:20
expect "unused port explained" "port 20 of mxs0 has no NTB adapter"
# Port 0 of mxs0 is the borrower's (gen3 x8 = ports 0-1); a 300 ms flap.
check "fault link flap port mxs0:1 --for 300ms" "$SMARTIO" fault link flap port mxs0:1 --for 300ms
expect "flap: down then up of host 0 ntb 0" "link-down port mxs0:1: host 0 ntb 0 down \(flap" \
	"link-up port mxs0:1: host 0 ntb 0 up \(end of flap\)"
check "route works after the flap" "$SMARTIO" route --host 0 --addr "$WIN"
check "fault link down adapter lender-a.ntb0" "$SMARTIO" fault link down adapter lender-a.ntb0
check "ntb --host 1 info" "$SMARTIO" ntb --host 1 info
expect "host 1's link is down" "link +down"
check "fault link up adapter 1.ntb0" "$SMARTIO" fault link up adapter 1.ntb0

# ---- scheduling ----
T0=$(mono_now)
check "fault --after 300ms link down" "$SMARTIO" fault --after 300ms --json link down adapter 2.0
tail -n 1 "$OUT" >"$WORK/after.json"
json_check "--after: injected at least 300 ms later" "$WORK/after.json" "d['mono_ns'] - $T0 >= 300e6"
AT=$(python3 -c "import time; print('mono:%.3f' % (time.monotonic() + 0.3))")
T0=$(mono_now)
check "fault --at $AT link up" "$SMARTIO" fault --at "$AT" --json link up adapter 2.0
tail -n 1 "$OUT" >"$WORK/at.json"
json_check "--at mono: injected at that time" "$WORK/at.json" \
	"d['mono_ns'] >= float('${AT#mono:}') * 1e9 and d['mono_ns'] - $T0 < 5e9"
AT=$(python3 -c "import time; print('%.3f' % (time.time() + 0.2))")
check "fault --at EPOCH link down" "$SMARTIO" fault --at "$AT" --json link down adapter 2.0
tail -n 1 "$OUT" >"$WORK/at2.json"
json_check "--at epoch: injected at that wall time" "$WORK/at2.json" "d['real_ns'] >= float('$AT') * 1e9"
check "link up again" "$SMARTIO" fault link up adapter 2.0

# ---- hang, resume ----
"$SMARTIO" exec --host 2 -- sleep 600 &
EXEC=$!
for _ in $(seq 200); do [ -n "$(ls "$SMARTIO_CLUSTER/procs" 2>/dev/null)" ] && break; sleep 0.01; done
SLEEP=$(pgrep -P "$EXEC" sleep || true)
D2=$(dpid 2)
check "fault hang --host 2" "$SMARTIO" fault hang --host 2
expect "hang: daemon and its 2 processes stopped" "hang host 2: SIGSTOP to daemon pid $D2 and 2 processes"
check_fails "cluster status exits non-zero" "$SMARTIO" cluster status
expect "status: host 2 stopped" "^2 +lender-b +12 +$D2 +stopped"
st=$(ps -o stat= -p "$SLEEP" || true)
if [[ $st == T* ]]; then ok "the host's process is stopped too"; else not_ok "the host's process is stopped too ($st)"; fi
check "fault resume --host 2" "$SMARTIO" fault resume --host 2
check "cluster status: all up again" "$SMARTIO" cluster status
check "host 2 answers after resume" "$SMARTIO" lspci --host 2
check "fault hang --host 2 --for 300ms" "$SMARTIO" fault hang --host 2 --for 300ms
expect "hang then resume logged" "hang host 2" "resume host 2: .*\(end of hang\)"
check "host 2 answers after the timed hang" "$SMARTIO" cluster status

# ---- crash ----
check "fault crash --host 2" "$SMARTIO" fault crash --host 2
expect "crash: daemon and processes killed" "crash host 2: SIGKILL to daemon pid $D2 and 2 processes"
# Gone, or a zombie until whoever inherited it reaps it.
st=$(ps -o stat= -p "$D2" || true)
if [ -z "$st" ] || [[ $st == Z* ]]; then ok "host 2's daemon is gone"; else not_ok "host 2's daemon is gone ($st)"; fi
rc=0; wait "$EXEC" || rc=$?
if [ "$rc" -eq 137 ]; then ok "the host's exec was killed (137)"; else not_ok "the host's exec was killed (got $rc)"; fi
check_fails "cluster status exits non-zero" "$SMARTIO" cluster status
expect "status: host 2 dead" "^2 +lender-b +12 +$D2 +dead"
check_fails "crash of a dead host fails" "$SMARTIO" fault crash --host 2
expect "crash of a dead host explained" "not running.*cluster restart --host 2"

# ---- restart ----
check "fault restart --host 2 (after the crash)" "$SMARTIO" fault restart --host 2
expect "restart: no daemon was running" "restart host 2: no daemon was running; new daemon pid [0-9]+ ready"
N2=$(dpid 2)
if [ "$N2" != "$D2" ] && kill -0 "$N2"; then ok "host 2 has a new daemon"; else not_ok "host 2 has a new daemon"; fi
check "cluster status: all up" "$SMARTIO" cluster status
D1=$(dpid 1)
check "cluster restart --host 1" "$SMARTIO" cluster restart --host 1
expect "cluster restart: old and new pid" "host 1 restarted in [0-9.]+ s: pid $D1 -> [0-9]+"
check "fault restart --host 1 --kill" "$SMARTIO" fault restart --host 1 --kill
expect "restart --kill logged" "restart host 1: daemon pid [0-9]+ killed, new daemon pid [0-9]+ ready"
check "host 1 answers after restarts" "$SMARTIO" lspci --host 1
grep -c "smartio cluster restart --host 1" "$SMARTIO_CLUSTER/host-1.log" >"$OUT" || true
expect "host 1's log keeps what came before each restart" "^2$"
check "route through host 1 again" "$SMARTIO" route --host 0 --addr "$WIN"
# A borrower that restarts has new RAM: the lender's DMA must land in it, not
# in the old daemon's (h_dma.c remaps a lost peer's memory objects).
check "borrow host 1's nvme0 for host 0" "$SMARTIO" borrow 1:nvme0 --host 0
check "cluster restart --host 0 (the borrower)" "$SMARTIO" cluster restart --host 0
check "borrow it again after the restart" "$SMARTIO" borrow 1:nvme0 --host 0
expect "the new borrower's driver binds it" "driver nvme"
check "identify through the new daemon's driver" "$SMARTIO" nvme identify --host 0
expect "identify data from the lender's NVMe" "model +smartio emulated NVMe"
check "return it" "$SMARTIO" return 1:nvme0 --host 0 --unbind

# ---- device reset (FLR) ----
check "lspci nvme0 before" "$SMARTIO" lspci --host 2 -vv -s 02:00.0
expect "nvme0: FLR capable, decoding" "FLReset\+ SlotPowerLimit" "Control: I/O- Mem\+"
check "fault reset --host 2 nvme0" "$SMARTIO" fault reset --host 2 nvme0
expect "reset logged" "reset host 2 nvme0: Function Level Reset of 02:00\.0"
check "lspci nvme0 after" "$SMARTIO" lspci --host 2 -vv -s 02:00.0
expect "FLR cleared the command register and MSI-X" "Control: I/O- Mem- BusMaster-" "MSI-X: Enable-"
check_fails "reset of an NTB (no FLR)" "$SMARTIO" fault reset --host 2 ntb0
expect "not FLR capable explained" "not FLR capable"

# ---- the log ----
cp "$LOG" "$OUT"
expect "faults.log: every kind" " link-down " " link-up " " hang " " resume " " crash " \
	" restart " " reset "
n_log=$(wc -l <"$LOG"); n_json=$(wc -l <"$JSONL")
if [ "$n_log" -eq "$n_json" ] && [ "$n_log" -ge 17 ]; then ok "faults.log and faults.jsonl: a line each ($n_log)"
else not_ok "faults.log and faults.jsonl: a line each ($n_log, $n_json)"; fi
check "faults.jsonl: JSON lines, clocks increasing" python3 -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
assert all(a["mono_ns"] <= b["mono_ns"] for a, b in zip(ev, ev[1:])), "monotonic"
assert {e["fault"] for e in ev} >= {"link-down", "link-up", "hang", "resume", "crash", "restart", "reset"}
' "$JSONL"

# ---- down keeps every host's log, and names a dead host's ----
check "fault crash --host 1" "$SMARTIO" fault crash --host 1
check "cluster down" "$SMARTIO" cluster down
expect "down: the dead host's log kept" "kept the log .*host-1\.log" "1 not running any more"
if [ -s "$SMARTIO_CLUSTER/host-1.log" ] && [ -s "$SMARTIO_CLUSTER/host-0.log" ] && [ -s "$LOG" ]
then ok "host-1.log, host-0.log and faults.log kept"
else not_ok "host-1.log, host-0.log and faults.log kept"; fi
if pgrep -f "$SMARTIO_CLUSTER" >"$OUT"; then not_ok "no smartiod left"; else ok "no smartiod left"; fi

tap_done
