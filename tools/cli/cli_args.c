/*
 * Options anywhere among the operands, `--` to end them: the jitframes
 * tool's verbs parse their command lines here so that `check --json FILE`,
 * `check FILE --json` and `jitframes --json check FILE` all mean the same,
 * and every verb answers --help the same way.
 */
#include "cli_args.h"

#include <stdarg.h>
#include <string.h>

/* The option `arg` names ("--name", "--name=VALUE" or "-o"), or -1. */
static int find_option(const jft_option *opts, const char *arg, const char **inline_value)
{
    *inline_value = NULL;
    for (int k = 0; opts[k].name; k++) {
        size_t n = strlen(opts[k].name);
        if (strncmp(arg, opts[k].name, n) == 0 && arg[n] == '\0')
            return k;
        if (strncmp(arg, opts[k].name, n) == 0 && arg[n] == '=' && opts[k].takes_value) {
            *inline_value = arg + n + 1;
            return k;
        }
        if (opts[k].short_name && arg[0] == '-' && arg[1] == opts[k].short_name && arg[2] == '\0')
            return k;
    }
    return -1;
}

/* "jitframes VERB: <what is wrong>" and the verb's usage, on stderr. */
static int bad(const char *verb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "jitframes %s: ", verb);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    jft_usage_synopsis(stderr, verb);
    return JFT_ARGS_BAD;
}

int jft_parse_args(int argc, char **argv, const jft_option *opts, jft_on_option on_option, void *ctx,
                   int *n_operands)
{
    const char *verb = argv[0];
    int n = 0, options_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        /* Operands move left over what was consumed: argv[1 + n] is free. */
        if (options_done || arg[0] != '-' || strcmp(arg, "-") == 0) {
            argv[1 + n++] = argv[i];
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            options_done = 1;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
            return JFT_ARGS_HELP;
        const char *value;
        int k = find_option(opts, arg, &value);
        if (k < 0)
            return bad(verb, "unknown option %s", arg);
        if (opts[k].takes_value && !value) {
            if (i + 1 == argc)
                return bad(verb, "%s needs a value", arg);
            value = argv[++i];
        }
        if (on_option(ctx, k, value) != 0)
            return bad(verb, "%s: bad value '%s'", opts[k].name, value);
    }
    *n_operands = n;
    return JFT_ARGS_OK;
}
