# zcomp.zsh OUT LINE: type LINE and a Tab into an interactive zsh (zpty) with
# jitframes' completion loaded; the matches offered go to OUT, one a line.
zmodload zsh/zpty
out=$1 line=$2
zpty z zsh -f -i
zpty -w z "autoload -Uz compinit && compinit -u -D && source <(jitframes completions zsh)"
zpty -w z "compadd() { local -a hits; builtin compadd -O hits \"\$@\"; print -rl -- \$hits >>${(q)out}; builtin compadd \"\$@\"; }"
zpty -w z "zstyle ':completion:*' completer _complete"
zpty -w z "touch ${(q)out}.ready"
for i in {1..1200}; do [[ -e $out.ready ]] && break; sleep 0.05; done
# zle reads in order: the line is killed (^E^U) and the marker made only
# after the completion has run.
zpty -w -n z "$line"$'\t\005\025'
zpty -w z "touch ${(q)out}.done"
for i in {1..1200}; do [[ -e $out.done ]] && break; sleep 0.05; done
zpty -d z
