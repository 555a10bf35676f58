#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The fio ioengine (tools/fio, docs/fio-engine.md) with the unmodified fio:
# on the default cluster, a borrower (host 0) runs fio against the NVMe
# controllers of lender-a (manager on host 1) and lender-b (manager on host 2,
# behind its IOMMU): random writes and mixed read/write with crc32c
# verification, random reads at queue depth 1 and 32, several jobs at once,
# and clean errors. Skips (TAP SKIP) when the engine was not built
# (`make fio-engine`, meson -Dfio_engine=true) or fio is missing.
set -euo pipefail

. "$(dirname "$0")/tap.sh"

ENGINE="$BUILD/tools/fio/smartio-fio.so"
NVME_TOOL="$BUILD/tools/smartio-nvme/smartio-nvme"
if [ ! -e "$ENGINE" ] || ! command -v fio >/dev/null; then
	echo "1..1"
	echo "ok 1 - fio ioengine # SKIP not built (make fio-engine) or fio not installed"
	exit 0
fi
ENGINE=$(realpath "$ENGINE")
[ -x "$NVME_TOOL" ] || { echo "Bail out! no smartio-nvme at $NVME_TOOL"; exit 2; }

MGR_PIDS=()
cleanup() {
	local p
	for p in "${MGR_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${MGR_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	tap_cleanup
}
trap cleanup EXIT

# start_manager HOST DEVICE: a manager for that controller, ready when it says so.
start_manager() {
	local host=$1 ready="$WORK/mgr$1.ready" i
	"$SMARTIO" exec --host "$host" -- "$NVME_TOOL" manager -q -d "$2" -r "$ready" \
		>"$WORK/mgr$host.log" 2>&1 &
	MGR_PIDS+=($!)
	for ((i = 0; i < 200; i++)); do          # bounded: 10 s
		[ -e "$ready" ] && return 0
		kill -0 "${MGR_PIDS[-1]}" 2>/dev/null || break
		sleep 0.05
	done
	cat "$WORK/mgr$host.log" >"$OUT"
	return 1
}

# fio_b ARGS...: fio as a program of the borrower, through the engine.
fio_b() {
	"$SMARTIO" exec --host 0 -- fio --ioengine=external:"$ENGINE" --name=job \
		--verify_state_save=0 "$@"
}

check "cluster up (default cluster)" "$SMARTIO" cluster up
check "manager on lender-a (host 1)" start_manager 1 8:nvme0
check "manager on lender-b (host 2)" start_manager 2 12:nvme0

for dev in 8:nvme0 12:nvme0; do
	check "$dev: randwrite QD8 + verify=crc32c" fio_b --fdid=$dev --rw=randwrite --bs=4k \
		--iodepth=8 --size=16m --verify=crc32c --do_verify=1
	expect "$dev: randwrite: no errors, verified" "err= 0" "read: IOPS=" "write: IOPS="
	check "$dev: rw 16k QD4 + verify=crc32c" fio_b --fdid=$dev --rw=rw --bs=16k --iodepth=4 \
		--size=16m --offset=32m --verify=crc32c --do_verify=1
	expect "$dev: rw: no errors" "err= 0"
	# randread checks the headers a sequential write left (another job, another run).
	check "$dev: write 8m with crc32c headers" fio_b --fdid=$dev --rw=write --bs=4k \
		--iodepth=16 --size=8m --offset=64m --verify=crc32c --do_verify=0
	check "$dev: randread QD8 + verify=crc32c" fio_b --fdid=$dev --rw=randread --bs=4k \
		--iodepth=8 --size=8m --offset=64m --verify=crc32c
	expect "$dev: randread: no errors" "err= 0" "read: IOPS="
	expect "$dev: the engine prints the timing model's prediction" \
		"smartio-fio: model \(real hardware, this route\): [0-9.]+ us per 4096-byte read"
	check_fails "$dev: randread + verify of never-written blocks fails" fio_b --fdid=$dev \
		--rw=randread --bs=4k --iodepth=8 --size=1m --offset=96m --verify=crc32c
