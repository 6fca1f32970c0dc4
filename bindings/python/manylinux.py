"""The manylinux policy of a wheel, checked as auditwheel checks it, and the
wheel retagged once it holds (scripts/python-wheels, tests/packaging).

    manylinux.py check WHEEL...        every ELF file: its libraries and symbol
                                       versions fit manylinux_2_31_x86_64; one line
                                       per file, exit status 1 if one does not
    manylinux.py retag WHEEL           checks it, then renames it ..._linux_x86_64.whl ->
                                       ..._manylinux_2_31_x86_64.whl (WHEEL's Tag and
                                       RECORD rewritten); prints the new path

A file holds the policy when every library in its DT_NEEDED is one the policy
lets a wheel take from the system (auditwheel's list) and, per library, the
highest version it needs (.gnu.version_r) is at most the policy's: GLIBC_2.31,
the libstdc++ and libgcc of Debian 11 (GLIBCXX_3.4.28, CXXABI_1.3.12, GCC_10.0).
A static executable needs nothing. Read here from the ELF structures alone
(no readelf, no pyelftools: auditwheel is not installable offline).
"""
import base64
import hashlib
import os
import re
import struct
import sys
import zipfile

POLICY = "manylinux_2_31_x86_64"
# What a manylinux wheel may take from the system (auditwheel's policy.json,
# manylinux_2_31 on x86_64).
ALLOWED_LIBRARIES = {
    "libgcc_s.so.1", "libstdc++.so.6", "libm.so.6", "libdl.so.2", "librt.so.1", "libc.so.6",
    "libnsl.so.1", "libutil.so.1", "libpthread.so.0", "libresolv.so.2", "libX11.so.6",
    "libXext.so.6", "libXrender.so.1", "libICE.so.6", "libSM.so.6", "libGL.so.1",
    "libgobject-2.0.so.0", "libgthread-2.0.so.0", "libglib-2.0.so.0", "ld-linux-x86-64.so.2",
}
# The highest version of each symbol-version family the policy allows.
MAX_VERSIONS = {"GLIBC": (2, 31), "GLIBCXX": (3, 4, 28), "CXXABI": (1, 3, 12), "GCC": (10, 0)}

SHT_DYNAMIC, SHT_GNU_VERNEED = 6, 0x6FFFFFFE
DT_NEEDED, EM_X86_64 = 1, 62


class ElfError(Exception):
    pass


def _cstr(table, offset):
    end = table.find(b"\0", offset)
    if offset >= len(table) or end < 0:
        raise ElfError("string offset %d outside its table" % offset)
    return table[offset:end].decode("ascii", "replace")


def _sections(data):
    """(type, offset, size, link) of each section of an ELF64 little-endian file."""
    if data[:4] != b"\x7fELF":
        raise ElfError("not ELF")
    if data[4] != 2 or data[5] != 1:
        raise ElfError("not a 64-bit little-endian ELF file")
    machine, = struct.unpack_from("<H", data, 18)
    if machine != EM_X86_64:
        raise ElfError("machine %d, not x86_64" % machine)
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    if shoff + shnum * shentsize > len(data) or (shnum and shentsize < 64):
        raise ElfError("section headers outside the file")
    out = []
    for i in range(shnum):
        _, sh_type, _, _, off, size, link = struct.unpack_from("<IIQQQQI", data, shoff + i * shentsize)
        if sh_type and off + size > len(data) and sh_type != 8:  # 8: SHT_NOBITS
            raise ElfError("section %d outside the file" % i)
        out.append((sh_type, off, size, link))
    return out


def _strtab(data, sections, index):
    if index >= len(sections):
        raise ElfError("no string table %d" % index)
    _, off, size, _ = sections[index]
    return data[off:off + size]


def needed_libraries(data, sections):
    out = []
    for sh_type, off, size, link in sections:
        if sh_type != SHT_DYNAMIC:
            continue
        strings = _strtab(data, sections, link)
        for pos in range(off, off + size - 15, 16):
            tag, val = struct.unpack_from("<qQ", data, pos)
            if tag == 0:
                break
            if tag == DT_NEEDED:
                out.append(_cstr(strings, val))
    return out


