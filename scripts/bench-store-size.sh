#!/usr/bin/env bash
# What a crowded store costs `handoff continue`: the same append into a Codex store root that is
# empty but for our session, and into one that also holds N other rollouts (default 10,000).
# Measures whole commands with hyperfine, so it can compare two handoff binaries built from
# different commits (docs/continuation.md keeps the figures).
#
# usage: scripts/bench-store-size.sh HANDOFF_BINARY [N]
set -euo pipefail
handoff="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
others="${2:-10000}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sample="$repo/examples/sessions/claude-code/4f6c2a8e-1b7d-4c3a-9e55-2d0f8a6b7c11.jsonl"
command -v hyperfine >/dev/null || { echo "bench-store-size: needs hyperfine (apt-get install hyperfine)" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf 'certificate_dir = "%s/certificates"\n' "$work" > "$work/config.toml"
# The source grows by its last two records between the prefix and the whole conversation.
head -n 9 "$sample" > "$work/prefix.jsonl"
cp "$sample" "$work/whole.jsonl"

run() { "$handoff" --config "$work/config.toml" continue --locator bench --to codex "$@" >/dev/null; }

for store in empty crowded; do
  root="$work/$store"
  mkdir -p "$root"
  run --from "claude-code:$work/prefix.jsonl" --store-root "$root"
  ours="$(find "$root/sessions" -name 'rollout-*.jsonl')"
  cp "$ours" "$work/$store.prefix"
  echo "$ours" > "$work/$store.path"
done

# N copies of another rollout, each under its own id, as a user's long history would be.
python3 - "$work/crowded" "$(cat "$work/crowded.path")" "$others" <<'PY'
import os, sys, uuid, re
root, ours, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = open(ours).read()
old = re.search(r'rollout-.*?-([0-9a-f-]{36})\.jsonl$', ours).group(1)
# Foreign copies: no ownership marker, so the engine never takes them for ours.
text = re.sub(r',?"x-handoff":\{[^{}]*\}', '', text)
day = os.path.join(root, "sessions", "2025", "01", "01")
os.makedirs(day, exist_ok=True)
for i in range(n):
    new = str(uuid.uuid4())
    with open(os.path.join(day, f"rollout-2025-01-01T00-00-00-{new}.jsonl"), "w") as f:
        f.write(text.replace(old, new))
PY

hyperfine --warmup 2 --runs 15 --export-json "$work/result.json" \
  --prepare "cp $work/empty.prefix $(cat "$work/empty.path")" \
  -n empty "$handoff --config $work/config.toml continue --locator bench --to codex --from claude-code:$work/whole.jsonl --store-root $work/empty" \
  --prepare "cp $work/crowded.prefix $(cat "$work/crowded.path")" \
  -n "crowded ($others others)" "$handoff --config $work/config.toml continue --locator bench --to codex --from claude-code:$work/whole.jsonl --store-root $work/crowded"
python3 - "$work/result.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
(e, c) = list(r.values())
print(f"append into a crowded store: {c['median']*1000:.1f} ms median vs {e['median']*1000:.1f} ms empty "
      f"(+{(c['median']-e['median'])*1000:.1f} ms per call, {c['median']/e['median']:.2f}x)")
PY
