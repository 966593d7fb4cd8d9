#!/bin/bash
# make bench: measured side by side in one run; quote ratios, not absolutes.
set -e
build=${1:-build}
make --no-print-directory -s "$build/bench_sample" "$build/bench_metrics"
echo "== one sample, per counter source =="
"$build/bench_sample"
echo "== the Prometheus textfile beside the sampling =="
"$build/bench_metrics"
