#!/usr/bin/env bash
# `make install DESTDIR=...` produces a tree that runs: the binary, its man page, the bash
# and zsh completions, the systemd units (checked by systemd-analyze where it exists), the
# docs. Usage: install_test.sh BUILD_DIR
set -euo pipefail
build=$1
root=$(mktemp -d /tmp/baton-install.XXXXXX)
trap 'rm -rf "$root"' EXIT
fail() { echo "install test: $*" >&2; exit 1; }

DESTDIR="$root" cmake --install "$build" --prefix /usr > "$root/install.log" \
  || fail "cmake --install failed: $(cat "$root/install.log")"
bin="$root/usr/bin/baton"
[ -x "$bin" ] || fail "no executable $bin"
"$bin" --version | grep -q '^baton [0-9]' || fail "--version: $("$bin" --version)"

# It runs a workflow, and validates the installed examples.
cat > "$root/hello.yaml" <<'YAML'
name: hello
steps:
  - {id: greet, type: shell, run: [echo, hello]}
output: {said: "{{ steps.greet.output }}"}
YAML
out=$("$bin" run "$root/hello.yaml" --ephemeral --quiet --json) || fail "run failed: $out"
grep -q '"said": "hello"' <<<"$out" || fail "run output: $out"
for example in "$root"/usr/share/doc/baton/examples/*.yaml; do
  "$bin" validate "$example" > /dev/null || fail "installed example $example does not validate"
done
[ -f "$root/usr/share/doc/baton/README.md" ] || fail "no README in the docs"
[ -f "$root/usr/share/doc/baton/docs/workflow-format.md" ] || fail "no workflow-format.md"

# The man page.
man_page="$root/usr/share/man/man1/baton.1"
[ -f "$man_page" ] || fail "no man page $man_page"
grep -q '^\.TH BATON "1"' "$man_page" || fail "man page without a .TH BATON header"
grep -q '^\.SH "SEE ALSO"' "$man_page" || fail "man page without SEE ALSO"

# bash completion: loads, completes commands, subcommands and options.
completion="$root/usr/share/bash-completion/completions/baton"
[ -f "$completion" ] || fail "no bash completion"
complete_words() {
  bash -c 'source "$0"; COMP_WORDS=("${@}"); COMP_CWORD=$(($# - 1)); _baton; printf "%s\n" "${COMPREPLY[@]}" | sort | xargs' \
    "$completion" "$@"
}
[ "$(complete_words baton wor)" = "worker workers workflow" ] \
  || fail "baton wor<TAB>: $(complete_words baton wor)"
[ "$(complete_words baton workflow cr)" = "create" ] \
  || fail "baton workflow cr<TAB>: $(complete_words baton workflow cr)"
complete_words baton run --para | grep -qw -- --parallel \
  || fail "baton run --para<TAB>: $(complete_words baton run --para)"

# zsh completion.
zsh_file="$root/usr/share/zsh/site-functions/_baton"
head -1 "$zsh_file" | grep -q '^#compdef baton' || fail "zsh completion without #compdef"
if command -v zsh > /dev/null; then zsh -n "$zsh_file" || fail "zsh completion does not parse"; fi

# The systemd units name the installed binary, and systemd accepts every line of them.
units="$root/usr/lib/systemd/system"
grep -q '^ExecStart=/usr/bin/baton server ' "$units/baton-server.service" \
  || fail "baton-server.service: $(grep ExecStart "$units/baton-server.service")"
grep -q '^ExecStart=/usr/bin/baton worker ' "$units/baton-worker@.service" \
  || fail "baton-worker@.service: $(grep ExecStart "$units/baton-worker@.service")"
if command -v systemd-analyze > /dev/null; then
  check="$root/units"
  mkdir -p "$check"
  # A unit systemd refuses parts of: the check below must see it, or it proves nothing.
  printf '[Service]\nExecStart=/bin/true\nProtectSystem=sometimes\n' > "$check/broken.service"
  [ -n "$(cd "$check" && systemd-analyze verify --man=no "$check/broken.service" 2>&1)" ] \
    || fail "systemd-analyze did not complain about a broken unit"
  for unit in baton-server.service baton-worker@.service; do
    sed "s|/usr/bin/baton|$bin|" "$units/$unit" > "$check/$unit"
  done
  for unit in baton-server.service baton-worker@gpu-1.service; do
    said=$(cd "$check" && systemd-analyze verify --man=no "$check/$unit" 2>&1) || true
    [ -z "$said" ] || fail "systemd-analyze verify $unit: $said"
  done
fi
echo "install test: ok ($(find "$root/usr" -type f | wc -l) files)"
