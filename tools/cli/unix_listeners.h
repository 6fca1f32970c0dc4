/*
 * The listening AF_UNIX sockets with abstract names of the calling thread's
 * network namespace, each with its inode and its exact name, as the kernel
 * reports them over sock_diag (NETLINK_SOCK_DIAG, unix_diag). Unlike the
 * lines of /proc/net/unix, whose last field is the raw name (a newline in an
 * abstract name, which anyone may bind, makes the rest of that name read as
 * a line of its own), every name comes with its length: nobody can forge an
 * entry.
 */
#ifndef JFT_UNIX_LISTENERS_H
#define JFT_UNIX_LISTENERS_H

#include <stddef.h>

/* Called per listening abstract socket: name without its leading NUL,
 * `len` bytes (not NUL-terminated). Return nonzero to stop. */
typedef int (*jfc_listener_fn)(unsigned long inode, const char *name, size_t len, void *arg);

/* 0 after every listener was passed to fn (or fn stopped), -1 with errno
 * when sock_diag cannot be asked (no unix_diag in this kernel). */
int jfc_each_abstract_listener(jfc_listener_fn fn, void *arg);

#endif
