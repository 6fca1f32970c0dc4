"""Where a data symbol (jf_region_table) is in a running process: each ELF
file mapped in it (read through /proc/PID/map_files, so the file mapped,
not whatever has its path now) whose .dynsym or .symtab defines the
symbol, relocated by where the file is loaded. ELF64 little-endian only;
every read bounded."""
import struct

from pub_table import pread

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
PHDR = struct.Struct("<IIQQQQQQ")
SHDR = struct.Struct("<IIQQQQIIQQ")
SYM = struct.Struct("<IBBHQQ")
PT_LOAD, SHT_SYMTAB, SHT_DYNSYM = 1, 2, 11
MAX_FILES, MAX_SECTIONS, MAX_TABLE = 1024, 1 << 16, 256 << 20


def _read(f, at, n):
    if n > MAX_TABLE:
        raise ValueError("section too large")
    return pread(f, at, n)


def _values(f, eh, name):
    """st_value of each defined symbol called name in f's symbol tables."""
    shoff, shentsize, shnum = eh[6], eh[11], eh[12]
    if shentsize != SHDR.size or shnum > MAX_SECTIONS:
        return []
    raw = _read(f, shoff, shnum * SHDR.size)
    sections = [SHDR.unpack_from(raw, i) for i in range(0, len(raw), SHDR.size)]
    values = []
    for sh in sections:
        if sh[1] not in (SHT_SYMTAB, SHT_DYNSYM) or sh[6] >= len(sections) or sh[9] != SYM.size:
            continue
        strtab = _read(f, sections[sh[6]][4], sections[sh[6]][5])
        wanted, at = set(), strtab.find(b"\0" + name + b"\0")
        while at >= 0:
            wanted.add(at + 1)
            at = strtab.find(b"\0" + name + b"\0", at + 1)
        if not wanted:
            continue
        for st_name, _info, _other, shndx, value, _size in SYM.iter_unpack(_read(f, sh[4], sh[5] - sh[5] % SYM.size)):
            if st_name in wanted and shndx != 0:
                values.append(value)
    return values


def _bias(f, eh, lo, offset):
    """What the file's virtual addresses are moved by when the mapping at
    lo holds the file from offset: the PT_LOAD segment mapped there."""
    phoff, phentsize, phnum = eh[5], eh[9], eh[10]
    if phentsize != PHDR.size:
        return None
    for ph in PHDR.iter_unpack(_read(f, phoff, phnum * PHDR.size)):
        p_type, _flags, p_offset, p_vaddr = ph[:4]
        if p_type == PT_LOAD and p_offset - p_offset % 4096 == offset:
            return lo - (p_vaddr - (p_offset - offset))
    return None


def symbol_addresses(pid, name):
    """Addresses of the symbol name (bytes) in process pid (empty if none)."""
    first = {}  # file -> (lowest offset, its mapping)
    with open(f"/proc/{pid}/maps", "rb") as maps:
        for n, raw in enumerate(maps):
            fields = raw[:4096].decode("utf-8", "replace").split(maxsplit=5)
            if n > 4_000_000 or len(first) > MAX_FILES:
                break
            if len(fields) < 6 or not fields[5].startswith("/"):
                continue
            offset = int(fields[2], 16)
            if fields[5] not in first or offset < first[fields[5]][0]:
                first[fields[5]] = (offset, fields[0])
    found = []
    for offset, span in first.values():
        try:
            with open(f"/proc/{pid}/map_files/{span}", "rb") as f:
                eh = EHDR.unpack(_read(f, 0, EHDR.size))
                if eh[0][:6] != b"\x7fELF\x02\x01":
                    continue
                values = _values(f, eh, name)
                bias = _bias(f, eh, int(span.split("-")[0], 16), offset) if values else None
                found += [bias + v for v in values if bias is not None]
        except (OSError, ValueError, struct.error):
            continue
    return sorted(set(found))

