#!/bin/bash
# follow_keeps_unwind_data_of_regions_seen_only_in_the_ring: `jitframes
# perfmap PID --jitdump F --follow` (what `record --via memory` runs) on
# regions that live less than one 25 ms read period (8 moving 20,000 times a
# second, 512 bytes apart so that each one's unwind data fits before the
# next): every region it keeps, those only the removed ring showed
# included, has its CODE_UNWINDING_INFO in the jitdump (`jitframes check`
# counts them). The old follower wrote none for ring-only regions (238 of
# 2,460 loads with unwind info, 2,222 ring-only).
# Usage: follow_ring_unwind.sh JITFRAMES TABLE_CHURN
set -u
jitframes=$1 churn=$2
. "$(dirname "$0")/../support/table_churn_start.sh"
start_churn 16 8 20000 512

# Follow for about a second (the counts below need only a few reads).
sleep 1 | "$jitframes" perfmap "$pid" --jitdump "$tmp/f.dump" --follow -o "$tmp/f.map" 2>"$tmp/follow.err" ||
  die "follow failed: $(cat "$tmp/follow.err")"
cat "$tmp/follow.err"
ring_only=$(sed -n 's/.* regions kept (\([0-9]*\) removed before a read saw them.*/\1/p' "$tmp/follow.err")
[ -n "$ring_only" ] && [ "$ring_only" -ge 50 ] || die "only ${ring_only:-?} ring-only regions: the test proves nothing"
"$jitframes" check "$tmp/f.dump" >"$tmp/check.out" 2>&1 || die "check: $(cat "$tmp/check.out")"
cat "$tmp/check.out"
loads=$(sed -n 's/.*(\([0-9]*\) loads, \([0-9]*\) with unwind info.*/\1/p' "$tmp/check.out")
unwind=$(sed -n 's/.*(\([0-9]*\) loads, \([0-9]*\) with unwind info.*/\2/p' "$tmp/check.out")
[ -n "$loads" ] && [ "$loads" -gt 0 ] && [ "$loads" = "$unwind" ] ||
  die "$unwind of $loads loads have unwind info ($ring_only ring-only)"
echo PASS
