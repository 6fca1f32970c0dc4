/*
 * Who the control channel obeys: those who could attach a debugger to the
 * process, as far as the process can tell from the kernel alone. The
 * kernel hands us the peer's effective uid translated into this process's
 * user namespace (SO_PEERCRED): equal to ours means the same user (the
 * translation is one to one), 0 means this namespace's root. A uid with no
 * mapping here is translated to the overflow uid (65534), which every
 * unmapped identity reads as alike, so that value names no one unless this
 * namespace maps every uid (the initial one does, and there 65534 is a real
 * user, nobody). Root of an ancestor namespace that maps to nothing here
 * (the host's root, outside a container) enters this namespace and takes
 * its root's or the process's uid first, as only it may: the tool does.
 */
#define _GNU_SOURCE
#include "control.h"

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

enum { DEFAULT_OVERFLOW_UID = 65534, MAX_UID_MAP_LINES = 512 };

/* Read when the listener starts (jf__control_peer_refresh), not per
 * connection: a flood of connections costs no /proc reads. */
static uid_t overflow;

void jf__control_peer_refresh(void)
{
    FILE *f = fopen("/proc/sys/kernel/overflowuid", "re");
    unsigned long v = DEFAULT_OVERFLOW_UID;
    if (f) {
        if (fscanf(f, "%lu", &v) != 1)
            v = DEFAULT_OVERFLOW_UID;
        fclose(f);
    }
    overflow = (uid_t)v;
}

/* Does this user namespace map all 2^32 - 1 uids (then none reads as the
 * overflow uid without being it)? Unreadable: assume not. A map is
 * written once, so a yes is kept (only the listener thread asks). */
static int every_uid_mapped(void)
{
    static int known_full;
    if (known_full)
        return 1;
    FILE *f = fopen("/proc/self/uid_map", "re");
    if (!f)
        return 0;
    unsigned long long inside, outside, count, total = 0;
    for (int i = 0; i < MAX_UID_MAP_LINES && fscanf(f, "%llu %llu %llu", &inside, &outside, &count) == 3; i++)
        total += count;
    fclose(f);
    return known_full = total >= UINT32_MAX;
}

static int names_someone(uid_t uid)
{
    return uid != overflow || every_uid_mapped();
}

int jf__control_peer_obeyed(uid_t peer_uid, char *why, size_t cap)
{
    uid_t self = geteuid();
    if (peer_uid != 0 && peer_uid != self) {
        snprintf(why, cap, "refused: uid %u is neither this process's uid (%u) nor root", (unsigned)peer_uid,
                 (unsigned)self);
        return 0;
    }
    if (!names_someone(peer_uid)) { /* /proc read only for those who would be obeyed */
        snprintf(why, cap,
                 "refused: the peer's uid has no mapping in this process's user namespace "
                 "(it reads as the overflow uid %u, as every unmapped one does)%s",
                 (unsigned)peer_uid,
                 self == peer_uid ? "; nor has this process's own uid: it obeys no one" : "");
        return 0;
    }
    return 1;
}
