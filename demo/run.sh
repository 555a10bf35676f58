#!/usr/bin/env bash
# The main job: start the default 3-host cluster, show every host's PCIe tree,
# resolve a few routes (local RAM; peer-to-peer under a switch; through an NTB
# window from the borrower into a lender), predict what one costs on real
# hardware, then stop the cluster cleanly.
# usage: demo/run.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
smartio=$(realpath "$build/tools/smartio/smartio")
work=$(mktemp -d)
export SMARTIO_CLUSTER=${SMARTIO_CLUSTER:-$work/demo}
trap '"$smartio" cluster down >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ smartio %s\n' "$*"; "$smartio" "$@"; }

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

step "Stop the cluster: no processes, sockets or memory left"
run cluster down
if pgrep -f "$SMARTIO_CLUSTER" >/dev/null; then
	echo "demo: daemons left running" >&2
	exit 1
fi
echo "demo finished: nothing left behind in $SMARTIO_CLUSTER"
