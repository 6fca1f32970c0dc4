#!/usr/bin/env bash
# The jitframes command line: exit codes, "FILE:LINE: message" on stderr,
# summary and dump output.
# Usage: cli_test.sh PATH/TO/jitframes PATH/TO/make_sample_dumps SYMFILE
# (SYMFILE: a valid GDB JIT symfile written by the library)
set -u
tool=$1
make_dumps=$2
symfile=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/jf-cli.XXXXXX")
trap 'rm -rf "$dir"' EXIT
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect NAME EXPECTED_RC EXPECTED_STDOUT_SUBSTRING EXPECTED_STDERR_LINE -- ARGS...
expect() {
  local name=$1 want_rc=$2 want_out=$3 want_err=$4
  shift 5
  "$tool" "$@" >"$dir/out" 2>"$dir/err"
  local rc=$?
  [ "$rc" -eq "$want_rc" ] || fail "$name: exit $rc, want $want_rc ($(cat "$dir/err"))"
  if [ -n "$want_out" ] && ! grep -qF -- "$want_out" "$dir/out"; then
    fail "$name: stdout lacks '$want_out': $(cat "$dir/out")"
  fi
  if [ -n "$want_err" ] && [ "$(cat "$dir/err")" != "$want_err" ]; then
    fail "$name: stderr is '$(cat "$dir/err")', want '$want_err'"
  fi
}

printf '7f0000001000 40 foo\n7f0000002000 10 bar baz\n' >"$dir/good.map"
printf '1000 10 a\n2000 10 b\n3000 10 C\t\n' >"$dir/tab.map"
printf '1000 10 a\n1008 10 b\n' >"$dir/overlap.map"
printf '1000 10 a' >"$dir/nonl.map"
: >"$dir/empty.map"
printf '1000 10 a\n##00 10 b###\n\n\n\n' >"$dir/padded.map"

expect good-check 0 "good.map: valid perf map: 2 entries covering 7f0000001000-7f0000002010" "" \
  -- check "$dir/good.map"
expect good-dump 0 "00007f0000002000-00007f0000002010        16  bar baz" "" -- dump "$dir/good.map"
expect empty-check 0 "valid perf map: 0 entries" "" -- check "$dir/empty.map"
expect padded-check 0 "padded.map: valid perf map: 1 entries covering 1000-1010, 3 bytes of unused space (blank lines), 1 unpublished line (its writer was killed; readers skip it)" "" \
  -- check "$dir/padded.map"
expect tab-check 1 "" "$dir/tab.map:3: control character 0x09 in name at byte 1" -- check "$dir/tab.map"
expect tab-dump 1 "0000000000002000-0000000000002010" "$dir/tab.map:3: control character 0x09 in name at byte 1" \
  -- dump "$dir/tab.map"
expect overlap-check 1 "" \
  "$dir/overlap.map:2: region 1008-1018 overlaps line 1 (1000-1010); readers disagree on which name wins" \
  -- check "$dir/overlap.map"
expect nonl-check 1 "" "$dir/nonl.map:1: last line has no trailing newline (perf cuts its last character)" \
  -- check "$dir/nonl.map"
expect missing-file 2 "" "$dir/none.map: No such file or directory" -- check "$dir/none.map"
expect no-args 2 "" "" --
expect bad-command 2 "" "" -- verify "$dir/good.map"

# jitdumps (crafted by the test-only writer)
"$make_dumps" "$dir" || fail "make_sample_dumps failed"
expect dump-check 0 \
  "good.dump: valid jitdump: 4 records (1 loads, 1 with unwind info, 1 with line info, 0 moves, 1 closes)" "" \
  -- check "$dir/good.dump"
expect dump-dump 0 "[0x4, 0x40)  cfa=rbp+16  rbp=[cfa-16]  rip=[cfa-8]" "" -- dump "$dir/good.dump"
expect dump-bad 1 "" \
  "$dir/bad.dump:0xb3: mapped_size is 0 (perf then maps only the code and call chains come out wrong)" \
  -- check "$dir/bad.dump"
expect dump-bad-dump 1 "code_index 0 name \"sample_fn\"" \
  "$dir/bad.dump:0xb3: mapped_size is 0 (perf then maps only the code and call chains come out wrong)" \
  -- dump "$dir/bad.dump"