done

for qd in 1 32; do
	check "randread QD$qd (JSON)" fio_b --fdid=8:nvme0 --rw=randread --bs=4k --iodepth=$qd \
		--size=16m --time_based --runtime=1 --output-format=json --output="$WORK/qd$qd.json"
	json_check "randread QD$qd: I/O done, no errors" "$WORK/qd$qd.json" \
		"d['jobs'][0]['error'] == 0 and d['jobs'][0]['read']['io_bytes'] > 0"
done

check "3 jobs (processes), a queue pair each" fio_b --fdid=8:nvme0 --rw=randread --bs=4k \
	--iodepth=4 --size=16m --numjobs=3 --group_reporting --time_based --runtime=1
expect "3 jobs: no errors" "jobs=3\): err= 0"
check "2 jobs as threads" fio_b --fdid=12:nvme0 --thread --rw=randrw --bs=8k --iodepth=2 \
	--size=8m --numjobs=2 --group_reporting
expect "2 threads: no errors" "jobs=2\): err= 0"
check "default device, sq_place=host cq_place=device" fio_b --rw=read --bs=4k --size=4m \
	--sq_place=host --cq_place=device
expect "placements: no errors" "err= 0"

# sq_place=accel:DEV as smartio-nvme --sq accel:DEV (TOCS'21 fig. 34, "SQ in the
# lender's GPU"): the SQ in lender-a's gpu0, fetched by nvme0 below the switch;
# gpu0's bar_reads count the 64-byte entries (diag), nvme0's none.
check "diag --clear on lender-a" "$SMARTIO" diag --clear --host 1
check "sq_place=accel:8:gpu0: randwrite QD4 + verify=crc32c" fio_b --fdid=8:nvme0 \
	--sq_place=accel:8:gpu0 --rw=randwrite --bs=4k --iodepth=4 --size=1m --offset=40m \
	--verify=crc32c --do_verify=1
expect "sq_place=accel: no errors, verified" "err= 0" "read: IOPS=" "write: IOPS="
"$SMARTIO" diag --host 1 --json >"$WORK/acc.diag" 2>"$OUT" || true
json_check "gpu0's BAR2 served the SQ (>= 512 entries of 64 B), nvme0's none" "$WORK/acc.diag" \
	'(lambda b: b["gpu0"] >= 512 * 64 and b["gpu0"] % 64 == 0 and b["nvme0"] == 0)({x["name"]: x["bar_reads"] for x in d["hosts"][0]["devices"]})'
check_fails "sq_place=accel: of no device fails" fio_b --fdid=8:nvme0 --sq_place=accel:8:nosuch \
	--rw=read --size=64k
expect "no accelerator: explained" "sq_place=accel:8:nosuch: no such accelerator"
check_fails "cq_place=accel: fails (SQs only)" fio_b --fdid=8:nvme0 --cq_place=accel:8:gpu0 \
	--rw=read --size=64k
expect "CQ: explained" "cq_place=accel:8:gpu0: use default, device, host, cmb$"

check_fails "unknown device fails" fio_b --fdid=nosuch --rw=randread --size=1m
expect "unknown device: explained" "fdid=nosuch: no such NVMe controller"
check_fails "bad placement fails" fio_b --fdid=8:nvme0 --sq_place=attic --rw=read --size=1m
expect "bad placement: explained" "sq_place=attic: use default, device, host, cmb or accel:DEV"
check_fails "bs above MDTS fails" fio_b --fdid=8:nvme0 --bs=256k --rw=read --size=1m
expect "bs: explained" "bs up to 128k"
check_fails "inactive namespace fails" fio_b --fdid=8:nvme0 --nsid=9 --rw=read --size=1m
expect "namespace: explained" "namespace 9"

tap_done
