#!/bin/sh
# Runs one libFuzzer harness for a bounded time: run_fuzzer.sh FUZZER WORKDIR SEEDS SECONDS
# New inputs go to WORKDIR (emptied first), the seeds are only read. A crash
# leaves crash-* in WORKDIR and fails.
set -eu
fuzzer=$1 work=$2 seeds=$3 seconds=$4
rm -rf "$work"
mkdir -p "$work"
cd "$work"
exec "$fuzzer" -max_total_time="$seconds" -seed=1 -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 "$work" "$seeds"
