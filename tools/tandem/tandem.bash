# bash completion for tandem(8). Installed as share/bash-completion/completions/tandem; needs
# nothing from the bash-completion package. Node names come from the local tandemd
# (`tandem --json status`), when it answers.

_tandem_nodes() {
  tandem --json status 2>/dev/null | sed -n 's/^ *"name": "\([^"]*\)",\{0,1\}$/\1/p'
}

# _tandem_offer WORDS: the words that start with the current one.
_tandem_offer() {
  mapfile -t COMPREPLY < <(compgen -W "$1" -- "${COMP_WORDS[COMP_CWORD]}")
}

_tandem() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=""
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  # The command path so far, without options and their values.
  local path=() i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    case $w in
      --lifetime | --since | --interval | --ipc-name | --type | --address | --timeout | --command | \
        --set)
        ((i++)) ;;
      -*) ;;
      *) path+=("$w") ;;
    esac
  done
  case $prev in
    --lifetime) _tandem_offer "30s 5m 30m 1h 4h 24h"; return ;;
    --since) _tandem_offer "10m 1h 24h"; return ;;
    --interval) _tandem_offer "500ms 1s 2s 5s"; return ;;
    --type) _tandem_offer "tcp http https udp dns smtp exec none"; return ;;
    --ipc-name | --address | --timeout | --command | --set) COMPREPLY=(); return ;;
  esac
  local opts="--json --help"
  case "${path[*]}" in
    "") _tandem_offer "status explain history resource node maintenance real ipvs sync config
                       keygen check $opts" ;;
    resource) _tandem_offer "move clear $opts" ;;
    node) _tandem_offer "standby online $opts" ;;
    maintenance) _tandem_offer "on off $opts" ;;
    real) _tandem_offer "drain enable list $opts" ;;
    "real drain") _tandem_offer "--wait --timeout --ipc-name $opts" ;;
    ipvs) _tandem_offer "show $opts" ;;
    sync) _tandem_offer "status $opts" ;;
    config) _tandem_offer "verify diff reload show import $opts" ;;
    "config import")
      if [[ $prev == --from ]]; then
        _tandem_offer "keepalived ldirectord"
      else
        mapfile -t COMPREPLY < <(compgen -f -- "$cur"; compgen -W "--from --output --config-id --key-file $opts" -- "$cur")
      fi ;;
    check) _tandem_offer "run $opts" ;;
    "resource move" | "node standby") _tandem_offer "$(_tandem_nodes) --lifetime --ipc-name $opts" ;;
    "node online") _tandem_offer "$(_tandem_nodes) --ipc-name $opts" ;;
    "config verify") mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
    keygen) mapfile -t COMPREPLY < <(compgen -f -- "$cur"; compgen -W "--force $opts" -- "$cur") ;;
    history) _tandem_offer "--since --ipc-name $opts" ;;
    status) _tandem_offer "--watch --interval --ipc-name $opts" ;;
    "check run") _tandem_offer "--type --address --timeout --command --set $opts" ;;
    *) _tandem_offer "--ipc-name $opts" ;;
  esac
}
complete -F _tandem tandem
