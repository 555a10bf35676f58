#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The CLI's --json output is real JSON whatever the names hold: strings are
# escaped (quotes, backslashes, control characters), numbers keep their
# documented precision. No daemons: `cluster status` on a cluster that is not
# running still prints every host (as down), and `predict` needs none.
# TAP output; exits non-zero on any failure.
set -euo pipefail

. "$(dirname "$0")/tap.sh"

# A cluster name may hold any printable ASCII (docs/topology.md), so quotes and
# backslashes; a directory name may hold control characters too.
DIR=$WORK/$'q"b\\s\tt\nn\001x'
NAME='we "quote" \back\slash'
mkdir -p "$DIR"
cat >"$DIR/topology.yaml" <<'EOF'
version: 1
name: 'we "quote" \back\slash'
hosts:
  - id: 0
    name: h-0
    ports:
      - device: {name: gpu0, model: accel}
  - id: 1
    ports:
      - device: {name: gpu0, model: accel}
EOF

set +e
"$SMARTIO" cluster status --json --dir "$DIR" >"$WORK/status.json" 2>"$OUT"
rc=$?
set -e
if [ "$rc" = 3 ]; then ok "cluster status --json: exit 3, no host up"; else
	not_ok "cluster status --json: exit 3, no host up (got $rc)"; fi
cp "$WORK/status.json" "$OUT"
check "cluster status --json is valid JSON" python3 -m json.tool "$WORK/status.json"
printf '%s' "$NAME" >"$WORK/name"
json_check "the cluster name comes back exactly" "$WORK/status.json" \
	"d['cluster'] == open('$WORK/name').read()"
printf '%s' "$DIR" >"$WORK/dir"
json_check "the directory comes back exactly (tab, newline, \\x01)" "$WORK/status.json" \
	"d['dir'] == open('$WORK/dir').read()"
cp "$WORK/status.json" "$OUT"
expect "quotes and backslashes are escaped" 'we \\"quote\\" \\\\back\\\\slash'
expect "control characters are escaped" '\\t' '\\n' '\\u0001'
if [ "$(wc -l <"$WORK/status.json")" = 1 ]; then ok "one line: no raw newline"; else
	not_ok "one line: no raw newline"; fi
json_check "fields and types as documented" "$WORK/status.json" \
	"(d['up'] == 0 and d['total'] == 2 and [h['host'] for h in d['hosts']] == [0, 1] and
	  all(h['state'] == 'down' and h['pid'] is None and h['iommu'] is False and
	      isinstance(h['uptime_s'], float) and h['route_hits'] == 0 for h in d['hosts']))"

# ---- predict: no daemon needed ----
check "predict link --json" "$SMARTIO" predict link --gen 3 --width 8 --size 4K --write --json
cp "$OUT" "$WORK/link.json"
expect "predict link: compact, fixed precision" '^\{"gen":3,"width":8,' '"write":true' \
	'"latency_ns":[0-9]+\.[0-9],'
json_check "predict link: valid, bottleneck an object" "$WORK/link.json" \
	"d['width'] == 8 and isinstance(d['bottleneck'], dict) and isinstance(d['explain'], str)"

tap_done
