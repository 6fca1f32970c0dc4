/*
 * The tool's command lines, git-style: a verb's options may come before or
 * after its operands, `--` ends the options (what follows is an operand,
 * even "--help"), and --help or -h asks for the verb's usage.
 */
#ifndef JFT_CLI_ARGS_H
#define JFT_CLI_ARGS_H

#include <stdio.h>

/* One option a verb takes. */
typedef struct jft_option {
    const char *name; /* "--json" */
    char short_name;  /* 'o' for -o, or 0 */
    int takes_value;  /* --name VALUE or --name=VALUE (or -o VALUE) */
} jft_option;

/* Called for each option found: `which` indexes the verb's table, value is
 * NULL for an option without one. Non-zero refuses the value. */
typedef int (*jft_on_option)(void *ctx, int which, const char *value);

enum { JFT_ARGS_OK = 0, JFT_ARGS_HELP = 1, JFT_ARGS_BAD = 2 };

/* Walk argv[1..argc) (argv[0] is the verb): each option of `opts` (ended by
 * a NULL name) goes to on_option; the operands are moved, in order, to
 * argv[1..*n_operands]. Returns JFT_ARGS_HELP for --help or -h,
 * JFT_ARGS_BAD for an unknown option, a missing or refused value (said on
 * stderr, with the verb's usage), else JFT_ARGS_OK. */
int jft_parse_args(int argc, char **argv, const jft_option *opts, jft_on_option on_option, void *ctx,
                   int *n_operands);

/* What `jitframes --help` says about `verb` (NULL: about every verb). */
void jft_usage(FILE *out, const char *verb);

/* The "usage: ..." lines of `verb` (NULL: of every verb): for a usage error. */
void jft_usage_synopsis(FILE *out, const char *verb);

/* `jitframes completions SHELL` (cli_completions.c): a completion script
 * for bash, zsh or fish on stdout. Returns the exit status. */
int jft_completions_command(int argc, char **argv);

#endif
