#!/usr/bin/env bash
# Run every benchmark; results (text and JSON) go to bench/out/.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
out="$here/out"
mkdir -p "$out"
echo "== route resolution =="
"$build/bench/bench_route" | tee "$out/route.txt"
"$build/bench/bench_route" --json > "$out/route.json"
echo "== accelerator copy bandwidth vs memcpy =="
"$build/bench/bench_accel" | tee "$out/accel.txt"
"$build/bench/bench_accel" --json > "$out/accel.json"
echo "== NVMe controller 4 KiB random reads vs pread =="
"$build/bench/bench_nvme" | tee "$out/nvme.txt"
"$build/bench/bench_nvme" --json > "$out/nvme.json"
echo "== SISCI: remote vs local maps, DMA queues, data interrupts =="
SMARTIO_BUILD_DIR="$build" "$build/bench/bench_sisci" | tee "$out/sisci.txt"
SMARTIO_BUILD_DIR="$build" "$build/bench/bench_sisci" --json > "$out/sisci.json"
echo "== Device Lending: DMA map on a shadow device, NVMe QD1 local vs borrowed =="
"$build/bench/bench_lend" | tee "$out/lend.txt"
"$build/bench/bench_lend" --json > "$out/lend.json"
"$here/lend.sh" "$build" | tee "$out/lend_daemon.txt"
"$here/lend.sh" "$build" --json > "$out/lend_daemon.json"
echo "== cluster start-up, idle CPU, RSS =="
"$here/cluster.sh" "$build" --json "$out/cluster.json" | tee "$out/cluster.txt"
echo "results in $out"
