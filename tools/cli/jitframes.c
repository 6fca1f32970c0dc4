/*
 * jitframes — the command-line tool: `main` reads the options that come
 * before a verb (--help, --version) and hands the command line to the
 * verb's own file, from the table below:
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
    if (argc > 2 || !jft_is_verb(argv[1])) {
        fprintf(stderr, "jitframes help: wants one VERB (%s is not one)\n", argv[1]);
        jft_usage_synopsis(stderr, "help");
        return JFT_EXIT_USAGE;
    }
    if (strcmp(argv[1], "record") == 0) {
        static char help_option[] = "--help";
        char *record_help[] = {argv[1], help_option, NULL};
        return jft_record_command(2, record_help);
    }
    return jft_usage(stdout, argv[1]), JFT_EXIT_OK;
}

/* Each verb and what runs it: argv[0] is the verb, then its operands and
 * options in any order (cli_args.h). */
typedef struct verb {
    const char *name;
    int (*run)(int argc, char **argv);
} verb;

static const verb verbs[] = {
    {"check", jft_file_command},
    {"dump", jft_file_command},
    {"clean", jft_clean_command},
    {"enable", jft_control_command},
    {"disable", jft_control_command},
    {"status", jft_control_command},
    {"record", jft_record_command},
    {"regions", jft_table_command},
    {"perfmap", jft_table_command},
    {"help", help_command},
    {"completions", jft_completions_command},
};

static const verb *find_verb(const char *name)
{
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (strcmp(verbs[i].name, name) == 0)
            return &verbs[i];
    return NULL;
}

static int unknown_verb(const char *name)
{
    fprintf(stderr, "jitframes: unknown command '%s' (", name);
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", verbs[i].name);
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
    const verb *v = find_verb(argv[i]);
    if (!v)
        return unknown_verb(argv[i]);
    return v->run(argc - 1, verb_first(argv, i));
}
