/*
 * What the jitframes tool says about itself: `jitframes --help` prints every
 * section, `jitframes VERB --help` that verb's, and a usage error that
 * verb's synopsis. (`record --help` is answered by the recording script,
 * which knows its options; its section here is the overview.)
 */
#include "cli_args.h"
#include "cli_verbs.h"

#include <string.h>

typedef struct usage_section {
    jft_verb_set verbs;   /* the verbs it covers */
    const char *synopsis; /* "usage:" lines, indented alike */
    const char *text;
} usage_section;

static const usage_section sections[] = {
    {JFT_VERB_BIT(JFT_VERB_CHECK) | JFT_VERB_BIT(JFT_VERB_DUMP),
     "jitframes check [--format=FORMAT] [--json] FILE...\n"
     "jitframes dump [--format=FORMAT] [--json] FILE...\n",
     "FILE is a perf map (perf-<pid>.map), a jitdump (jit-<pid>.dump) or a GDB JIT\n"
     "symfile (an ELF64 object); - reads standard input. Only regular files are\n"
     "read; perf maps and jitdumps as streams in bounded memory, symfiles up to\n"
     "8 MiB.\n"
     "  check          validate each file; a summary line, or FILE:WHERE: problem\n"
     "  dump           print every entry or record, then the first problem if any\n"
     "  --format=F     perfmap, jitdump or symfile; default: from the content (magic\n"
     "                 numbers), then the name (jit-*.dump), else perfmap\n"
     "  --json         one JSON object per file on standard output (see tools/README.md)\n"
     "Exit status: 0 every file valid; 1 a file breaks a rule; 2 usage error, or a file\n"
     "that cannot be read or is refused; 3 valid for perf, with warnings (rules perf\n"
     "does not enforce, e.g. an unknown ELF machine in a jitdump header).\n"},
    {JFT_VERB_BIT(JFT_VERB_CLEAN),
     "jitframes clean [--older-than D] [--dry-run] [--dir DIR]... [--buildid-dir DIR]\n",
     "clean removes the perf maps, jitdumps and jitted-*.so files that processes\n"
     "which no longer exist left in /tmp and $JITFRAMES_DIR (or each --dir), owned\n"
     "by you (root: anyone), with the content their names say, that no running\n"
     "process holds, and perf's build-id cache entries of their jitted-*.so files\n"
     "($PERF_BUILDID_DIR or ~/.debug; with --dir only if --buildid-dir names it);\n"
     "kept files are listed with the reason.\n"
     "  --older-than D   only files last written more than D ago (90, 90s, 30m, 12h, 7d)\n"
     "  --dry-run        say what would be removed, remove nothing\n"
     "  --buildid-dir DIR  perf's build-id cache to clean\n"
     "Exit status: 0 done; 1 a file could not be removed; 2 usage error.\n"},
    {JFT_VERB_BIT(JFT_VERB_ENABLE) | JFT_VERB_BIT(JFT_VERB_DISABLE) | JFT_VERB_BIT(JFT_VERB_STATUS),
     "jitframes enable PID SINKS\n"
     "jitframes disable PID SINKS\n"
     "jitframes status [--json] PID\n",
     "enable, disable and status talk to a running process started with\n"
     "JITFRAMES_CONTROL=1 (or JF_CONFIG_CONTROL): PID as this side sees it (the\n"
     "process may run in its own pid, mount and, for root, network namespaces).\n"
     "Only the process's own user or root is obeyed.\n"
     "  enable         turn sinks on (SINKS as in $JITFRAMES: perfmap,jitdump,gdb,\n"
     "                 unwind, all); regions already live are written at once\n"
     "  disable        turn sinks off; files written so far stay\n"
     "  status         enabled sinks, live regions, counters and files (--json: one\n"
     "                 JSON object, see tools/README.md)\n"
     "Exit status: 0 done; 1 the process answered with an error (not your process,\n"
     "a sink could not start), printed; 2 usage error; 4 no such process, or it does\n"
     "not listen (not started with JITFRAMES_CONTROL=1), or cannot be reached.\n"},
    {JFT_VERB_BIT(JFT_VERB_RECORD),
     "jitframes record [--via auto|memory|channel] [--duration S] [--call-graph dwarf|fp]\n"
     "                 [-o DIR] [--keep] [--children] PID\n",
     "record runs perf record -p PID for S seconds (default 10; Ctrl-C ends it early)\n"
     "and leaves perf.data, perf.jit.data and flamegraph.html in DIR, a new directory\n"
     "it makes (mode 0700; an existing one is refused); what it starts runs confined\n"
     "to DIR, and copies of the process's jitdump hold at most 1 GiB. --via memory:\n"
     "it follows the regions PID publishes in its memory (needs the right to ptrace\n"
     "it; nothing switched on) and writes their jitdump in DIR. --via channel: it\n"
     "turns on what the recording needs (the perf map; with --call-graph dwarf, the\n"
     "default, the jitdump too), puts the sinks back as they were, and removes the\n"
     "files it caused outside DIR unless --keep. auto (default): memory when its\n"
     "table can be read and names something, else the channel.\n"
     "jitframes record --help: every option.\n"},
    {JFT_VERB_BIT(JFT_VERB_REGIONS) | JFT_VERB_BIT(JFT_VERB_PERFMAP),
     "jitframes regions [--json] PID\n"
     "jitframes perfmap [-o FILE] [--jitdump FILE [--follow]] PID\n",
     "regions and perfmap read the regions a process published in its memory (any\n"
     "process whose jitframes was initialised; nothing switched on in advance): you\n"
     "need the right to ptrace it. regions lists them (--json: one JSON object);\n"
     "perfmap prints a perf map of them, or creates FILE (-o; never overwritten);\n"
     "--jitdump FILE also creates a jitdump with their code bytes, read from it;\n"
     "--follow reads them every 25 ms until stdin ends, then writes all it saw\n"
     "(those removed meanwhile too): what record --via memory runs.\n"
     "Exit status: 0 done; 1 no table, not readable, or FILE not created; 2 usage.\n"},
    {JFT_VERB_BIT(JFT_VERB_HELP) | JFT_VERB_BIT(JFT_VERB_COMPLETIONS),
     "jitframes help [VERB]\n"
     "jitframes completions bash|zsh|fish\n",
     "help VERB is VERB --help; help alone, --help. completions prints a completion\n"
     "script for the shell: eval \"$(jitframes completions bash)\" in ~/.bashrc,\n"
     "source <(jitframes completions zsh) after compinit in ~/.zshrc, or\n"
     "jitframes completions fish > ~/.config/fish/completions/jitframes.fish.\n"},
};

