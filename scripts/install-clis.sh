#!/usr/bin/env bash
# Installs the pinned real CLIs (scripts/cli-versions.env) from npm into a cache folder, for the
# live tier of the conformance suite. Never touches the real HOME: npm runs with HOME pointed at a
# scratch folder inside the cache (the npm download cache stays npm's default unless
# npm_config_cache is set).
#
# usage: scripts/install-clis.sh [--dir DIR] [--newest] [NAME...]
#   NAME: a CLI named in scripts/cli-versions.env, lower case (default: every one it names)
#   DIR:  default $HANDOFF_CLI_CACHE or <repo>/.live-cache
#   --newest: the newest end of each verified range (<NAME>_NEWEST) instead, into DIR/newest;
#             a CLI without one is its pin (already in DIR) and is skipped
# Prints one line per CLI: NAME VERSION PATH-TO-BINARY, and `node VERSION PATH` for the Node.js
# runtime when a CLI's <NAME>_NODE_MIN is newer than the machine's node (installed from npm into
# DIR/node-runtimes/<release>/, its own npm prefix, never onto the system). Exit 1 if an install
# failed.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${HANDOFF_CLI_CACHE:-$repo/.live-cache}"
names=()
newest=false
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --dir=*) dir="${1#--dir=}"; shift ;;
    --newest) newest=true; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) names+=("$1"); shift ;;
  esac
done
# shellcheck source=cli-versions.env
. "$repo/scripts/cli-versions.env"
if [ ${#names[@]} -eq 0 ]; then
  # Every CLI the pin file names (each has a <NAME>_PACKAGE line).
  while IFS= read -r name; do names+=("$name"); done < <(
    sed -n 's/^\([A-Z0-9_]*\)_PACKAGE=.*/\1/p' "$repo/scripts/cli-versions.env" | tr '[:upper:]' '[:lower:]')
fi

if $newest; then dir="$dir/newest"; fi
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
# Keep npm (and any install script) away from the real HOME.
npm_cache="${npm_config_cache:-$(env -u HOME npm config get cache 2>/dev/null || echo "$dir/.npm-cache")}"
export npm_config_cache="$npm_cache"
export HOME="$dir/.home"
mkdir -p "$HOME"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

# The version npm installed of package $1, or nothing.
installed_version() {
  local manifest="$dir/node_modules/$1/package.json"
  [ -f "$manifest" ] && node -p "require(process.argv[1]).version" "$manifest" 2>/dev/null || true
}

# "a.b.c" >= "x.y.z", numerically.
version_at_least() {
  local IFS=.
  local -a have=($1) want=($2)
  for i in 0 1 2; do
    local h="${have[$i]:-0}" w="${want[$i]:-0}"
    if [ "$h" -gt "$w" ]; then return 0; fi
    if [ "$h" -lt "$w" ]; then return 1; fi
  done
  return 0
}
system_node="$(node --version 2>/dev/null | sed 's/^v//' || true)"
runtime_needed=""  # the highest NODE_MIN the machine's node does not meet

status=0
wanted=()   # "name pkg ver bin" of every CLI asked for
missing=()  # pkg@ver specs to install
for name in "${names[@]}"; do
  upper="$(printf '%s' "$name" | tr '[:lower:]' '[:upper:]')"
  pkg_var="${upper}_PACKAGE"; ver_var="${upper}_VERSION"; bin_var="${upper}_PROGRAM"
  pkg="${!pkg_var:-}"; ver="${!ver_var:-}"; bin="${!bin_var:-}"
  if $newest; then
    newest_var="${upper}_NEWEST"
    spec="${!newest_var:-}"
    [ -n "$spec" ] || continue
    pkg="${spec%@*}"; ver="${spec##*@}"
  fi
  if [ -z "$pkg" ] || [ -z "$ver" ] || [ -z "$bin" ]; then
    echo "install-clis: unknown CLI '$name' (not in scripts/cli-versions.env)" >&2
    status=1; continue
  fi
  wanted+=("$name $pkg $ver $bin")
  node_var="${upper}_NODE_MIN"; $newest && node_var="${upper}_NEWEST_NODE_MIN"
  node_min="${!node_var:-}"
  if [ -n "$node_min" ] && ! version_at_least "${system_node:-0}" "$node_min"; then
    if [ -z "$runtime_needed" ] || version_at_least "$node_min" "$runtime_needed"; then
      runtime_needed="$node_min"
    fi
  fi
  if [ "$(installed_version "$pkg")" != "$ver" ] || [ ! -x "$dir/node_modules/.bin/$bin" ]; then
    missing+=("$pkg@$ver")
  fi
done

# One npm call for everything missing, recorded in the cache's own package.json: separate calls
# without it would prune each other's packages.
if [ ${#missing[@]} -gt 0 ]; then
  [ -f "$dir/package.json" ] || printf '{ "name": "handoff-live-cache", "private": true }\n' > "$dir/package.json"
  echo "install-clis: installing ${missing[*]} into $dir" >&2
  if ! (cd "$dir" && npm install --save-exact --loglevel=error "${missing[@]}" >&2); then
    echo "install-clis: npm install failed" >&2
    status=1
  fi
fi

# The Node.js runtime, in a folder of its own (its own package.json: the CLIs' npm calls never
# prune it), when a CLI asked for a newer node than the machine's.
if [ -n "$runtime_needed" ]; then
  runtime_dir="$dir/node-runtimes/$NODE_RUNTIME_RELEASE"
  runtime_node="$runtime_dir/node_modules/$NODE_RUNTIME_NPM/bin/node"
  if ! version_at_least "$NODE_RUNTIME_RELEASE" "$runtime_needed"; then
    echo "install-clis: NODE_RUNTIME_RELEASE $NODE_RUNTIME_RELEASE is older than the $runtime_needed a CLI needs" >&2
    status=1
  elif [ ! -x "$runtime_node" ]; then
    mkdir -p "$runtime_dir"
    [ -f "$runtime_dir/package.json" ] || printf '{ "name": "handoff-node-runtime", "private": true }\n' > "$runtime_dir/package.json"
    echo "install-clis: the machine's node is ${system_node:-absent}, older than $runtime_needed: installing $NODE_RUNTIME_NPM@$NODE_RUNTIME_RELEASE into $runtime_dir" >&2
    if ! (cd "$runtime_dir" && npm install --save-exact --loglevel=error "$NODE_RUNTIME_NPM@$NODE_RUNTIME_RELEASE" >&2); then
      echo "install-clis: npm install of the Node.js runtime failed" >&2
      status=1
    fi
  fi
  if [ -x "$runtime_node" ]; then
    echo "node $("$runtime_node" --version | sed 's/^v//') $runtime_node"
  fi
fi

for entry in "${wanted[@]}"; do
  read -r name pkg ver bin <<<"$entry"
  have="$(installed_version "$pkg")"
  if [ "$have" != "$ver" ] || [ ! -x "$dir/node_modules/.bin/$bin" ]; then
    echo "install-clis: $pkg is '${have:-absent}' in $dir, expected $ver" >&2
    status=1; continue
  fi
  echo "$name $ver $dir/node_modules/.bin/$bin"
done
exit $status
