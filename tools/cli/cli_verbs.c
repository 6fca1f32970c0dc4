/* The tool's verbs and their names (cli_verbs.h). */
#include "cli_verbs.h"

#include <string.h>

static const char *const names[] = {
    [JFT_VERB_CHECK] = "check",
    [JFT_VERB_DUMP] = "dump",
    [JFT_VERB_CLEAN] = "clean",
    [JFT_VERB_ENABLE] = "enable",
    [JFT_VERB_DISABLE] = "disable",
    [JFT_VERB_STATUS] = "status",
    [JFT_VERB_RECORD] = "record",
    [JFT_VERB_REGIONS] = "regions",
    [JFT_VERB_PERFMAP] = "perfmap",
    [JFT_VERB_HELP] = "help",
    [JFT_VERB_COMPLETIONS] = "completions",
};
_Static_assert(sizeof names / sizeof names[0] == JFT_N_VERBS, "a name for every verb");
_Static_assert(JFT_N_VERBS < 8 * sizeof(jft_verb_set), "a verb set holds every verb");

const char *jft_verb_name(jft_verb v)
{
    return names[v];
}

int jft_verb_find(const char *word)
{
    for (int v = 0; v < JFT_N_VERBS; v++)
        if (strcmp(names[v], word) == 0)
            return v;
    return -1;
}

const char *jft_verb_names(jft_verb_set set, char sep, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int v = 0; v < JFT_N_VERBS; v++) {
        if (!(set & JFT_VERB_BIT(v)))
            continue;
        size_t n = strlen(names[v]);
        if (len + (len > 0) + n >= cap)
            break;
        if (len > 0)
            buf[len++] = sep;
        memcpy(buf + len, names[v], n + 1);
        len += n;
    }
    return buf;
}
