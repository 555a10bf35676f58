#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# smartio-nvme, the distributed NVMe driver's tool, against real daemons:
# help and error messages, the manager, identify, dd (write, read, verify,
# files), bench (text and JSON, placements, the SQ in lender-a's gpu0) on the
# default cluster; SQs in the CMB (tests/topologies/nvme-cmb.yaml); then 30
# clients on 30 hosts of topologies/cluster-60.yaml verifying their own block
# ranges at the same time on one controller. TAP output.
set -euo pipefail

. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/nvme_manager.sh"

# ---- help and errors without a cluster ----
check "--help" "$NVME" --help
expect "lists the commands" "manager" "identify" "dd" "bench"
for c in manager identify dd bench; do
	check "$c --help" "$NVME" "$c" --help
	expect "$c --help shows the device option" "--device"
done
check_fails "unknown command" "$NVME" frobnicate
expect "says how to get help" "unknown command" "--help"
check_fails "dd without --mode" "$NVME" dd --count 8
expect "dd says what is missing" "give --mode"
check_fails "outside a smartio host" "$NVME" identify
expect "says how to run it" "smartio exec"

# ---- the default cluster: lender-a's nvme0, manager on lender-a (host 1) ----
check "cluster up" "$SMARTIO" cluster up
check_fails "identify without a manager" on_host 0 identify -d 8:nvme0 -t 300
expect "says to start a manager" "start one with .smartio-nvme manager."
check "manager starts on lender-a" start_manager 1 8:nvme0
check_fails "a second manager of the same controller" on_host 0 manager -d 8:nvme0 -q
expect "says the device is in use" "exclusively"
check "identify from host 0" on_host 0 identify -d 8:nvme0
expect "identify shows the controller" "^model +smartio emulated NVMe" "^serial +SMARTIO-nvme0" \
	"^I/O queues +32" "ns 1 +2097152 blocks of 512 bytes"
on_host 0 identify -d 8:nvme0 --json >"$WORK/id.json" 2>"$OUT" || true
json_check "identify --json: hex fdid, model, namespaces" "$WORK/id.json" \
	'd["fdid"] == "0x00080400" and d["model"].startswith("smartio emulated NVMe") and d["io_queues"] == 32 and d["ns"][0] == {"nsid": 1, "blocks": 2097152, "block_size": 512}'
check "dd write (seed 3) from host 0" on_host 0 dd -d 8:nvme0 --mode write --lba 4096 --count 3000 --seed 3
on_host 2 dd -d 8:nvme0 --mode read --check --lba 4096 --count 8 --seed 3 --json >"$WORK/dd.json" 2>"$OUT" || true
json_check "dd --json: verified, null when not checked" "$WORK/dd.json" \
	'd["mode"] == "read" and d["verified"] is True and d["mismatches"] == 0 and d["count"] == 8 and d["fdid"] == "0x00080400"'
check "dd read --check (seed 3) from host 2" on_host 2 dd -d 8:nvme0 --mode read --check \
	--lba 4096 --count 3000 --seed 3 --qd 8
expect "the other host reads what was written" "verified"
check_fails "dd read --check with another seed" on_host 2 dd -d 8:nvme0 --mode read --check \
	--lba 4096 --count 3000 --seed 4
expect "mismatch reported" "blocks differ"
check "dd verify from lender-a itself" on_host 1 dd -d 8:nvme0 --mode verify --lba 100000 \
	--count 4096 --bs 128K --qd 16 --seed 9
expect "verify verifies" "verified"
head -c 200704 /dev/urandom >"$WORK/in.bin"
check "dd write --if FILE" on_host 0 dd -d 8:nvme0 --mode write --if "$WORK/in.bin" --lba 9000 \
	--count 392 --bs 20K
check "dd read --of FILE" on_host 2 dd -d 8:nvme0 --mode read --of "$WORK/out.bin" --lba 9000 \
	--count 392 --bs 12K
check "the file comes back byte for byte" cmp "$WORK/in.bin" "$WORK/out.bin"
check_fails "dd beyond the namespace" on_host 0 dd -d 8:nvme0 --mode read --lba 2097150 --count 8
expect "says the limit" "within the namespace"
check "bench QD1 4K randread from host 0" on_host 0 bench -d 8:nvme0 --time 0.5
expect "bench reports IOPS and percentiles" "IOPS [0-9]+" "p50 [0-9.]+ p99 [0-9.]+ p99.9 [0-9.]+"
check "bench --json, QD8 randwrite, queues in host RAM" on_host 0 bench -d 8:nvme0 --rw randwrite \
	--qd 8 --bs 16K --time 0.5 --sq host --cq host --json
expect "JSON has the figures" '^\{"rw":"randwrite","bs":16384,"qd":8,' '"errors":0' \
	'"lat_us":\{"avg":[0-9.]+,"min":[0-9.]+,"p50":[0-9.]+,"p99":[0-9.]+,"p99_9":[0-9.]+'
