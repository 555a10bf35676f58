#!/usr/bin/env bash
# Run each fuzz target for a bounded time (default 60 s each), seeded with the
# shipped topologies for the topology parser. Usage: fuzz/run.sh BUILD_DIR [SECONDS]
set -euo pipefail
build=${1:-build-fuzz}
secs=${2:-60}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/topo" "$work/proto" "$work/nvme"
cp "$here"/topologies/*.yaml "$work/topo/"
for t in proto topo nvme; do
	echo "== fuzz_$t for ${secs}s =="
	"$build/fuzz/fuzz_$t" -max_total_time="$secs" -max_len=65536 \
		-artifact_prefix="$work/crash-$t-" "$work/$t"
done
echo "no crashes, leaks or sanitizer findings"
