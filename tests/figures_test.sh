#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/figures (issue 7): one command regenerates the papers' experiments.
# Runs the quick pass (model + papers + a short emulated pass on the MXS824
# topology) and checks the exit status, the JSON, the tables and the PNGs;
# then that a calibration which moves a stated number makes it fail.
set -euo pipefail
. "$(dirname "$0")/tap.sh"

FIG="$SRC/bench/figures"
D=$WORK/fig

check "bench/figures --quick exits 0" "$FIG" --quick --out "$D" "$BUILD"
cp "$OUT" "$WORK/figures.log"
expect "it prints the model, the papers' numbers and the emulated results" \
	'== smartio-fig22: DMA throughput' 'paper: iommu-off-read +10.2 GB/s' \
	'ok \(within 10%\)' 'emulated: wall clock of the emulated cluster' \
	'emulated +local-median' 'results in '
expect_not "no stated number drifts" 'OUTSIDE 10%'

for f in "$D"/figures.json "$D"/paper.json "$D"/smartio-fig31.json "$D"/czodiac-fig13.json; do
	check "$(basename "$f") is valid JSON" python3 -m json.tool "$f" "$WORK/pretty.json"
done
json_check "14 figures, none outside 10%" "$D/figures.json" \
	'len(d["figures"]) == 14 and d["outside"] == 0 and d["tolerance"] == 0.1'
json_check "every figure has model series, curves 4 KiB..128 MiB" "$D/figures.json" \
	'all(f["model"] and all(len(s["points"]) == (1 if f["kind"] == "bars" else 16)
	     for s in f["model"]) for f in d["figures"])'
json_check "every stated number is within 10% and carries its source" "$D/figures.json" \
	'(sum(len(f["paper"]) for f in d["figures"]) == 11 and
	  all(c["ok"] and abs(c["drift_pct"]) <= 10 for f in d["figures"] for c in f["paper"]))'
json_check "the quick pass measured DMA and ping-pong on the emulated cluster" \
	"$D/figures.json" \
	'([len(f["emulated"]["series"]) for f in d["figures"] if f["id"] in
	   ("smartio-fig22", "smartio-fig23", "smartio-fig25")] == [2, 2, 2] and
	  all(max(p[1] for p in s["points"]) > 0
	      for f in d["figures"] for s in f["emulated"]["series"]))'
json_check "figure 31 states 10.2 and 1.5 GB/s" "$D/smartio-fig31.json" \
	'[c["stated"] for c in d["figures"][0]["paper"]] == [10.2, 1.5]'

if command -v gnuplot >/dev/null; then
	check "14 PNGs" test "$(ls "$D"/*.png | wc -l)" -eq 14
	check "the PNGs are PNG images" bash -c 'for f in "$1"/*.png; do
		[ "$(head -c 8 "$f" | od -An -tx1 | tr -d " \n")" = 89504e470d0a1a0a ] || exit 1; done' \
		_ "$D"
else
	ok "# SKIP no gnuplot: no PNGs expected"
	ok "# SKIP no gnuplot"
fi

# A calibration that moves a stated number: the command must say so and fail.
sed 's/^    outstanding: 40 .*/    outstanding: 80/' "$SRC/topologies/timing.yaml" > "$WORK/bad.yaml"
check_fails "a drifting stated number fails bench/figures" \
	"$FIG" --no-emulation --params "$WORK/bad.yaml" --out "$WORK/bad" "$BUILD"
expect "it names the drifting number" 'paper: iommu-on-read .*OUTSIDE 10%'

check "predict figure list" "$SMARTIO" predict figure list
expect "it lists every figure" '^smartio-fig22 ' '^smartio-fig34 ' '^dl-fig19 ' '^czodiac-fig12 ' '^czodiac-fig13 '
check_fails "predict figure: unknown figure" "$SMARTIO" predict figure nosuch
check "predict figure --help" "$SMARTIO" predict figure --help
expect "the help names the options" '--measured FILE' '--gnuplot DIR'

tap_done
