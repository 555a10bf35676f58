#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Fair sharing of one NVMe controller through the real manager path
# (tests/topologies/nvme-fair.yaml: six client hosts, a controller that
# saturates so commands wait in the SQs): the manager's class policy and its
# refusals, then shares as the controller itself counted them per SQ
# (`smartio-nvme arbstat`, two snapshots while every client runs) - robust
# against a noisy machine, unlike wall-clock throughput. Weighted classes
# 8:4:1 get shares in about that ratio; equal clients get equal shares
# (Jain >= 0.9); round robin has no classes. TAP output.
set -euo pipefail

. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/nvme_manager.sh"

REPORT="$SRC/bench/fair-report.py"

# run_clients NAME HOST[:CLASS]...: one QD32 4 KiB random-read bench per host
# (32 in flight: at its share, even a high client's SQ holds ~50 ms of work,
# so a client the scheduler keeps waiting does not run dry),
# started together; arbstat snapshots 0.7 s and 2.2 s into the 3 s run.
run_clients() {
	local name=$1 spec h p pids=() i
	shift
	rm -rf "$WORK/$name"
	mkdir -p "$WORK/$name"
	for spec in "$@"; do
		h=${spec%%:*}
		p=()
		[ "$spec" = "$h" ] || p=(--prio "${spec#*:}")
		"$SMARTIO" exec --host "$h" -- "$NVME" bench -d "$fdid" --time 3 --qd 32 \
			--poll-sleep 200 "${p[@]}" --ready-file "$WORK/$name/ready.$h" \
			--go-file "$WORK/$name/go" --json -t 20000 \
			>"$WORK/$name/c.$h.json" 2>"$WORK/$name/c.$h.err" &
		pids+=($!)
	done
	for _ in $(seq 600); do
		[ "$(ls "$WORK/$name"/ready.* 2>/dev/null | wc -l)" -eq $# ] && break
		sleep 0.05
	done
	touch "$WORK/$name/go"
	sleep 0.7
	on_host 0 arbstat -d "$fdid" --json >"$WORK/$name/before.json" 2>&1 || true
	sleep 1.5
	on_host 0 arbstat -d "$fdid" --json >"$WORK/$name/after.json" 2>&1 || true
	local bad=0
	for i in "${!pids[@]}"; do wait "${pids[$i]}" || bad=$((bad + 1)); done
	return $bad
}

# the figures behind a share check, as TAP comments (the log shows them either way)
figures() { jq -c '.checks[] | [.check, .value]' "$OUT" 2>/dev/null | sed 's/^/# /' || true; }

check "nvme-fair up" "$SMARTIO" cluster up "$SRC/tests/topologies/nvme-fair.yaml"

# ---- the policy: hosts 1, 2 high; 3, 4 medium (default); 5, 6 low ----
check_fails "a bad policy is refused at start" start_manager 0 nvme0 --policy "host:1=fast"
cp "$WORK/manager.log" "$OUT"
expect "says what a policy item looks like" "want host:N=CLASS"
check "manager with a class policy" start_manager 0 nvme0 --policy "host:1=high,host:2=high,host:5=low,host:6=low"
cp "$WORK/manager.log" "$OUT"
expect "manager: weighted round robin, weights 8 4 1, the policy" \
	"weighted round robin with urgent class, weights high 8 medium 4 low 1, burst 8" \
	"node 8 high" "node 28 low" "default medium"
fdid=$(sed -n 's/.*manager of \(0x[0-9a-f]*\):.*/\1/p' "$WORK/manager.log")
check "the manager names the controller" test -n "$fdid"
check_fails "host 5 (low) may not ask for high" on_host 5 bench -d "$fdid" --prio high --ios 10
expect "the client says why" "policy does not allow this class"
check_fails "nor for urgent" on_host 5 bench -d "$fdid" --prio urgent --ios 10
check "host 3 (medium) may ask for low" on_host 3 bench -d "$fdid" --prio low --ios 10 --json
expect "and gets low" '"prio":"low"'
check "host 1 without --prio gets its policy class" on_host 1 bench -d "$fdid" --ios 10 --json
expect "high" '"prio":"high"'
check "arbstat shows the arbitration" on_host 0 arbstat -d "$fdid"
expect "weights and slots" "weighted round robin with urgent class, burst 8, weights high 8 medium 4 low 1, slots 4"

check "6 clients in three classes run at once" run_clients wrr 1 2 3 4 5 6
check "shares as the controller counted them: high/medium ~2, medium/low ~4" \
	python3 "$REPORT" "$WORK/wrr/before.json" "$WORK/wrr/after.json" "$WORK"/wrr/c.*.json \
	--ratio high/medium=2 --ratio medium/low=4 --tol 0.3
figures
check "manager stops" stop_manager
cp "$WORK/manager.log" "$OUT"
expect "manager log: classes granted, refusals logged" "class high" "class low" \
	"class high asked for, node 24 may use low at most"

# ---- everyone equal (the default policy) ----
check "manager, default policy" start_manager 0 nvme0
check "6 equal clients run at once" run_clients eq 1 2 3 4 5 6
check "equal shares: Jain >= 0.9 over the SQs' fetch counts" \
	python3 "$REPORT" "$WORK/eq/before.json" "$WORK/eq/after.json" "$WORK"/eq/c.*.json \
	--jain-min 0.9
figures
check "manager stops" stop_manager

# ---- round robin: no classes ----
check "manager --arb rr" start_manager 0 nvme0 --arb rr
cp "$WORK/manager.log" "$OUT"
expect "says round robin" "arbitration: round robin .as asked."
check_fails "asking for a class under round robin" on_host 1 bench -d "$fdid" --prio high --ios 10
expect "the client says there are no classes" "runs round robin"
check "without --prio it works, class none" on_host 1 bench -d "$fdid" --ios 10 --json
expect "none" '"prio":"none"'
check "6 clients under round robin" run_clients rr 1 2 3 4 5 6
check "round robin is fair too (Jain >= 0.9)" \
	python3 "$REPORT" "$WORK/rr/before.json" "$WORK/rr/after.json" "$WORK"/rr/c.*.json \
	--jain-min 0.9
figures
check "manager stops" stop_manager

# ---- a rate limit: host 1 at 200 commands per second, paced by its library ----
check_fails "a bad rate is refused at start" start_manager 0 nvme0 --policy "host:1=medium@0"
cp "$WORK/manager.log" "$OUT"
expect "says what the rate must be" "rate after @ must be"
check "manager, host 1 limited to 200 IOPS" start_manager 0 nvme0 --policy "host:1=medium@200"
check "host 1 runs at its limit" on_host 1 bench -d "$fdid" --qd 8 --time 1 --poll-sleep 200 --json
expect "the pair knows its limit" '"iops_limit":200'
check "about 200 IOPS (150..230)" jq -e '.iops > 150 and .iops < 230' "$OUT"
check "host 2 has no limit" on_host 2 bench -d "$fdid" --qd 8 --time 1 --poll-sleep 200 --json
check "and runs far faster (> 600 IOPS)" jq -e '.iops > 600 and .iops_limit == 0' "$OUT"
check "dd on host 1 completes under the limit" on_host 1 dd -d "$fdid" --mode verify --count 256 \
	--bs 4K --qd 4 --lba 8192
check "manager stops" stop_manager
cp "$WORK/manager.log" "$OUT"
expect "manager log: the limit in the policy and on the queue" "node 8 medium @200 IOPS" \
	"200 IOPS at most"
check "nvme-fair down" "$SMARTIO" cluster down

# ---- the lender's NTB out of windows: a clear error, not "all I/O queues in use" ----
# The same cluster with a 4-window lender NTB: host 1's client holds its
# queues (a CQ in its own RAM takes a window), and the next client's find none.
sed 's/model: PXH830, cable/model: PXH830, lut_entries: 4, cable/' \
	"$SRC/tests/topologies/nvme-fair.yaml" >"$WORK/nvme-fair-4.yaml"
check "nvme-fair with 4 lender NTB windows up" "$SMARTIO" cluster up "$WORK/nvme-fair-4.yaml"
check "manager" start_manager 0 nvme0
fdid=$(sed -n 's/.*manager of \(0x[0-9a-f]*\):.*/\1/p' "$WORK/manager.log")
"$SMARTIO" exec --host 1 -- "$NVME" bench -d "$fdid" --time 30 --qd 4 --poll-sleep 1000 \
	--ready-file "$WORK/hold.ready" --go-file "$WORK/hold.go" >"$WORK/hold.out" 2>&1 &
HOLD=$!
for _ in $(seq 400); do [ -e "$WORK/hold.ready" ] && break; sleep 0.05; done
check "host 1 holds its queue pair" test -e "$WORK/hold.ready"
busy=0
for h in 2 3 4 5; do
	if ! on_host "$h" bench -d "$fdid" --ios 10 >"$WORK/nowin.out" 2>&1; then busy=$h; break; fi
done
cp "$WORK/manager.log" "$WORK/manager.snap"
check "some client finds no window left" test "$busy" -ne 0
cp "$WORK/nowin.out" "$OUT"
expect "it says the lender's NTB has no free window" "lender's NTB has no free window"
expect "and that --cq device saves one" "--cq device"
expect_not "not that all I/O queues are in use" "all I/O queues are in use"
cp "$WORK/manager.snap" "$OUT"
expect "the manager's log says so too" "CREATE_QP: the lender's NTB has no free window"
kill -TERM "$HOLD" 2>/dev/null || true
wait "$HOLD" 2>/dev/null || true
check "manager stops" stop_manager
check "nvme-fair-4 down" "$SMARTIO" cluster down

tap_done
