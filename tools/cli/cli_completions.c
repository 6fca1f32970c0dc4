/*
 * `jitframes completions bash|zsh|fish`: a shell completion script, as
 * py-spy and rustup print theirs. All three are written from one table of
 * verbs (by id: their names are cli_verbs.c's), their options and operands,
 * so the shells cannot drift apart; the test (tests/tool/completions.sh)
 * loads each into its shell and checks the table against `jitframes --help`.
 */
#include "cli_args.h"
#include "cli_verbs.h"
#include "exit_status.h"

#include <stdio.h>
#include <string.h>

/* An option's argument: none, a file, a directory, free text, or one of
 * the words of `words`. */
enum arg_kind { ARG_NONE, ARG_FILE, ARG_DIR, ARG_TEXT, ARG_WORDS };

typedef struct comp_option {
    const char *name; /* "--json", or "-o" for a short option alone */
    enum arg_kind arg;
    const char *words; /* ARG_WORDS: space-separated */
} comp_option;

/* What follows the options: files, a process id, a verb, a shell, nothing. */
enum operand_kind { OP_FILES, OP_PID, OP_VERB, OP_SHELL, OP_NONE };

typedef struct comp_verb {
    jft_verb_set verbs; /* the verbs sharing these options */
    enum operand_kind operand;
    comp_option opts[9]; /* ended by a NULL name */
} comp_verb;

#define SHELLS "bash zsh fish"

/* Room for every verb's name, separated. */
enum { NAMES_CAP = 128 };

static const comp_verb verbs[] = {
    {JFT_VERB_BIT(JFT_VERB_CHECK) | JFT_VERB_BIT(JFT_VERB_DUMP),
     OP_FILES,
     {{"--format", ARG_WORDS, "perfmap jitdump symfile"}, {"--json", ARG_NONE, NULL}}},
    {JFT_VERB_BIT(JFT_VERB_CLEAN),
     OP_NONE,
     {{"--older-than", ARG_TEXT, NULL},
      {"--dry-run", ARG_NONE, NULL},
      {"--dir", ARG_DIR, NULL},
      {"--buildid-dir", ARG_DIR, NULL}}},
    {JFT_VERB_BIT(JFT_VERB_ENABLE) | JFT_VERB_BIT(JFT_VERB_DISABLE), OP_PID, {{NULL, ARG_NONE, NULL}}},
    {JFT_VERB_BIT(JFT_VERB_STATUS) | JFT_VERB_BIT(JFT_VERB_REGIONS), OP_PID, {{"--json", ARG_NONE, NULL}}},
    {JFT_VERB_BIT(JFT_VERB_RECORD),
     OP_PID,
     {{"--via", ARG_WORDS, "auto memory channel"},
      {"--duration", ARG_TEXT, NULL},
      {"--call-graph", ARG_WORDS, "dwarf fp"},
      {"--output", ARG_DIR, NULL},
      {"-o", ARG_DIR, NULL},
      {"--keep", ARG_NONE, NULL},
      {"--children", ARG_NONE, NULL},
      {"--frequency", ARG_TEXT, NULL}}},
    {JFT_VERB_BIT(JFT_VERB_PERFMAP),
     OP_PID,
     {{"--output", ARG_FILE, NULL},
      {"-o", ARG_FILE, NULL},
      {"--jitdump", ARG_FILE, NULL},
      {"--follow", ARG_NONE, NULL}}},
    {JFT_VERB_BIT(JFT_VERB_HELP), OP_VERB, {{NULL, ARG_NONE, NULL}}},
    {JFT_VERB_BIT(JFT_VERB_COMPLETIONS), OP_SHELL, {{NULL, ARG_NONE, NULL}}},
};

enum { N_VERBS = sizeof verbs / sizeof verbs[0] };

/* The words of an operand: every verb (written to names), or the shells. */
static const char *operand_words(enum operand_kind k, char names[NAMES_CAP])
{
    if (k == OP_VERB)
        return jft_verb_names(JFT_ALL_VERBS, ' ', names, NAMES_CAP);
    return k == OP_SHELL ? SHELLS : NULL;
}

/* bash: one case per verb; the word after an option taking a value is
 * that value; COMP_WORDBREAKS splits --format=x at '='. */