printf 'DTiJ' >"$dir/short.dump"
expect dump-short 1 "" "$dir/short.dump:0x0: file too short for a jitdump header (4 bytes, need 40)" \
  -- check "$dir/short.dump"

# The jitdump header's machine by name: EM_PPC64 (21, ppc64le dumps) and
# EM_S390 (22, s390x dumps) as perf's headers name them.
for m in 21:ppc64 22:s390 62:x86_64; do
  cp "$dir/good.dump" "$dir/mach.dump"
  printf "\\$(printf %03o "${m%%:*}")" | dd of="$dir/mach.dump" bs=1 seek=12 conv=notrunc status=none
  expect "dump-elf-mach-${m#*:}" 0 "elf_mach ${m%%:*} (${m#*:})," "" -- dump "$dir/mach.dump"
done

# GDB JIT symfiles
expect elf-check 0 "valid symfile: 5 sections, 1 functions, 2 FDEs" "" -- check "$symfile"
expect elf-dump 0 "symbol    1 " "" -- dump "$symfile"
cp "$symfile" "$dir/class32.o"
printf '\001' | dd of="$dir/class32.o" bs=1 seek=4 conv=notrunc status=none
expect elf-class32 1 "" "$dir/class32.o:0x4: ELF class 1: only 64-bit symfiles are supported" \
  -- check "$dir/class32.o"

# The command line (issue "user's side") and hostile input (issue "Hardening")
expect help 0 "usage: jitframes" "" -- --help
expect help-short 0 "Exit status: 0 every file valid" "" -- -h
expect version 0 "jitframes 0." "" -- --version
expect unknown-option 2 "" "" -- --frobnicate check "$dir/good.map"
expect unknown-format 2 "" "" -- --format=elf check "$dir/good.map"
expect several-files 1 "good.map: valid perf map: 2 entries" \
  "$dir/overlap.map:2: region 1008-1018 overlaps line 1 (1000-1010); readers disagree on which name wins" \
  -- check "$dir/good.map" "$dir/overlap.map"
expect worst-status-wins 2 "good.map: valid perf map" "$dir/none.map: No such file or directory" \
  -- check "$dir/good.map" "$dir/none.map"
"$tool" check - <"$dir/good.map" >"$dir/out" 2>&1 && grep -qF -- "-: valid perf map: 2 entries" "$dir/out" ||
  fail "stdin: $(cat "$dir/out")"
expect overlap-dump 1 "0000000000001008-0000000000001018" \
  "$dir/overlap.map:2: region 1008-1018 overlaps line 1 (1000-1010); readers disagree on which name wins" \
  -- dump "$dir/overlap.map"
expect dev-zero 2 "" "/dev/zero: a device or socket, not a regular file: refused" -- check /dev/zero
expect dev-urandom 2 "" "/dev/urandom: a device or socket, not a regular file: refused" -- dump /dev/urandom
mkfifo "$dir/fifo"
timeout 10 "$tool" check "$dir/fifo" >"$dir/out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -qF "a FIFO, not a regular file: refused" "$dir/out" ||
  fail "FIFO without a writer: exit $rc (124: it blocked), $(cat "$dir/out")"
expect directory 2 "" "$dir: a directory, not a regular file: refused" -- check "$dir"
: >"$dir/jit-123.dump"
expect empty-jitdump-by-name 1 "" "$dir/jit-123.dump:0x0: file too short for a jitdump header (0 bytes, need 40)" \
  -- check "$dir/jit-123.dump"
expect forced-format 1 "" "$dir/good.map:0x0: not a jitdump (bad magic)" \
  -- --format=jitdump check "$dir/good.map"
cp "$symfile" "$dir/jitted-123-1.so"
expect jitted-so-refused 2 "" \
  "$dir/jitted-123-1.so: perf inject's jitted-*.so is an ELF shared object, not a GDB JIT symfile: not checked (--format=symfile applies the symfile rules)" \
  -- check "$dir/jitted-123-1.so"
expect jitted-so-forced 0 "valid symfile" "" -- --format=symfile check "$dir/jitted-123-1.so"
# Git-style command lines: every verb answers --help with its own usage
# (exit 0); options go before or after the operands; -- ends them.
for verb in check dump clean enable disable status; do
  expect "$verb-help" 0 "usage: jitframes $verb" "" -- "$verb" --help
  expect "$verb-h" 0 "usage: jitframes $verb" "" -- "$verb" -h
