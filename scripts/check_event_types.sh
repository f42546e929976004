#!/usr/bin/env bash
# Fails when the list of event types (src/engine/event_types.cpp, what the live feed's
# `types=` filter accepts) and the types the sources emit disagree: a type emitted but not
# listed would be refused by the filter, a type listed but never emitted would be
# accepted and match nothing.
#
#   scripts/check_event_types.sh [SRC_ROOT]   check SRC_ROOT (default: src/)
#   scripts/check_event_types.sh --self-test  show that both kinds of mismatch fail
set -euo pipefail

families='execution|step|signal|breaker|vars'

check() {
  local root="$1" list emitted
  list="$root/engine/event_types.cpp"
  [ -f "$list" ] || { echo "$list: missing"; return 1; }
  # The list: the quoted types inside the kEventTypes initializer.
  listed="$(sed -n '/kEventTypes = {/,/};/p' "$list" | grep -oE "\"($families)\.[a-z_]+\"" |
            tr -d '"' | sort -u)"
  # Emitted (or compared against): every such literal in the sources, tests aside.
  emitted="$(grep -rhoE --include='*.cpp' --include='*.h' --exclude='*_test.cpp' \
               --exclude='event_types.cpp' "\"($families)\.[a-z_]+\"" "$root" | tr -d '"' |
             sort -u)"
  [ -n "$listed" ] || { echo "$list: found no event types in kEventTypes"; return 1; }
  [ -n "$emitted" ] || { echo "$root: found no event types in the sources"; return 1; }
  local failures=0 t
  for t in $(comm -23 <(echo "$emitted") <(echo "$listed")); do
    echo "event type '$t' appears in the sources but not in $list"
    failures=$((failures + 1))
  done
  for t in $(comm -13 <(echo "$emitted") <(echo "$listed")); do
    echo "event type '$t' is listed in $list but appears nowhere else"
    failures=$((failures + 1))
  done
  [ "$failures" -eq 0 ] || return 1
  echo "event types: $(echo "$listed" | wc -l) listed, all emitted, none missing"
}

self_test() {
  local tmp
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  mkdir -p "$tmp/engine"
  printf 'constexpr std::array<std::string_view, 2> kEventTypes = {\n  "step.ready", "step.started",\n};\n' \
    > "$tmp/engine/event_types.cpp"
  printf 'Emit(x, "step.ready"); Emit(x, "step.started");\n' > "$tmp/engine/a.cpp"
  check "$tmp" > /dev/null || { echo "self-test: a matching tree failed"; return 1; }
  printf 'Emit(x, "step.ready"); Emit(x, "step.started"); Emit(x, "step.new");\n' \
    > "$tmp/engine/a.cpp"
  if check "$tmp" > /dev/null; then echo "self-test: an unlisted type passed"; return 1; fi
  printf 'Emit(x, "step.ready");\n' > "$tmp/engine/a.cpp"
  if check "$tmp" > /dev/null; then echo "self-test: a type never emitted passed"; return 1; fi
  echo "self-test: both kinds of mismatch fail"
}

if [ "${1:-}" = "--self-test" ]; then
  self_test
else
  check "${1:-$(dirname "$0")/../src}"
fi
