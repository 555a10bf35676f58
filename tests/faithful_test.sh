#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Timing-faithful mode (docs/timing-model.md) through real daemons: with
# `timing: faithful` in the topology, QD1 4 KiB reads through the distributed
# NVMe driver take at least what the timing model predicts for their routes
# (and not absurdly more: a loose bound, this is not a speed test), and an
# idle faithful cluster costs no more CPU than a default one. In the default
# mode smartio-nvme bench still prints the model's prediction. TAP output.
set -euo pipefail

. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/nvme_manager.sh"

SLACK_US=2000           # measured median may exceed the model by this much here

# CPU ticks (utime + stime) of every daemon of the cluster over 2 s.
idle_ticks() {
	local pids p t0=0 t1=0
	pids=$(cat "$SMARTIO_CLUSTER"/host-*.pid)
	for p in $pids; do t0=$((t0 + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
	sleep 2
	for p in $pids; do t1=$((t1 + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
	echo $((t1 - t0))
}

# ---- the default (fast) cluster: the model is printed beside the measurement ----
check "cluster up (default timing)" "$SMARTIO" cluster up
check "manager on lender-a" start_manager 1 8:nvme0
check "bench from host 0, default mode" on_host 0 bench -d 8:nvme0 --ios 2000 -P
expect "bench prints the model beside the measurement" \
	"measured 4 KiB QD1 read p50: [0-9.]+ us; model \(real hardware, this route\): [0-9.]+ us" \
	"model: doorbell [0-9.]+ \+ fetch [0-9.]+ \+ media 8.00 \+ data"
check "bench --json, default mode" on_host 0 bench -d 8:nvme0 --ios 2000 -P --json
cp "$OUT" "$WORK/fast.json"
json_check "JSON has the model's total and terms" "$WORK/fast.json" \
	"d['model_us']['total'] > d['model_us']['media'] >= 8 and d['model_us']['complete']"
check "manager stops" stop_manager
sleep 1
DEFAULT_TICKS=$(idle_ticks)
check "cluster down" "$SMARTIO" cluster down

# ---- timing: faithful ----
check "cluster up --timing faithful" "$SMARTIO" cluster up --timing faithful
check "the cluster's topology.yaml says so" grep -x "timing: faithful *# smartio cluster up --timing" \
	"$SMARTIO_CLUSTER/topology.yaml"
check "manager on lender-a (faithful)" start_manager 1 8:nvme0
for h in 0 1; do
	check "faithful bench QD1 4K randread from host $h" on_host "$h" bench -d 8:nvme0 \
		--ios 3000 -P --json
	cp "$OUT" "$WORK/faithful-$h.json"
	echo "# host $h: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("p50", d["lat_us"]["p50"], "us, model", d["model_us"]["total"], "us")' "$WORK/faithful-$h.json")"
	json_check "host $h: median is not faster than the model" "$WORK/faithful-$h.json" \
		"d['errors'] == 0 and d['model_us']['complete'] and d['lat_us']['p50'] >= d['model_us']['total']"
	json_check "host $h: median within ${SLACK_US} us of the model" "$WORK/faithful-$h.json" \
		"d['lat_us']['p50'] < d['model_us']['total'] + $SLACK_US"
done
check "faithful writes are not faster than the model either" on_host 0 bench -d 8:nvme0 \
	--rw randwrite --ios 2000 -P --json
cp "$OUT" "$WORK/faithful-w.json"
json_check "write median >= model" "$WORK/faithful-w.json" \
	"d['lat_us']['p50'] >= d['model_us']['total'] and d['model_us']['media'] >= 8"
check "manager stops (faithful)" stop_manager
sleep 1
FAITHFUL_TICKS=$(idle_ticks)
echo "# idle CPU over 2 s: default $DEFAULT_TICKS ticks, faithful $FAITHFUL_TICKS ticks"
# Loose: an idle faithful cluster must not spin (a spinning device thread
# alone would cost ~200 ticks in 2 s).
check "an idle faithful cluster costs no more CPU than a default one" \
	test "$FAITHFUL_TICKS" -le $((DEFAULT_TICKS * 2 + 20))
check "cluster down (faithful)" "$SMARTIO" cluster down

# ---- the accelerator's DMA engine ----
sed 's/^name: accel-local$/name: accel-faithful\ntiming: faithful/' \
	"$SRC/tests/topologies/accel-local.yaml" >"$WORK/accel.yaml"
# --timing overrides the file's key (one key left, the option's), and only takes the two words.
check "cluster up --timing fast over a faithful topology" "$SMARTIO" cluster up "$WORK/accel.yaml" \
	--timing fast --dir "$WORK/ovr"
check "one timing: key, fast" test "$(grep -c '^timing:' "$WORK/ovr/topology.yaml")" = 1 -a \
	"$(grep '^timing:' "$WORK/ovr/topology.yaml" | awk '{print $2}')" = fast
check "cluster down (override)" "$SMARTIO" cluster down --dir "$WORK/ovr"
rc=0; "$SMARTIO" cluster up --timing slow --dir "$WORK/ovr" >"$OUT" 2>&1 || rc=$?
check "--timing slow is a usage error (exit 2)" test "$rc" = 2
check "cluster up: accelerators, timing: faithful" "$SMARTIO" cluster up "$WORK/accel.yaml"
check "model: gpu0 writing 4 KiB into gpu1" "$SMARTIO" predict path --host 0 --from gpu0 \
	--addr gpu1:bar2 --size 4096 --write --json
cp "$OUT" "$WORK/accel-model.json"
check "faithful peer-to-peer copies of 4 KiB" "$SMARTIO" accel copy --host 0 --dev gpu0 \
	--src dev:0 --dst gpu1:bar2 --len 4096 --repeat 500 --json
cp "$OUT" "$WORK/accel-copy.json"
# A descriptor also pays its fetch and status write-back: the write alone is a lower bound.
check "each copy takes at least the model's write latency" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["latency_ns"]
c = json.load(open(sys.argv[2]))
per = c["elapsed_ns"] / c["repeat"]
print("# per copy %.0f ns, model write %.0f ns" % (per, m))
sys.exit(0 if c["status"] == "ok" and per >= m else 1)' "$WORK/accel-model.json" "$WORK/accel-copy.json"
sed -n 's/^# per/# accel: per/p' "$OUT"
check "cluster down (accelerators)" "$SMARTIO" cluster down

tap_done
