#!/usr/bin/env bash
# Fuzzes every native reader and every wire dialect parser for a bounded time each (libFuzzer via
# cargo-fuzz; see docs/fuzzing.md). A crash fails the run and leaves its input under
# fuzz/artifacts/<target>/.
#
#   scripts/fuzz.sh [SECONDS_EACH] [TARGET...]     (default: 30 s, every target)
#
# Stable rustc with RUSTC_BOOTSTRAP=1 (libFuzzer needs -Z flags) and --sanitizer none (no sanitizer
# runtime ships with the stable toolchain here): coverage-guided fuzzing that finds panics, hangs
# (-timeout) and runaway memory (-rss_limit_mb), not memory errors a sanitizer would.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds=${1:-30}
shift || true
export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo fuzz list)
fi

# Release mode with debug assertions and overflow checks (cargo-fuzz's default).
cargo fuzz build --sanitizer none
bin="target/$(rustc -vV | sed -n 's/^host: //p')/release"

summary=()
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target"
    # Each target writes its own seeds (samples, and the conformance corpus through its writer or
    # dialect) and exits.
    HANDOFF_FUZZ_SEED="corpus/$target" "$bin/$target" 2>&1 | grep -v '__sanitizer_set_death_callback' || true
    log="target/fuzz-$target.log"
    if ! cargo fuzz run --sanitizer none "$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        >"$log" 2>&1; then
        tail -40 "$log"
        echo "fuzz: $target FAILED (input under fuzz/artifacts/$target/)" >&2
        exit 1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    corpus=$(ls "corpus/$target" | wc -l)
    summary+=("$(printf '%-26s %3s s %10s inputs  corpus %5s' "$target" "$seconds" "$runs" "$corpus")")
done
printf '%s\n' "${summary[@]}"
echo "fuzz: ${#targets[@]} targets, no crash"
