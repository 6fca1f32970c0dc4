#!/usr/bin/env python3
"""The rules CONTRIBUTING.md sets for src/ (and for what must be written once
beside it: the GDB JIT interface, the readers' range check and fixed fields,
the tool's verb names), checked on the source tree.

src_rules.py SRC_DIR arch    no #if on an architecture, nor an architecture's
                             intrinsic, outside src/arch/
src_rules.py SRC_DIR used    every jf__ function a src/ header declares is used
                             by the library or the tools that link it (test-only
                             helpers live under tests/), knob headers named below
                             excepted
src_rules.py SRC_DIR names   nothing under src/ declares a type or object with the
                             public prefix jf_ that include/jitframes.h does not
                             (internal names are jf__)
src_rules.py SRC_DIR gdb_abi the GDB JIT interface's structures, action codes
                             and descriptor declaration are written in
                             src/gdb_jit_abi.h only (in src/ and in every other
                             C folder beside it: tests, fuzz, tools, bench...)
src_rules.py SRC_DIR ranges  the readers beside src/ (tools/readers) check that
                             [off, off + len) fits in a buffer with jft_fits
                             only, not with an open-coded `off > size ||
                             len > size - off`
src_rules.py SRC_DIR fields  tools/readers/jitdump_reader.c reads every fixed
                             field through its field tables: no run of three
                             `x->f = jft_u32(r);` lines
src_rules.py SRC_DIR verbs   the tool's verb names are written in one table
                             (tools/cli/cli_verbs.c): no other file of tools/cli
                             keys a table row by a verb's name or lists verbs
                             in a string ("check dump ...")
Prints each violation as FILE:LINE: text and exits 1 if there is any."""
import pathlib, re, sys

ARCH_MACRO = re.compile(r"__(x86_64|i386|amd64|aarch64|arm|riscv|powerpc\w*|PPC\w*|ppc\w*|s390\w*|mips\w*|"
                        r"loongarch\w*)__|\b__riscv\b|\b_CALL_ELF\b|\b__ARM_\w+")
ARCH_INTRINSIC = re.compile(r"__builtin_(ia32|aarch64|arm|riscv|ppc|s390)_")
PREPROC_IF = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif)\b")
# Headers of internal knobs for benchmarks and tests, named after what they tune.
KNOB_HEADERS = {"sink_gdb.h", "trampoline.h"}


def sources(src):
    return sorted(p for p in src.rglob("*") if p.suffix in (".c", ".h"))


def check_arch(src):
    bad = []
    for p in sources(src):
        if "arch" in p.relative_to(src).parts[:-1]:
            continue
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if (PREPROC_IF.match(line) and ARCH_MACRO.search(line)) or ARCH_INTRINSIC.search(line):
                bad.append(f"{p}:{n}: {line.strip()}")
    return bad


DECL = re.compile(r"^(?:static inline |extern )?[A-Za-z_][\w ]*?[\s*](jf__\w+)\s*\(")


def uses(line, name, word):
    """How many times `line` uses name (its own declaration or definition
    does not count; a one-line definition may use other names)."""
    n = len(word.findall(line))
    m = DECL.match(line)
    return n - 1 if m and m.group(1) == name else n


def check_used(src):
    files = {p: p.read_text().splitlines() for p in sources(src)}
    # The tools link the library's code too (the control client, the table readers).
    users = dict(files)
    tools = src.parent / "tools"
    if tools.is_dir():
        users.update({p: p.read_text().splitlines() for p in sources(tools)})
    declared = {}
    for p, lines in files.items():
        if p.suffix == ".h" and p.name not in KNOB_HEADERS:
            for n, line in enumerate(lines, 1):
                m = DECL.match(line)
                if m:
                    declared.setdefault(m.group(1), (p, n, line.strip()))
    bad = []
    for name, (p, n, text) in sorted(declared.items()):
        word = re.compile(r"\b" + name + r"\b")
        if not any(uses(line, name, word) for lines in users.values() for line in lines):
            bad.append(f"{p}:{n}: {name} is declared for the library but only tests use it: {text}")
    return bad


PUBLIC_LOOKING = re.compile(r"^(?:typedef (?:struct|enum|union) |struct |enum |union |\} )(jf_[a-z]\w*)\b|"
                            r"^(?:extern )?(?:const )?\w+ (?:\*?const )?(jf_[a-z]\w*)\s*(?:\[|=|;)")


