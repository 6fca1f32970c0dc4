/*
 * `jitframes enable PID SINKS`, `jitframes disable PID SINKS` and
 * `jitframes status PID [--json]`: the control channel's commands.
 */
#ifndef JFT_CONTROL_CMD_H
#define JFT_CONTROL_CMD_H

/* 1 if `cmd` is one of the control commands. */
int jft_is_control_command(const char *cmd);

/* Run one: argv[0] is the command, then its operands (--json may come
 * anywhere after the command). Returns the exit status (tools/README.md). */
int jft_control_command(int argc, char **argv, int json);

#endif
