import type { Command, Option } from 'commander';
import { client, examples, globals, guard, UsageError, type CliParts, type GlobalOpts } from './common.js';
import { COMPLETION_SCRIPTS, COMPLETION_SHELLS, isCompletionShell } from './completionScripts.js';

/**
 * `loom completion bash|zsh|fish` prints a script that asks `loom __complete <words…>` for the
 * candidates of the word under the cursor (the way gh and other cobra-built CLIs do): the command
 * tree below is walked at every TAB, so the script never goes stale when commands change, and agents
 * and topics come from the running daemon.
 */

/** One candidate: the word and a short description (shells that show one do). */
export type Candidate = [word: string, description: string];

/** Keep the value of `--port`, `--agent` or `--wire` (the daemon and agent the candidates come from). */
function keep(opts: GlobalOpts, flag: string | undefined, value: string): void {
  if (flag === '--port') opts.port = value;
  else if (flag === '--agent') opts.agent = value;
  else if (flag === '--wire') opts.wire = value;
}

/** Where the words typed so far leave the cursor. */
interface Position {
  cmd: Command;
  /** Positional words given to `cmd` so far. */
  args: string[];
  /** The option whose value is being typed, when the previous word asks for one. */
  valueOf: Option | null;
  /** The topic word, when the line is `loom <topic> …` rather than a subcommand. */
  topic: string | null;
  opts: GlobalOpts;
}

/** The options `cmd` accepts: its own and, shown in every help, the program's. */
function optionsOf(cmd: Command, program: Command): readonly Option[] {
  return cmd === program ? program.options : [...cmd.options, ...program.options];
}

/** The subcommands help lists (hidden ones not; commander's own `help` too). */
const visible = (cmd: Command) => cmd.createHelp().visibleCommands(cmd);

/** Walk the finished words (all but the one under the cursor) down the command tree. */
function walk(program: Command, words: string[]): Position {
  const at: Position = { cmd: program, args: [], valueOf: null, topic: null, opts: {} };
  for (const w of words) {
    if (at.valueOf) {
      keep(at.opts, at.valueOf.long, w);
      at.valueOf = null;
      continue;
    }
    if (at.topic !== null) {
      at.args.push(w);
      continue;
    }
    if (w.startsWith('-')) {
      const eq = w.indexOf('=');
      const flag = eq < 0 ? w : w.slice(0, eq);
      const opt = optionsOf(at.cmd, program).find((o) => o.long === flag || o.short === flag);
      if (eq >= 0) keep(at.opts, flag, w.slice(eq + 1));
      else if (opt && (opt.required || opt.optional)) at.valueOf = opt;
      continue;
    }
    const sub = at.args.length === 0 ? at.cmd.commands.find((c) => c.name() === w || c.aliases().includes(w)) : undefined;
    if (sub) at.cmd = sub;
    else if (at.cmd === program) at.topic = w;
    else at.args.push(w);
  }
  return at;
}

/** Agents (or users) of the running daemon; none when it does not answer. */
async function agents(opts: GlobalOpts): Promise<Candidate[]> {
  const r = await client(opts, false).identities().catch(() => null);
  return r?.status === 200 ? r.list.map((a): Candidate => [a.id, 'agent']) : [];
}

/** Open topics of the agent the line names (else the CLI's agent); none when the daemon does not answer. */
async function topics(opts: GlobalOpts): Promise<Candidate[]> {
  const c = client(opts);
  const r = await c.listSessions(c.agentId).catch(() => null);
  if (r?.status !== 200) return [];
  const names = r.body.sessions.map((s) => String((s as { topic?: unknown }).topic ?? '')).filter(Boolean);
  return [...new Set(names)].map((t): Candidate => [t, 'topic']);
}

/** What an argument of a subcommand may be, from its name in the tree (`agent use <id>` → agents). */
async function argumentCandidates(at: Position): Promise<Candidate[]> {
  const arg = at.cmd.registeredArguments[at.args.length];
  const name = arg?.name();
  const parent = at.cmd.parent?.name();
  if (name === 'shell') return COMPLETION_SHELLS.map((s): Candidate => [s, 'shell']);
  // `agent add <id>` names a new agent: nothing to offer.
  if ((name === 'id' && parent === 'agent' && at.cmd.name() !== 'add') || name === 'agent') return agents(at.opts);
  if (name === 'topic') return topics(at.opts);
  // Files, sources, trace ids, free text: the shell's own completion (the scripts fall back to files).
  return [];
}

/** The candidates for the word under the cursor, given the words before it (the line after `loom`). */
export async function complete(program: Command, words: string[]): Promise<Candidate[]> {
  const current = words.length > 0 ? words[words.length - 1] : '';
  const at = walk(program, words.slice(0, -1));
  let all: Candidate[];
  if (at.valueOf) {
    const flag = at.valueOf.long;
    if (flag === '--agent') all = await agents(at.opts);
    else if (flag === '--topic') all = await topics(at.opts);
    else all = (at.valueOf.argChoices ?? (flag === '--wire' ? ['agent', 'user'] : [])).map((v): Candidate => [v, at.valueOf?.description.split(' ')[0] ?? '']);
  } else if (at.topic !== null) {
    // After the topic comes a slash command: the shell offers nothing rather than file names.
    all = at.args.length === 0 && current === '' ? [['/help', 'the commands of this topic']] : [];
  } else if (current.startsWith('-')) {
    all = optionsOf(at.cmd, program).filter((o) => o.long && !o.hidden).map((o): Candidate => [o.long as string, o.description]);
  } else if (visible(at.cmd).length > 0 && at.args.length === 0) {
    all = visible(at.cmd).map((c): Candidate => [c.name(), c.description().split('\n')[0]]);
    if (at.cmd === program) all.push(...(await topics(at.opts)));
  } else {
    all = await argumentCandidates(at);
  }
  return all.filter(([w]) => w.startsWith(current));
}

/** `loom __complete <words…>` (hidden): one `word<TAB>description` line per candidate; never fails. */
export async function printCompletions(program: Command, words: string[]): Promise<void> {
  let found: Candidate[] = [];
  try {
    found = await complete(program, words);
  } catch {
    // A completion that fails offers nothing: a TAB must never print an error into the command line.
  }
  process.stdout.write(found.map(([w, d]) => `${w}\t${d.replace(/\s+/g, ' ')}\n`).join(''));
}

/** `loom completion bash|zsh|fish` (and the hidden `loom __complete`, which main.ts routes). */
export function completionCli({ program }: CliParts): void {
  examples(program.command('completion')
    .description('Print the shell completion script for bash, zsh or fish (subcommands, options, agents and topics)')
    .argument('<shell>', 'bash, zsh or fish'), [
    'eval "$(loom completion bash)"            # in ~/.bashrc',
    'loom completion zsh > "${fpath[1]}/_loom"  # or: source <(loom completion zsh) in ~/.zshrc',
    'loom completion fish > ~/.config/fish/completions/loom.fish',
  ]).action((shell: string) => guard(globals(program), async () => {
    if (!isCompletionShell(shell)) throw new UsageError(`loom: unknown shell '${shell}' (use bash, zsh or fish)`);
    process.stdout.write(COMPLETION_SCRIPTS[shell]);
    return 0;
  }));
}
