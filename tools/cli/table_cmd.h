/*
 * `jitframes regions PID [--json]` and `jitframes perfmap PID [-o FILE]
 * [--jitdump FILE]`: the live regions a process published in its memory (no file, nothing
 * switched on in advance), read when the kernel lets us ptrace it.
 */
#ifndef JFT_TABLE_CMD_H
#define JFT_TABLE_CMD_H

/* argv[0] is the verb. Exit status (exit_status.h): 0, 1 (cannot read), 2 (usage). */
int jft_table_command(int argc, char **argv);

#endif
