/*
 * `jitframes check [--format=FORMAT] [--json] FILE...` and `jitframes dump
 * ...`: validate (or print) perf maps, jitdumps and GDB JIT symfiles with
 * the parsers of tools/readers.
 */
#ifndef JFT_FILE_CMD_H
#define JFT_FILE_CMD_H

/* argv[0] is "check" or "dump". Returns the worst file's exit status
 * (exit_status.h: usage/unreadable, then invalid, then warnings). */
int jft_file_command(int argc, char **argv);

#endif
