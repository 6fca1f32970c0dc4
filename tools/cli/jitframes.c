/*
 * jitframes — the command-line tool: `main` reads the options that come
 * before a verb (--help, --version) and hands the command line to the
 * verb's own file, from the table below (the verbs' names are
 * cli_verbs.c's, which the usage text and the completions use too):
 *   check, dump              file_cmd.c: validate or print perf maps,
 *                            jitdumps, GDB JIT symfiles
 *   clean                    clean_cmd.c: remove what dead processes left
 *   enable, disable, status  control_cmd.c: a running process's control channel
 *   regions, perfmap         table_cmd.c: the regions a process published in its memory
 *   record                   record_cmd.c: hands over to tools/record/jitframes-record.py
 *   help, completions        here, and cli_completions.c
 * Every verb returns an exit status of exit_status.h.
 */
#define _GNU_SOURCE
#include "clean_cmd.h"
#include "cli_args.h"
#include "cli_verbs.h"
#include "control_cmd.h"
#include "exit_status.h"
#include "file_cmd.h"
#include "record_cmd.h"
#include "table_cmd.h"

#include <stdio.h>
#include <string.h>

/* Options before the verb are the verb's own (`jitframes --json check F`
 * as `jitframes check --json F`): move the verb in front of them. */
static char **verb_first(char **argv, int verb_at)
{
    char *verb = argv[verb_at];
    memmove(argv + 2, argv + 1, (size_t)(verb_at - 1) * sizeof *argv);
    argv[1] = verb;
    return argv + 1;
}

/* `jitframes help [VERB]`: what `jitframes [VERB] --help` prints. record's
 * options are its script's: `help record` runs `record --help`. */
static int help_command(int argc, char **argv)
{
    if (argc == 1)
        return jft_usage(stdout, NULL), JFT_EXIT_OK;
    int verb = jft_verb_find(argv[1]);
    if (argc > 2 || verb < 0) {
        fprintf(stderr, "jitframes help: wants one VERB (%s is not one)\n", argv[1]);
        jft_usage_synopsis(stderr, jft_verb_name(JFT_VERB_HELP));
        return JFT_EXIT_USAGE;
    }
    if (verb == JFT_VERB_RECORD) {
        static char help_option[] = "--help";
        char *record_help[] = {argv[1], help_option, NULL};
        return jft_record_command(2, record_help);
    }
    return jft_usage(stdout, argv[1]), JFT_EXIT_OK;
}

/* What runs each verb: argv[0] is the verb, then its operands and options
 * in any order (cli_args.h). */
typedef int (*verb_command)(int argc, char **argv);

static const verb_command commands[JFT_N_VERBS] = {
    [JFT_VERB_CHECK] = jft_file_command,
    [JFT_VERB_DUMP] = jft_file_command,
    [JFT_VERB_CLEAN] = jft_clean_command,
    [JFT_VERB_ENABLE] = jft_control_command,
    [JFT_VERB_DISABLE] = jft_control_command,
    [JFT_VERB_STATUS] = jft_control_command,
    [JFT_VERB_RECORD] = jft_record_command,
    [JFT_VERB_REGIONS] = jft_table_command,
    [JFT_VERB_PERFMAP] = jft_table_command,
    [JFT_VERB_HELP] = help_command,
    [JFT_VERB_COMPLETIONS] = jft_completions_command,
};

static int unknown_verb(const char *name)
{
    fprintf(stderr, "jitframes: unknown command '%s' (", name);
    for (int v = 0; v < JFT_N_VERBS; v++)
        fprintf(stderr, "%s%s", v ? ", " : "", jft_verb_name((jft_verb)v));
    fprintf(stderr, ")\n");
    jft_usage_synopsis(stderr, NULL);
    return JFT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return jft_usage(stdout, NULL), JFT_EXIT_OK;
        if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0) {
            printf("jitframes %s\n", JITFRAMES_VERSION);
            return JFT_EXIT_OK;
        }
    }
    if (i == argc || argv[i][0] == '-') {
        fprintf(stderr, "jitframes: no command given\n");
        jft_usage_synopsis(stderr, NULL);
        return JFT_EXIT_USAGE;
    }
    int v = jft_verb_find(argv[i]);
    if (v < 0 || !commands[v])
        return unknown_verb(argv[i]);
    return commands[v](argc - 1, verb_first(argv, i));
}
