# zsh_complete.zsh OUT LINE: type LINE and a Tab into an interactive zsh (zpty) with
# jitframes' completion loaded; the matches offered go to OUT, one a line.
zmodload zsh/zpty
out=$1 line=$2
zpty z zsh -f -i
zpty -w z "autoload -Uz compinit && compinit -u -D && source <(jitframes completions zsh)"
zpty -w z "compadd() { local -a hits; builtin compadd -O hits \"\$@\"; print -rl -- \$hits >>${(q)out}; builtin compadd \"\$@\"; }"
zpty -w z "zstyle ':completion:*' completer _complete"
zpty -w z "touch ${(q)out}.ready"
for i in {1..1200}; do [[ -e $out.ready ]] && break; sleep 0.05; done
# The Tab alone, and nothing more typed until its matches are out: input
# pending while zle completes can cut the completion short (a CI run got
# no match once in a while). Then the line is killed (^E^U).
zpty -w -n z "$line"$'\t'
for i in {1..1200}; do [[ -s $out ]] && break; sleep 0.05; done
zpty -w -n z $'\005\025'
zpty -w z "touch ${(q)out}.done"
for i in {1..1200}; do [[ -e $out.done ]] && break; sleep 0.05; done
zpty -d z
