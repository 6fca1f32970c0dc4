/*
 * `jitframes enable PID SINKS`, `jitframes disable PID SINKS` and
 * `jitframes status [--json] PID`: the control channel's commands.
 */
#ifndef JFT_CONTROL_CMD_H
#define JFT_CONTROL_CMD_H

/* 1 if `cmd` is one of the control commands. */
int jft_is_control_command(const char *cmd);

/* Run one: argv[0] is the command, then its operands and options in any
 * order (cli_args.h). Returns the exit status (tools/README.md). */
int jft_control_command(int argc, char **argv);

#endif
