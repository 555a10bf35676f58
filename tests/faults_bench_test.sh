#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/faults, one short cell: a 10 ms flap of a cluster-switch port under 4
# verifying NVMe clients on topologies/multipath.yaml, multipath off and (when
# libsmartio-nvme has backup paths) on. The bench's own verdicts are checked:
# nothing acknowledged lost, nothing corrupted, nothing leaked, every client
# done, and the cells where the path had no backup report the errors the
# application saw instead of hiding them.
set -euo pipefail
. "$(dirname "$0")/tap.sh"
RES=$WORK/res

check "bench/faults runs one cell" "$SRC/bench/faults" "$BUILD" --only flap-port-10ms \
	--seconds 3 --out "$RES"
check "it wrote JSON, a table and a plot" test -s "$RES/faults.json" -a -s "$RES/faults.txt"
verdict() {
	python3 - "$RES/faults.json" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
corruption_only = sys.argv[2] == "corrupted"
bad = []
for c in d["cells"]:
    if c.get("skipped"):
        continue
    name = "%s/%s" % (c["cell"], "on" if c["multipath"] else "off")
    if corruption_only:
        if c["corrupted"]:
            bad.append(name + ": corrupted %d (blocks or reads with another block's data)" %
                       c["corrupted"])
        continue
    if c.get("error"):
        bad.append(name + ": " + c["error"])
    if c["lost"]:
        bad.append(name + ": lost %d" % c["lost"])
    if c["clients_ok"] != 4:
        bad.append(name + ": %d clients done" % c["clients_ok"])
    if c["writes_acked"] == 0:
        bad.append(name + ": no writes")
    for k in ("leaked_lut", "leaked_rid", "leaked_queues"):
        if c.get(k) != 0:
            bad.append("%s: %s %s" % (name, k, c.get(k)))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
check "no acknowledged write lost, nothing leaked, every client done" verdict all
# A known open bug (docs/nvme-driver.md, "Known problems"): now and then (about
# one run in five on a loaded 2-vCPU machine, at the previous release too) a
# 10 ms port flap leaves a block or a read holding another block's data, with
# multipath off or on. Reported, not yet counted as a failure.
todo "nothing corrupted" "a port flap may leave a block with another block's data" \
	verdict corrupted
tap_done
