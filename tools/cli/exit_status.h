/*
 * The jitframes command's exit statuses: one set for every verb, so a
 * number means the same thing whichever verb returns it (tools/README.md
 * says which verb returns which, and when). `record` is a Python script:
 * tools/record/jfrecord_exit.py holds the same numbers, and the test
 * exit_statuses_agree_between_c_and_python fails when the two differ.
 */
#ifndef JFT_EXIT_STATUS_H
#define JFT_EXIT_STATUS_H

enum jft_exit_status {
    JFT_EXIT_OK = 0,          /* done; every file is valid */
    JFT_EXIT_FAILED = 1,      /* a file breaks a rule, the process answered an error, a
                               * file could not be removed, the table could not be read,
                               * perf failed */
    JFT_EXIT_USAGE = 2,       /* a usage error, or a file that cannot be read or is refused */
    JFT_EXIT_WARNINGS = 3,    /* check/dump: valid for perf, with warnings */
    JFT_EXIT_UNREACHABLE = 4, /* no such process, or it cannot be reached (no channel, no table) */
};

#endif
