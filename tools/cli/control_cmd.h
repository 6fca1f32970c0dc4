/*
 * `jitframes enable PID SINKS`, `jitframes disable PID SINKS` and
 * `jitframes status [--json] PID`: the control channel's commands.
 */
#ifndef JFT_CONTROL_CMD_H
#define JFT_CONTROL_CMD_H

/* Run one: argv[0] is the command, then its operands and options in any
 * order (cli_args.h). Returns the exit status (exit_status.h, tools/README.md). */
int jft_control_command(int argc, char **argv);

#endif
