#!/usr/bin/env bash
# What the first `handoff continue` after a build costs over a warm one: the README's main job
# (the bundled Claude Code session continued in Codex, into a fresh scratch store root), run with an
# empty certificate folder (the run certifies the built-ins it uses: claude and codex) and with the
# certificates that run left (warm). Both write the same new session; only certification differs.
# Runs the two back to back, ROUNDS times, with hyperfine; prints each round's medians and the
# difference, then the median difference over the rounds (docs/conformance.md keeps the figures).
#
# usage: scripts/bench-first-run.sh [HANDOFF_BINARY] [ROUNDS] [RUNS_PER_ROUND]
#   without a binary it builds `cargo build --release -p handoff-cli` and uses target/release/handoff.
# Nothing is written outside a temporary folder: HOME, XDG dirs, certificates and store roots are in it.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ $# -ge 1 && -n "$1" ]]; then
  handoff="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
else
  (cd "$repo" && cargo build -q --release -p handoff-cli)
  handoff="$repo/target/release/handoff"
fi
rounds="${2:-5}"
runs="${3:-10}"
sample="$repo/examples/sessions/claude-code/4f6c2a8e-1b7d-4c3a-9e55-2d0f8a6b7c11.jsonl"
command -v hyperfine >/dev/null || { echo "bench-first-run: needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench-first-run: needs python3 (reads hyperfine's JSON)" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/cwd"
export HOME="$work/home" XDG_DATA_HOME="$work/home/data" XDG_CONFIG_HOME="$work/home/config"

# HANDOFF_CERT_DIR and the store root are per case; the prepare step empties what the case needs empty.
main_job() {
  printf 'env HANDOFF_CERT_DIR=%q %q continue --from claude-code:%q --to codex --store-root %q --cwd %q' \
    "$work/$1/certificates" "$handoff" "$sample" "$work/$1/codex" "$work/cwd"
}
mkdir -p "$work/warm"
# The warm case's certificates (its notes on stderr, e.g. which cwd it used, shown on failure only).
eval "$(main_job warm)" >/dev/null 2>"$work/warm.log" || { cat "$work/warm.log" >&2; exit 1; }

printf '%-7s %12s %12s %12s\n' round "first (ms)" "warm (ms)" "first-warm"
diffs=()
for round in $(seq 1 "$rounds"); do
  hyperfine --style none --runs "$runs" --export-json "$work/round.json" \
    --prepare "rm -rf $(printf %q "$work/first") && mkdir -p $(printf %q "$work/first")" \
    --command-name first "$(main_job first)" \
    --prepare "rm -rf $(printf %q "$work/warm/codex")" \
    --command-name warm "$(main_job warm)" >/dev/null 2>"$work/hyperfine.log" ||
    { cat "$work/hyperfine.log" >&2; exit 1; }
  line="$(python3 - "$work/round.json" <<'EOF'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
first, warm = results["first"]["median"] * 1e3, results["warm"]["median"] * 1e3
print(f"{first:.1f} {warm:.1f} {first - warm:.1f}")
EOF
)"
  read -r first warm diff <<<"$line"
  printf '%-7s %12s %12s %12s\n' "$round" "$first" "$warm" "$diff"
  diffs+=("$diff")
done
python3 - "${diffs[@]}" <<'EOF'
import statistics, sys
diffs = [float(d) for d in sys.argv[1:]]
print(f"first run costs {statistics.median(diffs):.0f} ms more than a warm one "
      f"(median of {len(diffs)} rounds; range {min(diffs):.0f}..{max(diffs):.0f} ms); budget 300 ms")
EOF
