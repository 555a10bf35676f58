#!/usr/bin/env bash
# NVMe QD1 4 KiB read latency through the daemons' in-kernel driver, local vs
# borrowed (Device Lending), in one run. usage: bench/lend.sh BUILD_DIR [--json]
set -euo pipefail
build=${1:-build}
smartio="$build/tools/smartio/smartio"
tmp=$(mktemp -d)
export SMARTIO_CLUSTER=$tmp/c
trap '"$smartio" cluster down >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
cat >"$tmp/topo.yaml" <<'YAML'
version: 1
hosts:
  - id: 0
    ram: 1G
    iommu: true
    ports:
      - ntb: {name: ntb0, connect: 1.ntb0}
      - device: {name: nvme0, model: nvme, lendable: false,
                 params: {ns_size: 64M, lba: 4096, queues: 4}}
  - id: 1
    ram: 1G
    iommu: true
    ports:
      - ntb: {name: ntb0}
      - device: {name: nvme0, model: nvme, params: {ns_size: 64M, lba: 4096, queues: 4}}
YAML
"$smartio" cluster up "$tmp/topo.yaml" >/dev/null
fdid=$("$smartio" devices --host 0 | awk '/nvme0/ {print $1; exit}')
shadow=$("$smartio" borrow "$fdid" --host 0 | sed -n 's/.* is \([0-9a-f:.]*\), driver nvme$/\1/p')
local=$("$smartio" nvme list --host 0 | awk '$1 ~ /^[0-9a-f][0-9a-f]:/ && $1 !~ /^f0/ {print $1; exit}')
[ -n "$shadow" ] && [ -n "$local" ] || { echo "bench/lend.sh: set-up failed" >&2; exit 1; }
"$build/bench/bench_lend_io" 0 "$local" "$shadow" 4000 ${2:+--json}
