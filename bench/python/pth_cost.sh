#!/usr/bin/env bash
# What the wheel's start-up hook (bindings/python/jitframes.pth) costs every
# interpreter start in a venv when no JITFRAMES variable is set: callgrind's
# instruction count of `python -c pass` in a fresh venv, without the .pth,
# with a comment-only .pth (what site pays for any .pth file: on 3.13 it
# decodes it as utf-8-sig, which imports that codec), with the hook as it was
# (OLD_LINE below) and with the hook of this tree; ratios to the venv without.
# Deterministic (PYTHONHASHSEED=0, one run per variant).
#   bench/python/pth_cost.sh [PYTHON...]   (default: /usr/bin/python3 and pyenv's 3.11-3.13)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v valgrind >/dev/null || { echo "pth_cost: valgrind is not installed" >&2; exit 1; }
OLD_LINE="import os; (os.environ.get('JITFRAMES') or os.environ.get('JITFRAMES_CONTROL', '0') not in ('', '0')) and __import__('jitframes')._activate_from_environment()"
pythons=("$@")
if [ ${#pythons[@]} -eq 0 ]; then
  pythons=(/usr/bin/python3)
  pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
  for p in "$pyenv_root"/versions/3.1[123].*/bin/python3; do [ -x "$p" ] && pythons+=("$p"); done
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
env_clean=(env -u JITFRAMES -u JITFRAMES_CONTROL PYTHONHASHSEED=0)
ir() { "${env_clean[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 |
         sed -n 's/.*Collected : //p'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.2f%%", (a / b - 1) * 100 }'; }
printf "%-34s %12s %22s %22s %22s\n" python "no .pth" "comment-only .pth" "old hook" "this hook"
for py in "${pythons[@]}"; do
  rm -rf "$work/venv"
  "$py" -m venv --without-pip "$work/venv"
  site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  base=$(ir "$work/venv/bin/python" -c pass)
  echo "# a comment" >"$site/jitframes.pth"
  floor=$(ir "$work/venv/bin/python" -c pass)
  echo "$OLD_LINE" >"$site/jitframes.pth"
  old=$(ir "$work/venv/bin/python" -c pass)
  cp "$root/bindings/python/jitframes.pth" "$site/jitframes.pth"
  new=$(ir "$work/venv/bin/python" -c pass)
  printf "%-34s %12d %12d %9s %12d %9s %12d %9s\n" "$py ($("$py" -c 'import platform; print(platform.python_version())'))" \
    "$base" "$floor" "$(ratio "$floor" "$base")" "$old" "$(ratio "$old" "$base")" "$new" "$(ratio "$new" "$base")"
done
