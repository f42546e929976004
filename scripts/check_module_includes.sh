#!/usr/bin/env bash
# Fails when an #include crosses the module graph (DESIGN.md §2): a module may include
# its own headers, the public headers in include/baton/ that belong to modules below it,
# and the headers of the modules it depends on; nothing above it. Test code (*_test.cpp,
# *_test_util.h) may also include the shared test support in tests/support/.
#
#   scripts/check_module_includes.sh [SRC_ROOT]   check SRC_ROOT (default: src/)
#   scripts/check_module_includes.sh --self-test  show that a forbidden include fails
set -euo pipefail

# What each module may include, itself included. Keep in step with the baton_module()
# lines in CMakeLists.txt: the build links the same graph. A module is a folder of src/;
# the store's backends are modules nested in it (src/store/memory is store_memory).
declare -A allowed=(
  [common]="common"
  [expr]="expr common"
  [model]="model expr common"
  [store]="store common"
  [store_memory]="store_memory store common"
  [store_sqlite]="store_sqlite store common"
  [store_postgres]="store_postgres store common"
  [runners]="runners model expr common"
  [protocol]="protocol common"
  [client]="client common"
  [worker]="worker protocol runners client model expr common"
  [engine]="engine store runners model expr common"
  [workers]="workers engine store runners protocol model expr common"
  [server]="server store_sqlite store_postgres workers engine store runners protocol model expr common"
  [cli]="cli server workers worker client engine store_memory store_sqlite store_postgres store runners protocol model expr common"
)
# What a module's test code (*_test.cpp, *_test_util.h) may include besides: the store's
# conformance suite runs over every backend, and tests run engines on the memory store.
declare -A test_allowed=(
  [store]="store_memory store_sqlite store_postgres"
  [engine]="store_memory"
  [workers]="store_memory"
  [server]="store_memory"
  [cli]="store_memory"
)
# The nested module folders: src/store/memory holds module store_memory.
nested_modules="store/memory store/sqlite store/postgres"
# The module each public header belongs to.
declare -A public_owner=(
  [clock.h]=common [event_loop.h]=common [json.h]=common [status.h]=common
  [workflow.h]=model [plan.h]=model [store.h]=store [commit_queue.h]=store [runner.h]=runners
  [memory_store.h]=store_memory [sqlite_store.h]=store_sqlite [postgres_store.h]=store_postgres
  [engine.h]=engine [event_types.h]=engine
)

# The module a path below src/ ("store/sqlite/rows.h") belongs to.
module_of() {
  local rel="$1" nested
  for nested in $nested_modules; do
    [[ "$rel" == "$nested/"* ]] && { echo "${nested//\//_}"; return; }
  done
  echo "${rel%%/*}"
}

check() {
  local root="$1" failures=0 file module rel line target owner
  while IFS= read -r file; do
    rel="${file#"$root"/}"
    module="$(module_of "$rel")"
    if [ -z "${allowed[$module]+x}" ]; then
      echo "$file: module '$module' is not in the graph (add it to $0 and CMakeLists.txt)"
      failures=$((failures + 1))
      continue
    fi
    while IFS= read -r line; do
      if [[ "$line" =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"(([a-z_]+)/[a-z_/]*[a-z_.]+)\" ]]; then
        target="$(module_of "${BASH_REMATCH[1]}")"
        if [ "$target" = support ]; then
          [[ "$file" == *_test.cpp || "$file" == *_test_util.h ]] && continue
          echo "$file: includes test support (tests/support/) outside test code: $line"
          failures=$((failures + 1))
          continue
        fi
      elif [[ "$line" =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\<baton/([a-z_]+\.h)\> ]]; then
        owner="${public_owner[${BASH_REMATCH[1]}]:-}"
        if [ -z "$owner" ]; then
          echo "$file: public header <baton/${BASH_REMATCH[1]}> has no owning module in $0"
          failures=$((failures + 1))
          continue
        fi
        target="$owner"
      else
        continue
      fi
      local may="${allowed[$module]}"
      [[ "$file" == *_test.cpp || "$file" == *_test_util.h ]] && may="$may ${test_allowed[$module]:-}"
      if [[ " $may " != *" $target "* ]]; then
        echo "$file: module '$module' may not include '$target' (${line#"${line%%[![:space:]]*}"})"
        failures=$((failures + 1))
      fi
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include' "$file")
  done < <(find "$root" -type f \( -name '*.h' -o -name '*.cpp' \) | sort)
  if [ "$failures" -gt 0 ]; then
    echo "check_module_includes: $failures include(s) cross the module graph"
    return 1
  fi
  echo "check_module_includes: every include in $root follows the module graph"
}

if [ "${1:-}" = "--self-test" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/model" "$tmp/engine"
  printf '#include "model/a.h"\n#include <baton/json.h>\n' >"$tmp/model/ok.cpp"
  printf '#include "engine/engine_impl.h"\n' >"$tmp/engine/ok.cpp"
  check "$tmp" >/dev/null || { echo "self-test: a valid tree was refused"; exit 1; }
  printf '#include "engine/engine_impl.h"\n' >"$tmp/model/upward.cpp"
  if check "$tmp" >/dev/null; then
    echo "self-test: model including engine was accepted"
    exit 1
  fi
  rm "$tmp/model/upward.cpp"
  printf '#include <baton/engine.h>\n' >"$tmp/model/upward.h"
  if check "$tmp" >/dev/null; then
    echo "self-test: model including <baton/engine.h> was accepted"
    exit 1
  fi
  rm "$tmp/model/upward.h"
  # A backend is not part of the store module: the engine may not reach into it.
  mkdir -p "$tmp/store/sqlite"
  printf '#include "store/sqlite/rows.h"\n' >"$tmp/store/sqlite/ok.cpp"
  check "$tmp" >/dev/null || { echo "self-test: a backend including itself was refused"; exit 1; }
  printf '#include "store/sqlite/rows.h"\n' >"$tmp/engine/backend.cpp"
  if check "$tmp" >/dev/null; then
    echo "self-test: engine including the SQLite backend was accepted"
    exit 1
  fi
  echo "self-test: forbidden includes are refused"
  exit 0
fi

check "${1:-$(cd "$(dirname "$0")/.." && pwd)/src}"
