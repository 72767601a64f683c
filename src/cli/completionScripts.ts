/**
 * The completion scripts of `loom completion <shell>`. Each asks `loom __complete <words…>` (the
 * words after `loom`, the one under the cursor last, possibly empty) and reads one
 * `word<TAB>description` line per candidate; with none, the shell completes file names.
 */

/** The shells `loom completion` writes a script for. */
export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

export const isCompletionShell = (s: string): s is CompletionShell => (COMPLETION_SHELLS as readonly string[]).includes(s);

// Bash splits words at ':' and '=' (COMP_WORDBREAKS), which would cut `bash:dev` or `app:notes`; the
// line is split on blanks here instead, and the part before the last ':' trimmed from candidates.
const BASH = `# loom completion for bash. Load it with:  eval "$(loom completion bash)"
# or save it as ~/.local/share/bash-completion/completions/loom
_loom_complete() {
  local line="\${COMP_LINE:0:COMP_POINT}" IFS=$' \\t\\n'
  local -a words
  read -r -a words <<< "$line"
  [[ "$line" =~ [[:space:]]$ ]] && words+=("")
  local cur="\${words[\${#words[@]}-1]}" out c
  out=$(command loom __complete "\${words[@]:1}" 2>/dev/null) || return 0
  COMPREPLY=()
  local IFS=$'\\n'
  for c in $out; do
    c="\${c%%$'\\t'*}"
    [[ "$cur" == *:* && "$c" == *:* ]] && c="\${c#"\${cur%:*}:"}"
    COMPREPLY+=("$c")
  done
  return 0
}
complete -o default -o bashdefault -F _loom_complete loom
`;

const ZSH = `#compdef loom
# loom completion for zsh. Load it with:  source <(loom completion zsh)
# or save it as _loom in a folder of $fpath
_loom() {
  local -a lines candidates
  local l
  lines=("\${(@f)$(command loom __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  for l in "\${lines[@]}"; do
    [[ -z "$l" ]] && continue
    candidates+=("\${\${l%%$'\\t'*}//:/\\\\:}:\${l#*$'\\t'}")
  done
  if (( \${#candidates} )); then
    _describe -t loom 'loom' candidates
  else
    _files
  fi
}
if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then
  _loom "$@"
else
  compdef _loom loom
fi
`;

const FISH = `# loom completion for fish. Save it as ~/.config/fish/completions/loom.fish
# or load it with:  loom completion fish | source
function __loom_complete
    set -l words (commandline -opc) (commandline -ct)
    set -l out (command loom __complete $words[2..-1] 2>/dev/null)
    if test (count $out) -eq 0
        __fish_complete_path (commandline -ct)
    else
        printf '%s\\n' $out
    end
end
complete -c loom -f -a '(__loom_complete)'
`;

/** The script of each shell. */
export const COMPLETION_SCRIPTS: Record<CompletionShell, string> = { bash: BASH, zsh: ZSH, fish: FISH };