static void emit_bash_verb(FILE *out, const comp_verb *v)
{
    char names[NAMES_CAP];
    fprintf(out, "    %s)\n        case $prev in\n", jft_verb_names(v->verbs, '|', names, sizeof names));
    for (const comp_option *o = v->opts; o->name; o++) {
        if (o->arg == ARG_NONE)
            continue;
        fprintf(out, "        %s) ", o->name);
        if (o->arg == ARG_WORDS)
            fprintf(out, "COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;\n", o->words);
        else if (o->arg == ARG_TEXT)
            fprintf(out, "return ;;\n");
        else
            fprintf(out, "COMPREPLY=($(compgen %s -- \"$cur\")); return ;;\n",
                    o->arg == ARG_DIR ? "-d" : "-f");
    }
    fprintf(out, "        esac\n        opts='--help");
    for (const comp_option *o = v->opts; o->name; o++)
        fprintf(out, " %s", o->name);
    fprintf(out, "'\n        if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n");
    switch (v->operand) {
    case OP_FILES: fprintf(out, "        else COMPREPLY=($(compgen -f -- \"$cur\"))\n"); break;
    case OP_PID:
        fprintf(out, "        else COMPREPLY=($(compgen -W \"$(_jitframes_pids)\" -- \"$cur\"))\n");
        break;
    case OP_VERB:
    case OP_SHELL:
        fprintf(out, "        elif [ $n -eq 0 ]; then COMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n",
                operand_words(v->operand, names));
        break;
    case OP_NONE: break;
    }
    fprintf(out, "        fi ;;\n");
}

static void emit_bash(FILE *out)
{
    char all[NAMES_CAP];
    fprintf(out,
            "# bash completion for jitframes: eval \"$(jitframes completions bash)\", or save it\n"
            "# as /usr/share/bash-completion/completions/jitframes\n"
            "_jitframes_pids() { local p; for p in /proc/[0-9]*; do echo \"${p#/proc/}\"; done; }\n"
            "_jitframes() {\n"
            "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} verb= opts i n=0\n"
            "    if [[ $prev == = ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi\n"
            "    if [[ $cur == = ]]; then prev=${COMP_WORDS[COMP_CWORD-1]}; cur=; fi\n"
            "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
            "        case ${COMP_WORDS[i]} in\n"
            "        -*|=) ;;\n"
            "        *) if [ -z \"$verb\" ]; then verb=${COMP_WORDS[i]}; else n=$((n + 1)); fi ;;\n"
            "        esac\n"
            "    done\n"
            "    case $verb in\n"
            "    '') if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W '--help --version -V' -- \"$cur\"))\n"
            "        else COMPREPLY=($(compgen -W '%s' -- \"$cur\")); fi ;;\n",
            jft_verb_names(JFT_ALL_VERBS, ' ', all, sizeof all));
    for (int i = 0; i < N_VERBS; i++)
        emit_bash_verb(out, &verbs[i]);
    fprintf(out, "    esac\n}\ncomplete -F _jitframes jitframes\n");
}

/* zsh: _arguments per verb, after the verb (words shifted). */
static void emit_zsh_option(FILE *out, const comp_option *o)
{
    static const char *const actions[] = {"", "_files", "_files -/", " ", ""};
    if (o->arg == ARG_NONE)
        fprintf(out, " '%s'", o->name);
    else if (o->arg == ARG_WORDS)
        fprintf(out, " '%s%s:value:(%s)'", o->name, o->name[1] == '-' ? "=" : "+", o->words);
    else
        fprintf(out, " '%s%s:value:%s'", o->name, o->name[1] == '-' ? "=" : "+", actions[o->arg]);
}

