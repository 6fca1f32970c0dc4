/*
 * The tool's verbs: the one list of their names, in the order the tool
 * lists them. The dispatch (jitframes.c), the usage text (cli_usage.c) and
 * the completion scripts (cli_completions.c) refer to a verb by its id, so
 * a verb is named here and nowhere else.
 */
#ifndef JFT_CLI_VERBS_H
#define JFT_CLI_VERBS_H

#include <stddef.h>

typedef enum jft_verb {
    JFT_VERB_CHECK,
    JFT_VERB_DUMP,
    JFT_VERB_CLEAN,
    JFT_VERB_ENABLE,
    JFT_VERB_DISABLE,
    JFT_VERB_STATUS,
    JFT_VERB_RECORD,
    JFT_VERB_REGIONS,
    JFT_VERB_PERFMAP,
    JFT_VERB_HELP,
    JFT_VERB_COMPLETIONS,
    JFT_N_VERBS
} jft_verb;

/* A set of verbs (those a usage section or a completion case covers). */
typedef unsigned jft_verb_set;
#define JFT_VERB_BIT(v) (1u << (v))
#define JFT_ALL_VERBS (JFT_VERB_BIT(JFT_N_VERBS) - 1u)

/* The name of verb `v` ("check"). */
const char *jft_verb_name(jft_verb v);

/* The verb named `word`, or -1 if none is. */
int jft_verb_find(const char *word);

/* The names of the verbs in `set`, in the list's order, joined by `sep`,
 * written to buf (cap bytes, cut short if too small). Returns buf. */
const char *jft_verb_names(jft_verb_set set, char sep, char *buf, size_t cap);

#endif
