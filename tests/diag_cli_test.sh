#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Counters and events through real daemons and the CLI (docs/cli.md: diag,
# events, cluster status): I/O through host 1's NVMe driver moves its
# device's counters by exactly what was done; a doorbell is counted at both
# ends; a link taken down is a link error, an event with a sane timestamp,
# and an isolated host in `cluster status`; borrow and return are events on
# both hosts and a lease in `cluster status`, whose path `devices` and
# `cluster status` show down while a link is down; `diag --clear` zeroes the
# counters and is the cluster owner's alone; usage errors exit 2.
set -euo pipefail

. "$(dirname "$0")/tap.sh"

GPU=0x00080300   # host 1's gpu0 (node 8, 03:00.0)

# Two hosts cabled back to back; host 1 keeps an NVMe drive for its own driver
# and lends an accelerator.
cat >"$WORK/topo.yaml" <<'YAML'
version: 1
name: diag-test
hosts:
  - id: 0
    name: borrower
    ram: 4G
    iommu: true
    ports:
      - ntb: {name: ntb0, model: PXH830, cable: {gen: 3, width: 8}, connect: lender.ntb0}
  - id: 1
    name: lender
    ram: 4G
    iommu: true
    ports:
      - ntb: {name: ntb0, model: PXH830}
      - link: {gen: 3, width: 4}
        device: {name: nvme0, model: nvme, lendable: false}
      - link: {gen: 3, width: 16}
        device: {name: gpu0, model: accel}
YAML

check "cluster up" "$SMARTIO" cluster up "$WORK/topo.yaml"

# ---- help and usage errors ----
check "diag --help" "$SMARTIO" diag --help
expect "diag --help names its options" "--clear" "--all" "--json"
check "events --help" "$SMARTIO" events --help
usage_rc() {
	local desc=$1 rc=0
	shift
	"$@" >"$OUT" 2>&1 || rc=$?
	if [ "$rc" = 2 ]; then ok "$desc: exit 2"; else not_ok "$desc: exit 2 (got $rc)"; fi
}
usage_rc "diag --bogus" "$SMARTIO" diag --bogus
usage_rc "diag --host with --all" "$SMARTIO" diag --host 0 --all
usage_rc "diag with a stray argument" "$SMARTIO" diag extra
usage_rc "diag --host of no such host" "$SMARTIO" diag --host 7
usage_rc "events --since junk" "$SMARTIO" events --since junk
usage_rc "events --clear" "$SMARTIO" events --clear

# ---- daemon start is an event ----
check "events" "$SMARTIO" events
expect "each daemon's start is logged" "^[0-9T:.-]+Z +0 +1 +start +borrower daemon started" \
	"^[0-9T:.-]+Z +1 +1 +start +lender daemon started"

# ---- NVMe I/O: exact counts ----
check "diag --clear (owner)" "$SMARTIO" diag --clear
expect "clear says so per host" "^host 0: counters cleared" "^host 1: counters cleared"
head -c 8192 /dev/urandom >"$WORK/in.bin"
check "nvme write 16 blocks" "$SMARTIO" nvme write --host 1 --dev nvme0 --lba 8 -i "$WORK/in.bin"
check "nvme read 2 blocks" "$SMARTIO" nvme read --host 1 --dev nvme0 --lba 8 --count 2 \
	-o "$WORK/out.bin"
"$SMARTIO" diag --host 1 --json >"$WORK/d1.json"
cp "$WORK/d1.json" "$OUT"
json_check "one write, one read, their bytes, no errors" "$WORK/d1.json" \
	"([(x['write'], x['read'], x['bytes_written'], x['bytes_read'], x['errors'], x['dma_faults'])
	   for x in d['hosts'][0]['devices'] if x['name'] == 'nvme0'] == [(1, 1, 8192, 1024, 0, 0)])"