check "bench sequential read, queues in the lender's RAM" on_host 2 bench -d 8:nvme0 --rw read \
	--qd 4 --bs 64K --ios 2000 --sq device --cq device
expect "bench stops after --ios" ": 2000 I/Os"
check_fails "bench --sq cmb without a CMB" on_host 0 bench -d 8:nvme0 --sq cmb --time 0.2
expect "says there is no CMB" "no CMB"
# Fig. 34's "SQ in the lender's GPU": the SQ a device segment of lender-a's gpu0
# (hints place it in its BAR2), written by host 0 through the NTB, fetched by
# nvme0 peer-to-peer below the chassis switch. gpu0's bar_reads (diag) count
# exactly the 64-byte entries the controller fetched from it.
check "diag --clear on lender-a" "$SMARTIO" diag --clear --host 1
on_host 0 dd -d 8:nvme0 --mode verify --lba 20000 --count 512 --bs 4K --qd 4 --seed 11 \
	--sq accel:8:gpu0 --json >"$WORK/acc.json" 2>"$OUT" || true
json_check "dd verify --sq accel:8:gpu0 (128 commands)" "$WORK/acc.json" \
	'd["verified"] is True and d["sq_ioaddr"].startswith("0x")'
SQIO=$(sed -n 's/.*"sq_ioaddr":"\(0x[0-9a-f]*\)".*/\1/p' "$WORK/acc.json")
"$SMARTIO" route --host 1 --from nvme0 --addr "${SQIO:-0}" --len 64 --read --json \
	>"$WORK/acc.route" 2>"$OUT" || true
json_check "nvme0 reads its SQ from gpu0's BAR2, below the switch" "$WORK/acc.route" \
	'd["ok"] and d["ntb_hops"] == 0 and d["target"]["kind"] == "bar" and d["target"]["bar"] == 2 and d["hops"][-1]["name"] == "gpu0 BAR2" and not any(h["kind"] in ("root", "memory") for h in d["hops"])'
check "bench --sq accel:8:gpu0, 300 I/Os" on_host 0 bench -d 8:nvme0 --ios 300 --sq accel:8:gpu0 \
	--json
expect "bench: no errors, the same SQ address" '"ios":300,"errors":0' "\"sq_ioaddr\":\"$SQIO\""
"$SMARTIO" diag --host 1 --json >"$WORK/acc.diag" 2>"$OUT" || true
json_check "gpu0's BAR2 was read for 428 SQ entries (64 B each), gpu1's not at all" \
	"$WORK/acc.diag" \
	'{x["name"]: x["bar_reads"] for x in d["hosts"][0]["devices"]} == {"nvme0": 0, "gpu0": 428 * 64, "gpu1": 0}'
check_fails "--sq accel: of no device" on_host 0 bench -d 8:nvme0 --sq accel:8:nosuch --ios 1
expect "says it is not found" "not found"
check_fails "--cq accel:" on_host 0 dd -d 8:nvme0 --mode read --count 8 --cq accel:8:gpu0
expect "CQs have no accel placement" "bad placement 'accel:8:gpu0' \(default, device, host, cmb\)"
check "manager stops on SIGTERM" stop_manager
cp "$WORK/manager.log" "$OUT"
expect "manager log: sessions came and went, nothing reclaimed" "client 0x[0-9a-f]+: node 4" \
	"closed" "stopping: [0-9]+ requests, 0 refused, 0 queue pairs reclaimed"
expect "manager log: the SQ in gpu0, gpu0 returned after" "SQ in accelerator 0x80500 at bus address $SQIO" \
	"returned accelerator 0x80500: no SQ in it any more"
# lender-b's nvme0 has a 1 MiB CMB (behind lender-b's IOMMU)
check "manager on lender-b" start_manager 2 12:nvme0
check "dd verify --sq cmb on lender-b's controller from host 0" on_host 0 dd -d 12:nvme0 \
	--mode verify --lba 512 --count 512 --bs 8K --qd 4 --seed 7 --sq cmb
expect "verified through the CMB" "verified"
check "manager on lender-b stops" stop_manager
cp "$WORK/manager.log" "$OUT"
expect "the manager found the CMB" "CMB: 1024 KiB in BAR2" "SQ in the CMB at "
# Its daemon killed under a running manager: the manager's maps read all-ones
# (the SISCI library sees the daemon's socket hang up), it says so, and it
# still stops at SIGTERM instead of waiting CAP.TO for a CSTS that never moves.
check "manager on lender-b again" start_manager 2 12:nvme0
kill -KILL "$(cat "$SMARTIO_CLUSTER/host-2.pid")"
for _ in $(seq 100); do
	grep -q "controller unreachable" "$WORK/manager.log" && break
	timeout 0.1 tail -f /dev/null || true
