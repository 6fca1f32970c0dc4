#!/bin/bash
# regions_lists_every_region_it_can_prove_under_churn: a table of 100,000
# regions with files, line tables and unwind rules, of which 8 more move
# 1,000 times a second (tests/programs/table_churn.c). A whole read of the
# table cannot see it unchanged; `jitframes regions --json` reads each slot
# that changed during it again alone (slot, strings, slot again) and lists
# all 100,000 stable regions plus the moving ones it proved (each with its
# 4 lines and its unwind data), and says how many slots it could not prove.
# The old reader ran into its 10 s deadline and listed none of the 8.
# Usage: regions_under_churn.sh JITFRAMES TABLE_CHURN
set -u
jitframes=$1 churn=$2
. "$(dirname "$0")/../support/table_churn_start.sh"
start_churn 100000 8 1000

# One read at a time may lose a slot to bad luck (a change during each of
# its re-reads): up to 3 reads, one that proves at least half of the 8 wins.
for attempt in 1 2 3; do
  "$jitframes" regions "$pid" --json >"$tmp/r.json" 2>"$tmp/r.err" || die "regions failed: $(cat "$tmp/r.err")"
  python3 - "$tmp/r.json" <<'PY' && { echo PASS; exit 0; }
import json, sys
d = json.load(open(sys.argv[1]))
live = d["live"]
stable = {r["name"] for r in live if r["name"].startswith("stable_")}
moving = [r for r in live if r["name"].startswith("churn_")]
print("read: %d stable, %d moving listed; consistent %s, torn %s, reread %s, unproven %s" %
      (len(stable), len(moving), d["consistent"], d.get("torn"), d.get("reread"), d.get("unproven")))
assert stable == {"stable_%d" % i for i in range(100000)}, "stable regions missing"
assert all(len(r["lines"]) == 4 and r["unwind_bytes"] > 0 for r in moving), "a moving region lost its lines or unwind data"
assert len({r["name"].split("_")[1] for r in moving}) == len(moving), "a moving region listed twice"
assert "unproven" in d and "unproven_slots" in d and d["unproven"] == len(d["unproven_slots"])
assert len(moving) >= 4, "only %d of the 8 moving regions proven" % len(moving)
PY
done
die "no read proved the moving regions"
