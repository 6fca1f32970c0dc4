/*
 * `jitframes clean [--older-than D] [--dry-run] [--dir DIR]...`: remove what
 * profiling left behind by processes that no longer exist (clean_cmd.c says
 * what must be proven first).
 */
#ifndef JFT_CLEAN_CMD_H
#define JFT_CLEAN_CMD_H

/* argv[0] is "clean". Returns the exit status: 0 done, 1 a file could not be
 * removed, 2 usage error. */
int jft_clean_command(int argc, char **argv);

#endif
