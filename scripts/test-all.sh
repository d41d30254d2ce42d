#!/usr/bin/env bash
# Every test, as CI runs it: format and lints, the pinned real CLIs for the live tier (from npm,
# into .live-cache/), then the whole workspace with the live tier required (a missing CLI fails).
set -euo pipefail
cd "$(dirname "$0")/.."

# CI builds everything once on a machine whose disk it shares: no incremental state and line
# tables only in the test binaries (backtraces keep their lines) take about a third of the
# space. A developer's own runs keep cargo's defaults.
if [ "${CI:-}" = true ]; then
  export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=line-tables-only
fi

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# The API docs' links (a renamed method leaves a dangling one that only rustdoc sees).
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
bash scripts/install-clis.sh
HANDOFF_LIVE_REQUIRED=1 cargo test --workspace
# The newest end of every verified range that is not its pin (docs/live.md, "Both ends of a
# verified range"): installed into .live-cache/newest, the same live checks against it.
bash scripts/install-clis.sh --newest
HANDOFF_LIVE_END=newest HANDOFF_LIVE_REQUIRED=1 cargo test -p handoff-claude --test conformance
HANDOFF_LIVE_END=newest HANDOFF_LIVE_REQUIRED=1 cargo test -p handoff-pi --test conformance
HANDOFF_LIVE_END=newest HANDOFF_LIVE_REQUIRED=1 cargo test -p handoff-live --test interactive_resume -- claude_code pi_opens
# The Claude Code reader reads as the CLI of the end it runs sends (its rules per version):
# its differential at the newest end too (50 cases, about 30-60 s).
HANDOFF_LIVE_END=newest HANDOFF_LIVE_REQUIRED=1 cargo test -p handoff-live --test differential -- claude_code
bash scripts/check-plugin-template.sh
# Fuzzing, bounded (docs/fuzzing.md): every native reader and dialect parser, 15 s each.
bash scripts/fuzz.sh "${HANDOFF_FUZZ_SECONDS:-15}"
