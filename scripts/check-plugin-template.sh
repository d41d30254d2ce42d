#!/usr/bin/env bash
# Builds the out-of-tree plugin template as a third party would (its own workspace, handoff-sdk by
# path), runs its own tests, and certifies its .so with the workspace's `conformance` binary.
# Its build goes to target/template so it never disturbs the workspace's own artefacts.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export CARGO_TARGET_DIR="$repo/target/template"
cd "$repo/examples/plugin-template"
cargo clippy --all-targets -- -D warnings
cargo test
cargo build
(cd "$repo" && env -u CARGO_TARGET_DIR cargo build -q -p handoff-live --bin conformance)
certs="$(mktemp -d)"
trap 'rm -rf "$certs"' EXIT
"$repo/target/debug/conformance" run "$CARGO_TARGET_DIR/debug/libhandoff_plugin_template.so" \
  --cert-dir "$certs" --json "$certs/report.json"
ls "$certs"/file-*.json >/dev/null
echo "plugin template: built, tested and certified"