json_check "each I/O completion interrupted (I/O vectors), the total adds up" "$WORK/d1.json" \
	"([(sum(x['irqs'][1:]) >= 2, sum(x['irqs']) + x['irqs_other'] == x['interrupts'])
	   for x in d['hosts'][0]['devices'] if x['name'] == 'nvme0'] == [(True, True)])"
json_check "the accelerator did nothing" "$WORK/d1.json" \
	"([(x['ops'], x['bytes'], x['interrupts']) for x in d['hosts'][0]['devices']
	   if x['name'] == 'gpu0'] == [(0, 0, 0)])"
check "diag table" "$SMARTIO" diag --host 1
expect "the table shows the device and the adapter" \
	"^  nvme0 +02:00.0 +nvme +a[0-9]+ r1 w1 o0 +r1024 w8192 +0 +0 " \
	"^  ntb0 +01:00.0 +up +host 0 +0 +0 +0 +[0-9]+/64 +[0-9]+/32"

# ---- doorbells: counted where rung and where they arrive ----
check "ntb db" "$SMARTIO" ntb --host 0 db 0x1
"$SMARTIO" diag --json >"$WORK/db.json"
cp "$WORK/db.json" "$OUT"
json_check "doorbell counted at both ends" "$WORK/db.json" \
	"[h['adapters'][0]['doorbells'] for h in d['hosts']] == [1, 1]"

# ---- a link down: link error, event, isolated hosts ----
before=$(date +%s%N)
check "ntb link down" "$SMARTIO" ntb --host 0 link down
after=$(date +%s%N)
"$SMARTIO" diag --json >"$WORK/ld.json"
cp "$WORK/ld.json" "$OUT"
json_check "host 0's link is down, one link error; host 1's end still up" "$WORK/ld.json" \
	"([(h['adapters'][0]['link'], h['adapters'][0]['link_errors']) for h in d['hosts']] ==
	  [('down', 1), ('up', 0)])"
"$SMARTIO" events --host 0 --json >"$WORK/ev.json"
cp "$WORK/ev.json" "$OUT"
json_check "a link-down event, adapter 0, at the time it happened" "$WORK/ev.json" \
	"([(e['adapter'], e['link_errors'], $before <= e['time_ns'] <= $after)
	   for e in d['hosts'][0]['events'] if e['kind'] == 'link-down'] == [(0, 1, True)])"
json_check "next is the last event's number" "$WORK/ev.json" \
	"d['hosts'][0]['next'] == d['hosts'][0]['events'][-1]['seq']"
last=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hosts"][0]["next"])' \
	"$WORK/ev.json")
check "events --since the last" "$SMARTIO" events --host 0 --since "$last"
expect_not "nothing after the last" "link-down|start"
check "events --since huge" "$SMARTIO" events --since 18446744073709551615
expect_not "nothing from any host" "link-down|start|borrow"
check "cluster status with a link down (daemons up: exit 0)" "$SMARTIO" cluster status
expect "status: hosts up, the links down, both hosts isolated" "^2 of 2 hosts up" \
	"^0 +ntb0 +01:00.0 +host 1 +down +1$" "^1 +ntb0 +01:00.0 +host 0 +down +0 \(down at host 0\)" \
	"host 0 \(borrower\) is isolated" "host 1 \(lender\) is isolated"
"$SMARTIO" cluster status --json >"$WORK/st.json"
cp "$WORK/st.json" "$OUT"
json_check "status --json: links and isolation" "$WORK/st.json" \
	"([(h['isolated'], h['adapters'][0]['link'], h['adapters'][0]['link_here'])
	   for h in d['hosts']] == [(True, 'down', 'down'), (True, 'down', 'up')] and d['lent'] == [])"
check "ntb link up" "$SMARTIO" ntb --host 0 link up
check "cluster status, link up again" "$SMARTIO" cluster status
expect_not "nobody isolated" "isolated"
check "events: link up" "$SMARTIO" events --host 0
expect "a link-up event" "link-up +ntb0 link up"