enum { N_SECTIONS = sizeof sections / sizeof sections[0] };

static const char general_text[] = "Options may come before or after the operands; -- ends them. Every verb\n"
                                   "takes --help (or -h): its own part of this text.\n";

/* verb NULL: every section. */
static int covers(const usage_section *s, const char *verb)
{
    int v = verb ? jft_verb_find(verb) : 0;
    return !verb || (v >= 0 && (s->verbs & JFT_VERB_BIT(v)));
}

/* "jitframes VERB ..." (verb NULL: any line). */
static int line_of(const char *line, const char *verb)
{
    size_t n = verb ? strlen(verb) : 0;
    return !verb ||
           (strncmp(line, "jitframes ", 10) == 0 && strncmp(line + 10, verb, n) == 0 && line[10 + n] == ' ');
}

/* The synopsis lines of `verb`, the first after "usage: ", the others under
 * it; returns the updated `first`. */
static int print_synopsis(FILE *out, const usage_section *s, const char *verb, int first)
{
    for (const char *line = s->synopsis; *line;) {
        const char *end = strchr(line, '\n');
        if (line_of(line, verb)) {
            fprintf(out, "%s%.*s\n", first ? "usage: " : "       ", (int)(end - line), line);
            first = 0;
        }
        line = end + 1;
    }
    return first;
}

void jft_usage_synopsis(FILE *out, const char *verb)
{
    int first = 1;
    for (int i = 0; i < N_SECTIONS; i++)
        first = print_synopsis(out, &sections[i], verb, first);
    if (!verb)
        fputs("       jitframes --help | --version | -V | VERB --help\n", out);
}

void jft_usage(FILE *out, const char *verb)
{
    jft_usage_synopsis(out, verb);
    fprintf(out, "\n%s", general_text);
    for (int i = 0; i < N_SECTIONS; i++)
        if (covers(&sections[i], verb))
            fprintf(out, "\n%s", sections[i].text);
}
