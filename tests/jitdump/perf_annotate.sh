#!/usr/bin/env bash
# `perf annotate` of an injected region disassembles its real instructions
# (the nonce after the code must not disturb them).
. "$(dirname "$0")/perf_lib.sh"

record annotate -- --workload frameless --seconds 0.4
perf annotate -i "$DIR/perf.jit.data" --stdio -s mj_frameless 2>/dev/null >"$DIR/annotate.txt" ||
  fail "perf annotate failed"
# The instructions minijit emitted for mj_frameless, in order.
want=('sub +\$0x28,%rsp' 'mov +%rdi,%rcx' 'mov +%rcx,\(%rsp\)' 'dec +%rcx' 'jne '
      'mov +\(%rsp\),%rax' 'add +\$0x28,%rsp' 'ret')
grep -E ':\s+[0-9a-f]+:\s' "$DIR/annotate.txt" | sed -n "1,${#want[@]}p" >"$DIR/insns.txt"
cat "$DIR/insns.txt"
i=1
for re in "${want[@]}"; do
  sed -n "${i}p" "$DIR/insns.txt" | grep -Eq ":\s+[0-9a-f]+:\s+$re" ||
    fail "instruction $i is not /$re/"
  i=$((i + 1))
done
echo "ok"