done
expect record-help 0 "PID" "" -- record --help
# `jitframes help VERB` is `VERB --help` (record's too: its script's text);
# `help` alone is --help; -V is --version.
for verb in check dump clean enable disable status record regions perfmap completions; do
  "$tool" "$verb" --help >"$dir/verb-help" 2>&1
  "$tool" help "$verb" >"$dir/help-verb" 2>&1 || fail "help $verb: exit $?"
  cmp -s "$dir/verb-help" "$dir/help-verb" || fail "help $verb differs from $verb --help: $(head -3 "$dir/help-verb")"
done
"$tool" --help >"$dir/help-all"
"$tool" help >"$dir/help-none" || fail "help: exit $?"
cmp -s "$dir/help-all" "$dir/help-none" || fail "help alone differs from --help"
expect help-unknown-verb 2 "" "" -- help frobnicate
grep -q "jitframes help: wants one VERB (frobnicate is not one)" "$dir/err" || fail "help frobnicate: $(cat "$dir/err")"
expect version-short 0 "jitframes 0." "" -- -V
cmp -s <("$tool" -V) <("$tool" --version) || fail "-V differs from --version"
expect check-json-after-verb 0 '"entries": 2' "" -- check --json "$dir/good.map"
expect check-json-after-file 0 '"entries": 2' "" -- check "$dir/good.map" --json
expect check-format-spaced 1 "" "$dir/good.map:0x0: not a jitdump (bad magic)" \
  -- check "$dir/good.map" --format jitdump
expect dump-format-after 1 "" "$dir/good.map:0x0: not a jitdump (bad magic)" \
  -- dump --format=jitdump "$dir/good.map"
cp "$dir/good.map" "$dir/--help"
expect double-dash-ends-options 0 "valid perf map: 2 entries" "" -- check -- "$dir/--help"
(cd "$dir" && "$tool" check -- --help >"$dir/out" 2>&1) && grep -qF -- "--help: valid perf map" "$dir/out" ||
  fail "check -- --help did not check the file named --help: $(cat "$dir/out")"
expect check-unknown-option 2 "" "" -- check --frobnicate "$dir/good.map"
grep -qF "jitframes check: unknown option --frobnicate" "$dir/err" && grep -qF "usage: jitframes check" "$dir/err" || fail "unknown option: $(cat "$dir/err")"
expect check-no-file 2 "" "" -- check --json
# status's --json before or after the PID: both reach the (absent) channel
expect status-json-after 4 "" "" -- status 1 --json
expect status-json-before 4 "" "" -- status --json 1
expect enable-no-json 2 "" "" -- enable 1 perfmap --json
mkdir "$dir/empty-dir"
expect clean-options-after 0 "clean: would remove 0 files" "" -- clean --dir "$dir/empty-dir" --dry-run
expect clean-operand-refused 2 "" "" -- clean "$dir/empty-dir"

# --json: one valid JSON object per file, with the format and the verdict
"$tool" --json check "$dir/good.map" "$dir/overlap.map" "$dir/good.dump" >"$dir/json"
python3 - "$dir/json" <<'PY' || fail "--json output: $(cat "$dir/json")"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert [r["valid"] for r in rows] == [True, False, True], rows
assert rows[0]["format"] == "perfmap" and rows[0]["summary"]["entries"] == 2, rows[0]
assert rows[1]["error"]["where"] == 2 and "overlaps" in rows[1]["error"]["message"], rows[1]
assert rows[2]["format"] == "jitdump" and rows[2]["summary"]["loads"] == 1, rows[2]
PY
"$tool" --json dump "$dir/good.map" "$dir/good.dump" "$symfile" >"$dir/json"
python3 - "$dir/json" <<'PY' || fail "dump --json output: $(cat "$dir/json")"
import json, sys
m, d, e = [json.loads(line) for line in open(sys.argv[1])]
assert [x["name"] for x in m["entries"]] == ["foo", "bar baz"], m
assert m["entries"][1]["start"] == 0x7f0000002000 and m["entries"][1]["size"] == 16, m
loads = [r for r in d["records"] if r["type"] == "CODE_LOAD"]
assert len(loads) == 1 and loads[0]["name"] == "sample_fn", d
assert any(r["type"] == "CODE_DEBUG_INFO" and r["lines"] for r in d["records"]), d
assert e["format"] == "symfile" and len(e["symbols"]) == e["summary"]["functions"], e
PY

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "all CLI checks passed"