def needed_versions(data, sections):
    """{library: [version names it needs]} from .gnu.version_r."""
    out = {}
    for sh_type, off, size, link in sections:
        if sh_type != SHT_GNU_VERNEED:
            continue
        strings = _strtab(data, sections, link)
        pos, seen = off, 0
        while seen < 10000:
            _, cnt, file_, aux, nxt = struct.unpack_from("<HHIII", data, pos)
            names = out.setdefault(_cstr(strings, file_), [])
            apos = pos + aux
            for _ in range(cnt):
                _, _, _, name, anext = struct.unpack_from("<IHHII", data, apos)
                names.append(_cstr(strings, name))
                apos += anext
            seen += 1
            if not nxt:
                break
            pos += nxt
    return out


def _version(name):
    """('GLIBC', (2, 31)) for 'GLIBC_2.31'; None for a name of no family."""
    m = re.match(r"([A-Z]+)_(\d+(?:\.\d+)*)$", name)
    return (m.group(1), tuple(int(x) for x in m.group(2).split("."))) if m else None


def problems(data):
    """Why an ELF file breaks the policy (empty: it holds), and a summary."""
    sections = _sections(data)
    libs = needed_libraries(data, sections)
    found = [lib for lib in libs if lib not in ALLOWED_LIBRARIES]
    bad = ["needs %s, which a manylinux wheel may not take from the system" % lib for lib in found]
    highest = {}
    for lib, names in needed_versions(data, sections).items():
        for name in names:
            v = _version(name)
            if not v or v[0] not in MAX_VERSIONS:
                continue
            if v[1] > MAX_VERSIONS[v[0]]:
                bad.append("needs %s from %s (the policy allows %s_%s at most)"
                           % (name, lib, v[0], ".".join(map(str, MAX_VERSIONS[v[0]]))))
            key = (lib, v[0])
            highest[key] = max(highest.get(key, v[1]), v[1])
    summary = ", ".join("%s %s_%s" % (lib, fam, ".".join(map(str, ver)))
                        for (lib, fam), ver in sorted(highest.items())) or "no versioned symbols"
    return bad, "NEEDED [%s]; highest: %s" % (", ".join(libs) or "none: static", summary)


def check_wheel(path, out=sys.stdout):
    """Checks every ELF file of the wheel; True when all hold the policy."""
    ok, elf_files = True, 0
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            data = z.read(name)
            if data[:4] != b"\x7fELF":
                continue
            elf_files += 1
            try:
                bad, summary = problems(data)
            except (ElfError, struct.error) as e:
                bad, summary = ["cannot be read: %s" % e], ""
            print("%s %s: %s" % ("ok" if not bad else "FAIL", name, summary), file=out)
            for b in bad:
                print("  %s" % b, file=out)
            ok = ok and not bad
    if not elf_files:
        print("FAIL %s: no ELF file in the wheel" % path, file=out)
    return ok and elf_files > 0


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def retag(path):
    """The wheel renamed and retagged POLICY (WHEEL, RECORD); its new path."""
    base = os.path.basename(path)
    m = re.match(r"(.+-cp\d+-cp\d+)-linux_x86_64\.whl$", base)
    if not m:
        raise SystemExit("manylinux: %s is not a cpXY-cpXY-linux_x86_64 wheel" % base)
    new = os.path.join(os.path.dirname(path), "%s-%s.whl" % (m.group(1), POLICY))
    with zipfile.ZipFile(path) as z:
        entries = [(info, z.read(info)) for info in z.infolist()]
    record = next(i.filename for i, _ in entries if i.filename.endswith(".dist-info/RECORD"))
    lines = []
    with zipfile.ZipFile(new + ".part", "w", zipfile.ZIP_DEFLATED) as z:
        for info, data in entries:
            if info.filename.endswith(".dist-info/WHEEL"):
                data = re.sub(rb"(?m)^(Tag: .*-)linux_x86_64$", rb"\1" + POLICY.encode(), data)
            if info.filename == record:
                continue
            lines.append(_record_line(info.filename, data))
            z.writestr(info, data, zipfile.ZIP_DEFLATED)
        info = next(i for i, _ in entries if i.filename == record)
        z.writestr(info, "\n".join(lines + [record + ",,"]) + "\n", zipfile.ZIP_DEFLATED)
    os.rename(new + ".part", new)
    os.unlink(path)
    return new


def main(argv):
    if len(argv) >= 2 and argv[0] == "check":
        return 0 if all([check_wheel(w) for w in argv[1:]]) else 1
    if len(argv) == 2 and argv[0] == "retag":
        if not check_wheel(argv[1], out=sys.stderr):
            print("manylinux: %s does not hold %s: not retagged" % (argv[1], POLICY), file=sys.stderr)
            return 1
        print(retag(argv[1]))
        return 0
    print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
