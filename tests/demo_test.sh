#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# `make demo`'s job (demo/run.sh) on this build: it runs to the end, every
# step's command succeeds, and it leaves nothing behind. TAP output.
set -euo pipefail

. "$(dirname "$0")/tap.sh"

check "demo/run.sh runs to the end" "$SRC/demo/run.sh" "$BUILD"
expect "Device Lending: the driver binds the shadow" "driver nvme"
expect "the shared NVMe verifies from two hosts" "verified"
expect "bench prints the model beside the measurement" "model \\(real hardware, this route\\)"
expect "it says it left nothing behind" "^demo finished: nothing left behind"
tap_done
