/*
 * `jitframes record PID [...]`: runs the recording script (jitframes-record,
 * beside this program in a build tree, in libexec/jitframes once installed).
 */
#ifndef JFT_RECORD_CMD_H
#define JFT_RECORD_CMD_H

/* argv[0] is "record". Does not return on success (the script takes over);
 * returns 2 if the script cannot be found or run. */
int jft_record_command(int argc, char **argv);

#endif
