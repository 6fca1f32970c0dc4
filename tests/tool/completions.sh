#!/usr/bin/env bash
# `jitframes completions bash|zsh|fish`: each script loaded into its own
# shell and asked, as a Tab would, to complete the same command lines: bash
# (complete -p, then the function with COMP_WORDS as readline splits them),
# zsh (an interactive zsh in a pty, zsh_complete.zsh), fish (complete -C).
# Every verb `jitframes --help` lists is offered after "jitframes ".
# Usage: completions.sh PATH/TO/jitframes
set -euo pipefail
tool=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
ln -s "$(realpath "$tool")" "$tmp/bin/jitframes"
export PATH=$tmp/bin:$PATH
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The command lines (one word per line, "" the empty word being typed) and
# the matches each wants; bash splits --format= at '=' as readline does.
cases=(
  "jitframes rec|record"
  "jitframes record --v|--via"
  "jitframes record --via |auto channel memory"
  "jitframes record --call-graph |dwarf fp"
  "jitframes check --format=|jitdump perfmap symfile"
  "jitframes check --j|--json"
  "jitframes completions |bash fish zsh"
  "jitframes help re|record regions"
  "jitframes -|--help --version -V"
)
verbs=$("$tool" --help | sed -n 's/^\(usage: \|       \)jitframes \([a-z]\+\).*/\2/p' | sort -u | tr '\n' ' ')
[ -n "$verbs" ] || fail "no verb in jitframes --help"
cases+=("jitframes |$verbs")

bash_complete() { # LINE: the matches bash's completion function offers
  bash -c '
    eval "$(jitframes completions bash)"
    line=$1
    read -ra COMP_WORDS <<<"${line//=/ = }"
    [[ $line == *" " ]] && COMP_WORDS+=("")
    [[ $line == *= ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _jitframes
    printf "%s\n" "${COMPREPLY[@]}"' _ "$1"
}
zsh_complete() {
  rm -f "$tmp/z" "$tmp/z.ready" "$tmp/z.done"
  timeout 150 zsh -f "$here/zsh_complete.zsh" "$tmp/z" "$1" >/dev/null 2>&1 || true
  cat "$tmp/z" 2>/dev/null
}
fish_complete() { fish -c 'jitframes completions fish | source; complete -C $argv[1]' "$1" | sed 's/^--format=//; s/\t.*//'; }

# Loaded, each shell knows the command's completion.
out=$(bash -c 'eval "$(jitframes completions bash)"; complete -p jitframes') &&
  [ "$out" = "complete -F _jitframes jitframes" ] || fail "bash: complete -p jitframes says '$out'"
out=$(zsh -f -c 'autoload -Uz compinit && compinit -u -D && source <(jitframes completions zsh) && print -r -- $_comps[jitframes]') &&
  [ "$out" = _jitframes ] || fail "zsh: _comps[jitframes] is '$out'"
out=$(fish -c 'jitframes completions fish | source; complete -c jitframes' | grep -c .) &&
  [ "$out" -gt 20 ] || fail "fish: $out completions for jitframes"

for shell in bash zsh fish; do
  for c in "${cases[@]}"; do
    line=${c%%|*} want=$(tr ' ' '\n' <<<"${c#*|}" | grep . | sort -u | tr '\n' ' ')
    # sed, not grep: no match must be reported, not end the script (pipefail).
    got=$("${shell}_complete" "$line" | sed '/^$/d' | sort -u | tr '\n' ' ')
    [ "$got" = "$want" ] && echo "ok: $shell: '$line' -> $got" || fail "$shell: '$line' offers '$got', want '$want'"
  done
done
# A process id: this shell's, after a verb taking one.
for shell in bash zsh fish; do
  "${shell}_complete" "jitframes status $$" | grep -qx "$$" && echo "ok: $shell: status completes pid $$" ||
    fail "$shell: 'jitframes status $$' does not offer the pid"
done
"$tool" completions tcsh >/dev/null 2>"$tmp/err" && fail "completions tcsh exited 0"
grep -q 'wants one SHELL: bash, zsh or fish' "$tmp/err" || fail "completions tcsh: $(cat "$tmp/err")"
[ "$failures" -eq 0 ] || { echo "$failures failures"; exit 1; }
echo PASS