done
cp "$WORK/manager.log" "$OUT"
expect "the manager says the controller is unreachable" "controller unreachable .*daemon is gone"
t0=$(date +%s%N)
kill -TERM "$MGR_PID"
for _ in $(seq 200); do       # at most ~10 s: exited (a zombie until waited for)?
	st=$(ps -o stat= -p "$MGR_PID" || true)
	[ -z "$st" ] || [[ $st == Z* ]] && break
	timeout 0.05 tail -f /dev/null || true
done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "the manager stops at SIGTERM within 2 s ($ms ms)" test "$ms" -lt 2000
stop_manager || true
check "cluster down" "$SMARTIO" cluster down

# ---- SQs in a controller memory buffer (tests/topologies/nvme-cmb.yaml) ----
check "nvme-cmb up" "$SMARTIO" cluster up "$SRC/tests/topologies/nvme-cmb.yaml"
check "manager of the CMB controller on the lender" start_manager 0 4:nvme0
check "dd verify --sq cmb from host 1" on_host 1 dd -d 4:nvme0 --mode verify --lba 2048 \
	--count 1024 --bs 16K --qd 8 --seed 5 --sq cmb
expect "dd with the SQ in the CMB verifies" "verified"
check "bench --sq cmb from host 2" on_host 2 bench -d 4:nvme0 --rw randwrite --qd 4 --ios 1000 \
	--sq cmb
expect "bench with the SQ in the CMB runs" ": 1000 I/Os"
check_fails "dd --cq cmb" on_host 1 dd -d 4:nvme0 --mode read --lba 0 --count 8 --cq cmb
expect "says CQs cannot be in the CMB" "CQs cannot be in the CMB"
check "manager stops" stop_manager
cp "$WORK/manager.log" "$OUT"
expect "manager log: the CMB and SQs in it" "CMB: 16 KiB in BAR2" "SQ in the CMB at " \
	"stopping: [0-9]+ requests, 0 refused, 0 queue pairs reclaimed"
check "nvme-cmb down" "$SMARTIO" cluster down

# ---- 30 clients on 30 hosts of cluster-60, one controller ----
# The tool at scale: 30 sessions at once (each identify opens a session,
# relays 4 admin commands, closes), then 30 concurrent verifying dd clients.
check "cluster-60 up" "$SMARTIO" cluster up "$SRC/topologies/cluster-60.yaml"
check "manager on the lender (host 0)" start_manager 0 nvme0
# The fabric device ID from the manager's log: 30 pool look-ups at once would be slow.
fdid=$(sed -n 's/.*manager of \(0x[0-9a-f]*\):.*/\1/p' "$WORK/manager.log")
check "the manager names the controller" test -n "$fdid"
pids=()
for h in $(seq 1 30); do
	"$SMARTIO" exec --host "$h" -- "$NVME" identify -d "$fdid" -t 20000 >"$WORK/id.$h" 2>&1 &
	pids+=($!)
done
bad=0
for i in "${!pids[@]}"; do wait "${pids[$i]}" || bad=$((bad + 1)); done
cat "$WORK"/id.* >"$WORK/ids"
answers=$(grep -c '^serial  *SMARTIO-nvme0$' "$WORK/ids" || true)
check "30 clients identify at once" test "$bad" -eq 0
check "30 answers ($answers)" test "$answers" -eq 30
# 30 clients verifying their own blocks at once, while the others' sessions,
# windows and queues come and go (every one of those changes the routes).
pids=()
for h in $(seq 1 30); do
	"$SMARTIO" exec --host "$h" -- "$NVME" dd -d "$fdid" --mode verify --lba $((h * 8192)) \
		--count 2048 --bs 16K --qd 8 --seed "$h" --cq device -t 20000 >"$WORK/dd.$h" 2>&1 &
	pids+=($!)
done
bad=0
for i in "${!pids[@]}"; do wait "${pids[$i]}" || bad=$((bad + 1)); done
verified=$(cat "$WORK"/dd.* | grep -c ': verified$' || true)
check "30 clients verify at once ($bad failed)" test "$bad" -eq 0
check "30 verified ($verified)" test "$verified" -eq 30
check "the farthest host (59, three switches away) verifies, CQ in the lender's RAM" \
	on_host 59 dd -d "$fdid" --mode verify --lba 65536 --count 4096 --bs 32K --qd 8 \
	--seed 59 --cq device
expect "host 59 verified" "verified"
check "host 1 reads host 59's blocks" on_host 1 dd -d "$fdid" --mode read --check \
	--lba 65536 --count 4096 --seed 59
check "manager stops" stop_manager
cp "$WORK/manager.log" "$OUT"
expect "62 sessions closed cleanly, nothing refused or reclaimed" \
	"stopping: [0-9]+ requests, 0 refused, 0 queue pairs reclaimed"
closed=$(grep -c ') closed;' "$WORK/manager.log" || true)
check "62 sessions ($closed)" test "$closed" -eq 62
check "cluster-60 down" "$SMARTIO" cluster down

tap_done
