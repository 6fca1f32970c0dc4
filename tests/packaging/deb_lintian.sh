#!/usr/bin/env bash
# The Debian packages pass Debian's policy checker: `lintian -I -E
# --pedantic` on the three packages cpack made reports no error (E:) and no
# warning (W:); the overrides they carry (O:) are printed with their reasons.
# Usage: deb_lintian.sh DEBS_DIR
set -euo pipefail
debs=$1
command -v lintian >/dev/null || { echo "FAIL: lintian is not installed (scripts/deps test installs it)"; exit 1; }
mapfile -t packages < <(ls "$debs"/libjitframes[0-9]*_*.deb "$debs"/libjitframes-dev_*.deb "$debs"/jitframes-tools_*.deb)
[ ${#packages[@]} -eq 3 ] || { echo "FAIL: want 3 packages in $debs, found: ${packages[*]}"; exit 1; }
out=$(lintian -I -E --pedantic --show-overrides "${packages[@]}" 2>&1 | grep -v '^running with root privileges' || true)
echo "$out"
bad=$(grep -cE '^[EW]: ' <<<"$out" || true)
[ "$bad" -eq 0 ] || { echo "FAIL: lintian: $bad errors and warnings"; exit 1; }
echo "ok: lintian -I -E --pedantic: 0 errors, 0 warnings on ${packages[*]##*/}"
echo PASS