def check_names(src):
    public = set(re.findall(r"\bjf_[a-z]\w*", (src.parent / "include" / "jitframes.h").read_text()))
    bad = []
    for p in sources(src):
        for n, line in enumerate(p.read_text().splitlines(), 1):
            m = PUBLIC_LOOKING.match(line)
            if m and (m.group(1) or m.group(2)) not in public:
                bad.append(f"{p}:{n}: {m.group(1) or m.group(2)} looks public (internal names are jf__): {line.strip()}")
    return bad


# A struct body with gdb's field names, the action enum, or a declaration of
# the descriptor's type: each is the GDB JIT interface written again.
GDB_ABI = [
    re.compile(r"\bstruct\s+\w*\s*\{[^{}]*\b(?:symfile_addr|relevant_entry)\b[^{}]*\}", re.S),
    re.compile(r"\bJIT_NOACTION\s*="),
    re.compile(r"\bextern\b[^;]*\b__jit_debug_descriptor\b"),
]
C_FOLDERS = ("src", "include", "tools", "tests", "fuzz", "bench", "bindings", "examples")


def check_gdb_abi(src):
    home = src / "gdb_jit_abi.h"
    if not home.is_file():
        return [f"{home}: missing (the one declaration of the GDB JIT interface)"]
    bad = []
    for top in C_FOLDERS:
        for p in sources(src.parent / top):
            text = p.read_text(errors="replace") if p != home else ""
            for m in (m for rx in GDB_ABI for m in rx.finditer(text)):
                n = text.count("\n", 0, m.start()) + 1
                bad.append(f"{p}:{n}: the GDB JIT interface written again (include gdb_jit_abi.h): "
                           f"{text.splitlines()[n - 1].strip()}")
    return bad


# `A > B || C > B - A` or `A <= B && C <= B - A` (casts allowed): the
# overflow-safe range check jft_fits makes, written out again.
OPERAND = r"(?:\(\w+\))?([*]?\w+(?:(?:\.|->)\w+)*)"
OPEN_RANGE_CHECK = re.compile(OPERAND + r" (?:>=?|<=?) ([*]?\w+(?:(?:\.|->)\w+)*) (?:\|\||&&)[^;{]*?"
                              r"(?:>=?|<=?) \2 - (?:\(\w+\))?\1\b")


def check_ranges(src):
    readers = src.parent / "tools" / "readers"
    bad = []
    for p in sources(readers):
        if p.name.startswith("jft_common."):
            continue
        text = p.read_text()
        for m in OPEN_RANGE_CHECK.finditer(text):
            n = text.count("\n", 0, m.start()) + 1
            bad.append(f"{p}:{n}: a range check written out (use jft_fits): {m.group(0).strip()}")
    return bad


FIELD_READ = re.compile(r"^\s*[\w.>\[\]-]+ = jft_u(?:16|32|64)\(\S+\);")


def check_fields(src):
    path = src.parent / "tools" / "readers" / "jitdump_reader.c"
    lines = path.read_text().splitlines()
    bad = []
    for n in range(len(lines) - 2):
        first = not (n and FIELD_READ.match(lines[n - 1]))
        if first and all(FIELD_READ.match(lines[k]) for k in range(n, n + 3)):
            bad.append(f"{path}:{n + 1}: fields read one by one (use a field table): {lines[n].strip()}")
    return bad


VERB_NAME = re.compile(r'\[JFT_VERB_\w+\] = "(\w+)"')


def check_verbs(src):
    cli = src.parent / "tools" / "cli"
    names = VERB_NAME.findall((cli / "cli_verbs.c").read_text()) if (cli / "cli_verbs.c").is_file() else []
    if not names:
        return [f"{cli / 'cli_verbs.c'}: no verb table ([JFT_VERB_X] = \"name\")"]
    verb = "(?:" + "|".join(names) + ")"
    row = re.compile(r'^\s*\{+"' + verb + r'"')                        # {"check", ...} or {{"check", ...
    listing = re.compile(r'"' + verb + r'(?:[ |,]+' + verb + r')+"')  # "check dump ..."
    bad = []
    for p in sources(cli):
        if p.name == "cli_verbs.c":
            continue
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if row.search(line) or listing.search(line):
                bad.append(f"{p}:{n}: verb names written again (index cli_verbs.h's list): {line.strip()}")
    return bad


def main():
    src, rule = pathlib.Path(sys.argv[1]), sys.argv[2]
    bad = {"arch": check_arch, "used": check_used, "names": check_names, "gdb_abi": check_gdb_abi,
           "ranges": check_ranges, "fields": check_fields,
           "verbs": check_verbs}[rule](src)
    for b in bad[:50]:
        print(b)
    print(f"{len(bad)} violation(s) of the '{rule}' rule in {src}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
