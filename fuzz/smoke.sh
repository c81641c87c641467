#!/usr/bin/env bash
# Fuzz smoke run (CI): builds the fuzz targets, writes the seed corpus, then runs each target
# for a few seconds, one at a time on one core. Any crash, hang (-timeout) or allocation past
# the limit (-rss_limit_mb, -malloc_limit_mb) fails the run; libFuzzer leaves the input in
# fuzz/artifacts/<target>/ to reproduce with `cargo fuzz run <target> <file>`.
#
#   fuzz/smoke.sh [SECONDS_PER_TARGET]   (default 15: six targets, about 90 s after the build)
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`) and the pinned nightly toolchain.
set -euo pipefail
cd "$(dirname "$0")"

seconds="${1:-15}"
targets=(code_object metadata bundle compressed_bundle decode execute)
target_dir="${CARGO_TARGET_DIR:-$PWD/target}/fuzz"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "error: cargo-fuzz is not installed: run \`cargo install cargo-fuzz --locked\`" >&2
    exit 1
fi

# Release code with debug assertions, so that integer overflow is a finding too.
cargo fuzz build -O -a --target-dir "$target_dir"
bin_dir="$target_dir/x86_64-unknown-linux-gnu/release"
"$bin_dir/make_seeds" corpus

for target in "${targets[@]}"; do
    mkdir -p "artifacts/$target"
    echo "fuzzing $target for ${seconds}s"
    log="artifacts/$target/smoke.log"
    status=0
    "$bin_dir/$target" "corpus/$target" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1536 \
        -artifact_prefix="artifacts/$target/" -print_final_stats=1 >"$log" 2>&1 || status=$?
    grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$log" || true
    if [ "$status" -ne 0 ]; then
        tail -n 40 "$log" >&2
        echo "error: fuzz target $target failed: the input is in fuzz/artifacts/$target/" >&2
        exit 1
    fi
done
echo "fuzz smoke: every target ran ${seconds}s without a finding"
