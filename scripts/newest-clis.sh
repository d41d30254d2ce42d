#!/usr/bin/env bash
# Following a release is one command: asks the npm registry for the newest version of every CLI in
# scripts/cli-versions.env, installs each in a scratch folder (never the real HOME, never
# .live-cache), runs the plugin's live tier against it (HANDOFF_LIVE_END=candidate: whatever
# version is installed there), and prints a table. Nothing in the repository changes: to adopt a
# version that passes, set <NAME>_NEWEST in scripts/cli-versions.env and the plugin's verified
# range, then run scripts/test-all.sh.
#
# usage: scripts/newest-clis.sh [NAME...]   (default: every CLI pinned)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=cli-versions.env
. "$repo/scripts/cli-versions.env"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  while IFS= read -r name; do names+=("$name"); done < <(
    sed -n 's/^\([A-Z0-9_]*\)_PACKAGE=.*/\1/p' "$repo/scripts/cli-versions.env" | tr '[:upper:]' '[:lower:]')
fi
scratch="$(mktemp -d "${TMPDIR:-/tmp}/handoff-newest-clis.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

# The crate whose tests/conformance.rs runs the live tier of a CLI: the plugin whose manifest
# names its program.
crate_of() {
  local program="$1" manifest
  manifest="$(grep -l "program: \"$program\"\|program: \"$program\".to_owned()" "$repo"/plugins/*/src/*.rs "$repo"/plugins/*/src/*/*.rs 2>/dev/null | head -1)"
  [ -n "$manifest" ] || return 1
  sed -n 's/^name = "\(.*\)"/\1/p' "${manifest%%/src/*}/Cargo.toml" | head -1
}

rows=()
for name in "${names[@]}"; do
  upper="$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')"
  pkg_var="${upper}_PACKAGE"; ver_var="${upper}_VERSION"; bin_var="${upper}_PROGRAM"; newest_var="${upper}_NEWEST"
  pkg="${!pkg_var:-}"; pinned="${!ver_var:-}"; bin="${!bin_var:-}"; newest_spec="${!newest_var:-}"
  [ -n "$pkg" ] || { echo "newest-clis: unknown CLI '$name'" >&2; exit 2; }
  # A CLI that moved to another package is followed there.
  [ -n "$newest_spec" ] && pkg="${newest_spec%@*}"
  verified="${newest_spec##*@}"; [ -n "$newest_spec" ] || verified="$pinned"
  latest="$(HOME="$scratch/.home" npm view "$pkg" version 2>/dev/null || true)"
  if [ -z "$latest" ]; then
    rows+=("| $name | \`$pkg\` | $pinned | $verified | ? | the registry did not answer |"); continue
  fi
  crate="$(crate_of "$bin" || true)"
  cache="$scratch/$name"
  mkdir -p "$cache/newest"
  printf '{ "name": "handoff-newest-%s", "private": true }\n' "$name" > "$cache/newest/package.json"
  if ! (cd "$cache/newest" && HOME="$scratch/.home" npm install --save-exact --loglevel=error "$pkg@$latest" >&2); then
    rows+=("| $name | \`$pkg\` | $pinned | $verified | $latest | npm install failed |"); continue
  fi
  if [ -z "$crate" ]; then
    rows+=("| $name | \`$pkg\` | $pinned | $verified | $latest | no plugin names program $bin |"); continue
  fi
  # A CLI that needs a newer Node.js than the machine's runs on the pinned runtime beside it, where
  # the live tier looks for it (<cache>/node-runtimes/<release>), as install-clis.sh puts it.
  node_min_var="${upper}_NODE_MIN"; [ -n "$newest_spec" ] && node_min_var="${upper}_NEWEST_NODE_MIN"
  node_min="${!node_min_var:-}"
  system_node="$(node --version 2>/dev/null | sed 's/^v//' || true)"
  if [ -n "$node_min" ] && [ "$(printf '%s\n%s\n' "$node_min" "${system_node:-0}" | sort -V | head -1)" != "$node_min" ]; then
    runtime_dir="$cache/newest/node-runtimes/$NODE_RUNTIME_RELEASE"
    mkdir -p "$runtime_dir"
    printf '{ "name": "handoff-node-runtime", "private": true }\n' > "$runtime_dir/package.json"
    if ! (cd "$runtime_dir" && HOME="$scratch/.home" npm install --save-exact --loglevel=error "$NODE_RUNTIME_NPM@$NODE_RUNTIME_RELEASE" >&2); then
      rows+=("| $name | \`$pkg\` | $pinned | $verified | $latest | npm install of Node.js $NODE_RUNTIME_RELEASE failed |"); continue
    fi
  fi
  log="$scratch/$name.log"
  if (cd "$repo" && HANDOFF_CLI_CACHE="$cache" HANDOFF_LIVE_END=candidate HANDOFF_LIVE_REQUIRED=1 \
      cargo test -q -p "$crate" --test conformance -- --nocapture >"$log" 2>&1); then
    verdict="passes"
  else
    verdict="FAILS"
  fi
  passed="$(grep -c '^Pass live/' "$log" || true)"; failed="$(grep -c '^Fail live/' "$log" || true)"
  rows+=("| $name | \`$pkg\` | $pinned | $verified | $latest | $verdict: $passed live checks pass, $failed fail |")
  if [ "$verdict" = FAILS ]; then
    grep -A3 '^Fail live/' "$log" | head -20 >&2 || tail -20 "$log" >&2
  fi
done

echo "Newest CLIs on the npm registry, $(date -u +%Y-%m-%d), against handoff's live tier:"
echo
echo "| CLI | package | pinned (oldest) | verified newest | registry newest | live tier on the registry newest |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
