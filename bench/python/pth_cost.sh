#!/usr/bin/env bash
# What jitframes costs every interpreter start in a venv when no JITFRAMES
# variable is set: callgrind's instruction count of `python -c pass` in a
# fresh venv, for each interpreter the build made a package for
# (BUILD_DIR/bindings/python/interpreters.txt), with
#   no .pth          the venv alone (the baseline of every ratio)
#   2 empty dirs     two empty directories named as the wheel's: what any
#                    installed package costs (site lists site-packages, and
#                    os.listdir drops and takes the GIL for every entry)
#   default install  the package in its site-packages, as the wheel installs
#                    it (the package and its dist-info): no .pth file; its
#                    ratio to "2 empty dirs" is what jitframes itself costs
#                    (must be +0.00%)
#   a comment .pth   what site pays to read any .pth file (on 3.13 it decodes
#                    it as utf-8-sig, which imports that codec)
#   0.2.0 hook       the jitframes.pth the wheel installed until 0.2.0
#   opt-in hook      after `python -m jitframes --install-hook`
# Deterministic (PYTHONHASHSEED=0, one run per variant).
# --variants: instead, the cost of each candidate hook line (VARIANTS below),
# the last is the one installed (jitframes/_hook.py): site compiles the line at every start,
# and the compiler's cost grows with every name and operator in it.
#   bench/python/pth_cost.sh [--variants] [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
variants=0
[ "${1:-}" = --variants ] && { variants=1; shift; }
build=${1:-$root/build}
list=$build/bindings/python/interpreters.txt
command -v valgrind >/dev/null || { echo "pth_cost: valgrind is not installed" >&2; exit 1; }
[ -s "$list" ] || { echo "pth_cost: no $list (build the Python packages first: cmake --build $build)" >&2; exit 1; }
OLD_LINE="import os, sys; ('JITFRAMES' in os.environ or 'JITFRAMES_CONTROL' in os.environ) and not sys.flags.ignore_environment and __import__('jitframes')._activate_from_environment()"
VARIANTS=(
  "import os"
  "import os;'JITFRAMES'in os.environ"
  "import os;('JITFRAMES'in os.environ or'JITFRAMES_CONTROL'in os.environ)and not __import__('sys').flags.ignore_environment and __import__('jitframes._startup')"
  "import os;('JITFRAMES'in os.environ or'JITFRAMES_CONTROL'in os.environ)and __import__('jitframes')._activate_from_environment()"
  "import os;{'JITFRAMES','JITFRAMES_CONTROL'}.isdisjoint(os.environ)or __import__('jitframes._startup')"
  "import os;('JITFRAMES'in os.environ or'JITFRAMES_CONTROL'in os.environ)and __import__('jitframes._startup')"
  "import os;os.environ.keys().isdisjoint(('JITFRAMES','JITFRAMES_CONTROL'))or __import__('jitframes._startup')"
  "import os;'JITFRAMES'not in os.environ and'JITFRAMES_CONTROL'not in os.environ or __import__('jitframes._startup')"
)
dist_info=jitframes-$(sed -n "s/^project('jitframes', version: '\([^']*\)'.*/\1/p" "$root/bindings/python/meson.build").dist-info
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
env_clean=(env -u JITFRAMES -u JITFRAMES_CONTROL -u PYTHONPATH PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1)
ir() { "${env_clean[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 |
         sed -n 's/.*Collected : //p'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.2f%%", (a / b - 1) * 100 }'; }
if [ $variants = 0 ]; then
  printf "%-50s %10s %11s %16s %15s %15s %12s %12s\n" python "no .pth" "2 empty dirs" "default install" \
    "(to empty dirs)" "a comment .pth" "0.2.0 hook" "opt-in hook"
fi
while read -r _ py pkg; do
  rm -rf "$work/venv"
  "$py" -m venv --without-pip "$work/venv"
  vpy=$work/venv/bin/python
  site=$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
  base=$(ir "$vpy" -c pass)
  name="$py ($("$py" -c 'import platform; print(platform.python_version())'))"
  if [ $variants = 1 ]; then
    echo "$name: no .pth $base"
    for line in "${VARIANTS[@]}"; do
      printf '%s\n' "$line" >"$site/jitframes.pth"
      printf "  %8s  %s\n" "$(ratio "$(ir "$vpy" -c pass)" "$base")" "$line"
    done
    continue
  fi
  mkdir "$site/jitframes" "$site/$dist_info"
  empty=$(ir "$vpy" -c pass)
  rmdir "$site/jitframes"
  cp -r "$pkg/jitframes" "$site/"
  for f in INSTALLER LICENSE METADATA RECORD WHEEL; do echo "$f" >"$site/$dist_info/$f"; done
  default=$(ir "$vpy" -c pass)
  echo "# a comment" >"$site/jitframes.pth"
  floor=$(ir "$vpy" -c pass)
  echo "$OLD_LINE" >"$site/jitframes.pth"
  old=$(ir "$vpy" -c pass)
  rm "$site/jitframes.pth"
  "${env_clean[@]}" "$vpy" -m jitframes --install-hook >/dev/null
  hook=$(ir "$vpy" -c pass)
  printf "%-50s %10d %11s %16s %15s %15s %12s %12s\n" "$name" "$base" "$(ratio "$empty" "$base")" \
    "$(ratio "$default" "$base")" "$(ratio "$default" "$empty")" "$(ratio "$floor" "$base")" \
    "$(ratio "$old" "$base")" "$(ratio "$hook" "$base")"
done <"$list"
