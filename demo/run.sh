#!/usr/bin/env bash
# The main job: start the default 3-host cluster, show every host's PCIe tree,
# resolve a few routes (local RAM; peer-to-peer under a switch; through an NTB
# window from the borrower into a lender), predict what one costs on real
# hardware, lend lender A's NVMe to the borrower (Device Lending: its ordinary
# driver binds to the shadow device), share lender B's NVMe at queue level
# between hosts (the distributed NVMe driver on SISCI), then stop the cluster
# cleanly.
# usage: demo/run.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
smartio=$(realpath "$build/tools/smartio/smartio")
snvme=$(realpath "$build/tools/smartio-nvme/smartio-nvme")
work=$(mktemp -d)
export SMARTIO_CLUSTER=${SMARTIO_CLUSTER:-$work/demo}
trap '"$smartio" cluster down >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ smartio %s\n' "$*"; "$smartio" "$@"; }
# on_host N ARGS: smartio-nvme as a program of host N.
on_host() {
	local h=$1
	shift
	printf '$ smartio exec --host %s -- smartio-nvme %s\n' "$h" "$*"
	"$smartio" exec --host "$h" -- "$snvme" "$@"
}

step "Start the built-in cluster: a borrower, lender A (expansion chassis with an NVMe and two GPUs), lender B"
run cluster up
run cluster status
run topo

for h in 0 1 2; do
	step "Host $h: lspci -tv (the real lspci decoding our config spaces)"
	run lspci --host "$h" -tv
done

step "Route 1: the borrower's CPU writes its own RAM"
run route --host 0 --addr 0x100000 --len 4096

step "Route 2: lender A's gpu0 writes gpu1's memory — peer-to-peer inside the PEX8796, never reaching the root"
run route --host 1 --from gpu0 --addr gpu1:bar2+0x1000 --len 4096

step "Route 3: lender B's NVMe DMAs into its own RAM through the IOMMU (no mapping yet: a recorded fault)"
run route --host 2 --from nvme0 --addr 0x200000 --len 4096 || true
run iommu --host 2 faults

step "Route 4: program the borrower's NTB look-up table: window -> lender A's RAM at 0"
out=$("$smartio" ntb --host 0 lut set auto 1 0)
echo "$out"
win=$(sed -n 's/^window: local bus address \(0x[0-9a-f]*\).*/\1/p' <<<"$out")
addr=$(printf '0x%x' "$((win + 0x2000))")
run route --host 0 --addr "$addr" --len 4096 --read

step "What that route costs on real PCIe hardware (the timing model, calibrated against the papers)"
run predict path --host 0 --from cpu --addr "$addr" --size 4096 --write
run predict paper

step "Pull the cable: the same route now fails as PCIe does (writes dropped, reads all-ones)"
run ntb --host 0 link down
run route --host 0 --addr "$addr" --read || true
run ntb --host 0 link up

step "Device Lending: the borrower borrows lender A's NVMe; its unmodified NVMe driver binds to the shadow device"
run devices
fdid=$("$smartio" devices --json | python3 -c 'import json,sys
print([d["fdid"] for d in json.load(sys.stdin) if d["name"] == "nvme0" and d["lender"] == 1][0])')
run borrow "$fdid" --host 0
run lspci --host 0
run nvme identify --host 0
run devices
run return "$fdid" --host 0 --unbind

step "One NVMe shared at queue level: a manager on lender B, clients on the borrower and lender A submit I/O straight to the controller"
"$smartio" exec --host 2 -- "$snvme" manager -d 12:nvme0 --ready-file "$work/ready" \
	>"$work/manager.log" 2>&1 &
manager=$!
for _ in $(seq 200); do   # bounded: 10 s
	[ -e "$work/ready" ] || ! kill -0 "$manager" 2>/dev/null && break
	sleep 0.05
done
[ -e "$work/ready" ] || { cat "$work/manager.log" >&2; exit 1; }
grep -m1 "manager of" "$work/manager.log" || true
on_host 0 dd -d 12:nvme0 --mode verify --lba 0 --count 4096 --bs 64K --qd 4
on_host 1 dd -d 12:nvme0 --mode read --check --lba 0 --count 4096
on_host 0 bench -d 12:nvme0 --rw randread --qd 1 --time 1 -P
kill -TERM "$manager"
wait "$manager" || true
tail -1 "$work/manager.log"

step "Stop the cluster: no processes, sockets or memory left"
run cluster down
if pgrep -f "$SMARTIO_CLUSTER" >/dev/null; then
	echo "demo: daemons left running" >&2
	exit 1
fi
echo "demo finished: nothing left behind in $SMARTIO_CLUSTER"