static void emit_zsh(FILE *out)
{
    char names[NAMES_CAP];
    fprintf(out,
            "#compdef jitframes\n"
            "# zsh completion for jitframes: source <(jitframes completions zsh) after\n"
            "# compinit, or save it as _jitframes in a directory of $fpath\n"
            "_jitframes_pids() { local -a p; p=(/proc/<->(N:t)); compadd -a p; }\n"
            "_jitframes() {\n"
            "    if (( CURRENT == 2 )); then\n"
            "        if [[ $PREFIX == -* ]]; then compadd -- --help --version -V; else compadd -- %s; fi\n"
            "        return\n"
            "    fi\n"
            "    local verb=$words[2]\n"
            "    shift words\n"
            "    (( CURRENT-- ))\n"
            "    case $verb in\n",
            jft_verb_names(JFT_ALL_VERBS, ' ', names, sizeof names));
    for (int i = 0; i < N_VERBS; i++) {
        const comp_verb *v = &verbs[i];
        fprintf(out, "    %s) _arguments '--help'", jft_verb_names(v->verbs, '|', names, sizeof names));
        for (const comp_option *o = v->opts; o->name; o++)
            emit_zsh_option(out, o);
        switch (v->operand) {
        case OP_FILES: fprintf(out, " '*:file:_files'"); break;
        case OP_PID: fprintf(out, " '1:pid:_jitframes_pids'"); break;
        case OP_VERB:
        case OP_SHELL: fprintf(out, " '1:operand:(%s)'", operand_words(v->operand, names)); break;
        case OP_NONE: break;
        }
        fprintf(out, " ;;\n");
    }
    fprintf(out, "    esac\n}\n"
                 "if [ \"$funcstack[1]\" = _jitframes ]; then _jitframes \"$@\"; else compdef _jitframes "
                 "jitframes; fi\n");
}

/* fish: one `complete` line per option, conditioned on the verb. */
static void emit_fish(FILE *out)
{
    char names[NAMES_CAP];
    fprintf(out,
            "# fish completion for jitframes: jitframes completions fish | source, or save it\n"
            "# as ~/.config/fish/completions/jitframes.fish\n"
            "complete -c jitframes -f\n"
            "complete -c jitframes -n __fish_use_subcommand -a '%s'\n"
            "complete -c jitframes -n __fish_use_subcommand -l help\n"
            "complete -c jitframes -n __fish_use_subcommand -l version -s V\n",
            jft_verb_names(JFT_ALL_VERBS, ' ', names, sizeof names));
    for (int i = 0; i < N_VERBS; i++) {
        const comp_verb *v = &verbs[i];
        char cond[96];
        snprintf(cond, sizeof cond, "-n '__fish_seen_subcommand_from %s'",
                 jft_verb_names(v->verbs, ' ', names, sizeof names));
        fprintf(out, "complete -c jitframes %s -l help\n", cond);
        for (const comp_option *o = v->opts; o->name; o++) {
            fprintf(out, "complete -c jitframes %s %s %s", cond, o->name[1] == '-' ? "-l" : "-s",
                    o->name + (o->name[1] == '-' ? 2 : 1));
            if (o->arg == ARG_WORDS)
                fprintf(out, " -x -a '%s'", o->words);
            else if (o->arg == ARG_FILE)
                fprintf(out, " -r -F");
            else if (o->arg == ARG_DIR)
                fprintf(out, " -x -a '(__fish_complete_directories)'");
            else if (o->arg == ARG_TEXT)
                fprintf(out, " -x");
            fputc('\n', out);
        }
        if (v->operand == OP_FILES)
            fprintf(out, "complete -c jitframes %s -F\n", cond);
        else if (v->operand == OP_PID)
            fprintf(out, "complete -c jitframes %s -a '(__fish_complete_pids)'\n", cond);
        else if (v->operand != OP_NONE)
            fprintf(out, "complete -c jitframes %s -a '%s'\n", cond, operand_words(v->operand, names));
    }
}

int jft_completions_command(int argc, char **argv)
{
    int n;
    static const jft_option none[] = {{NULL, 0, 0}};
    int parsed = jft_parse_args(argc, argv, none, NULL, NULL, &n);
    if (parsed == JFT_ARGS_HELP)
        return jft_usage(stdout, jft_verb_name(JFT_VERB_COMPLETIONS)), JFT_EXIT_OK;
    if (parsed != JFT_ARGS_OK)
        return JFT_EXIT_USAGE;
    const char *shell = n == 1 ? argv[1] : "";
    if (strcmp(shell, "bash") == 0)
        emit_bash(stdout);
    else if (strcmp(shell, "zsh") == 0)
        emit_zsh(stdout);
    else if (strcmp(shell, "fish") == 0)
        emit_fish(stdout);
    else {
        fprintf(stderr, "jitframes completions: wants one SHELL: bash, zsh or fish\n");
        jft_usage_synopsis(stderr, jft_verb_name(JFT_VERB_COMPLETIONS));
        return JFT_EXIT_USAGE;
    }
    return fflush(stdout) == 0 ? JFT_EXIT_OK : JFT_EXIT_FAILED;
}
