#!/usr/bin/env python3
"""A hostile target for `jitframes record`: it listens on a jitframes control
socket as a real process would (docs/formats.md, "Control channel") and lies
in every field of every reply: another process's pid (its own in the first
reply only, so that the victim's files seem to appear during the recording),
uid 0, a dump directory of its choosing, absurd counters, sinks it never
turned on.

    lying_listener.py VICTIM_PID DUMP_DIR MARKER_DIR MODE

MODE:
  lie           only lie
  plant         also, once asked to enable, plant its own names as symlinks
                to the victim's files (/tmp/perf-OWN.map, DUMP_DIR/jit-OWN.dump)
  own           also, once asked to enable, write a real perf map of its own
                (the one file record may remove)
  bad-size      replies whose size field does not match what is sent

After the first enable request it creates MARKER_DIR/enabled. Runs until killed.
"""
import os
import secrets
import socket
import struct
import sys

victim, dump_dir, marker_dir, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
own = os.getpid()
ENABLE, ALL_SINKS, HUGE = 2, 0xF, 2**64 - 1


def reply(op, enabled, first):
    message, directory = b"", dump_dir.encode()
    size = 152 + len(message) + len(directory)
    if mode == "bad-size":
        size = 4758 * 3  # beyond any reply; also far beyond what follows
    head = b"jfrp" + struct.pack("<HHiI", 1, op, 0, size)
    head += struct.pack("<IIIIQ", own if first else victim, 0, enabled, ALL_SINKS & ~enabled, HUGE)
    head += struct.pack("<12Q", *([HUGE] * 12))
    head += struct.pack("<HHHHH6x", 9, 9, 9, len(message), len(directory))
    assert len(head) == 152
    return head + message + directory


def act_on_enable():
    if mode == "plant":
        os.symlink("/tmp/perf-%d.map" % victim, "/tmp/perf-%d.map" % own)
        os.symlink(os.path.join(dump_dir, "jit-%d.dump" % victim),
                   os.path.join(dump_dir, "jit-%d.dump" % own))
    elif mode == "own":
        with open("/tmp/perf-%d.map" % own, "x") as f:
            f.write("1000 10 lying_listener_code\n")
    open(os.path.join(marker_dir, "enabled"), "w").close()


def main():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(b"\0jitframes/%d.%s" % (own, secrets.token_hex(8).encode()))
    s.listen(8)
    enabled = 0  # what it claims; it never writes anything a sink would
    first = True
    while True:
        c, _ = s.accept()
        with c:
            c.settimeout(2)
            try:
                req = c.recv(16)
            except OSError:
                continue
            op = struct.unpack_from("<H", req, 6)[0] if len(req) >= 8 else 0
            if op == ENABLE:
                if not os.path.exists(os.path.join(marker_dir, "enabled")):
                    act_on_enable()
                enabled = ALL_SINKS
            try:
                c.sendall(reply(op, enabled, first))
            except OSError:
                pass
            first = False


main()