# ---- borrow and return: events on both hosts, the lease in status ----
check "borrow gpu0 for host 0" "$SMARTIO" borrow --host 0 "$GPU"
check "cluster status shows the lease" "$SMARTIO" cluster status
expect "lender -> borrower, path up" "^$GPU +gpu0 +host 1 +03:00.0 +-> host 0 +up$"
check "devices: the lease's path is up" "$SMARTIO" devices
expect "PATH up" "^$GPU +1 +03:00.0 +gpu0 +120000 +lent +host 0 +up$"
check "ntb link down under the lease" "$SMARTIO" ntb --host 1 link down
check "devices after the link went down" "$SMARTIO" devices
expect "PATH: down, and where" "^$GPU +1 +03:00.0 +gpu0 +120000 +lent +host 0 +down via lender.ntb0$"
"$SMARTIO" devices --json >"$WORK/dv.json"
cp "$WORK/dv.json" "$OUT"
json_check "devices --json: path_state down at lender.ntb0; null when not lent" "$WORK/dv.json" \
	"[(x['path_state'], x['path_down_at']) for x in d] == [('down', 'lender.ntb0')]"
check "cluster status says the same" "$SMARTIO" cluster status
expect "status: the lease's path down" "^$GPU +gpu0 +host 1 +03:00.0 +-> host 0 +down via lender.ntb0$"
"$SMARTIO" cluster status --json >"$WORK/st2.json"
cp "$WORK/st2.json" "$OUT"
json_check "status --json: path_state of the lease" "$WORK/st2.json" \
	"[(x['path_state'], x['path_down_at']) for x in d['lent']] == [('down', 'lender.ntb0')]"
check "ntb link up again" "$SMARTIO" ntb --host 1 link up
check "return gpu0" "$SMARTIO" return --host 0 --unbind "$GPU"
check "events" "$SMARTIO" events
expect "borrow and return on both hosts" "1 +[0-9]+ +borrow +lent gpu0 \(03:00.0\) to host 0" \
	"0 +[0-9]+ +borrow +borrowed gpu0 from host 1" "0 +[0-9]+ +return +returned gpu0" \
	"1 +[0-9]+ +return +host 0 returned 03:00.0"
check "cluster status after the return" "$SMARTIO" cluster status
expect "no lease left" "^no devices lent"

# ---- a function level reset: a device fault, counted ----
check "fault reset gpu0" "$SMARTIO" fault reset --host 1 gpu0
check "events of host 1" "$SMARTIO" events --host 1
expect "the FLR is a device-fault event" "device-fault +gpu0 \(03:00.0\): function level reset"
"$SMARTIO" diag --host 1 --json >"$WORK/flr.json"
cp "$WORK/flr.json" "$OUT"
json_check "gpu0 counts one FLR" "$WORK/flr.json" \
	"[x['flrs'] for x in d['hosts'][0]['devices'] if x['name'] == 'gpu0'] == [1]"

# ---- clear: zero, and the owner's alone ----
check "diag --clear --host 1" "$SMARTIO" diag --clear --host 1
"$SMARTIO" diag --host 1 --json >"$WORK/c.json"
cp "$WORK/c.json" "$OUT"
json_check "every counter of host 1 is zero" "$WORK/c.json" \
	"(lambda h: h['iommu_faults'] == 0 and h['dma_faults'] == 0 and
	  all(a['link_errors'] == a['doorbells'] == a['link_drops'] == 0 for a in h['adapters']) and
	  all(sum(v for k, v in x.items() if isinstance(v, int)) == 0 and x['irqs'] == []
	      for x in h['devices']))(d['hosts'][0])"
rc=0
"$SMARTIO" exec --host 0 -- "$SMARTIO" diag --clear --host 1 >"$OUT" 2>&1 || rc=$?
if [ "$rc" = 1 ]; then ok "a process of host 0 cannot clear host 1 (exit 1)"; else
	not_ok "a process of host 0 cannot clear host 1 (exit 1, got $rc)"; fi
expect "it says why" "host 1: .*cluster owner"

check "cluster down" "$SMARTIO" cluster down
tap_done
