import { CliFailure, UsageError, agentFailure, cliAgent, client, homeDir, httpFailure, print, type GlobalOpts } from './common.js';

/** Read the whole of stdin as UTF-8 (`loom <topic> -`). */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('loom: reading the command from stdin (end it with Ctrl-D)\n');
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** True when `path` is `dir` or inside it, compared segment-wise. */
const inside = (path: string, dir: string) => path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

/**
 * Undo the shell's `~` expansion in words of an unquoted command (behaviour.md §2.13: `loom main
 * /open ~/a.md` works unquoted). `~` means the agent home to Loom, but the shell has already turned
 * it into the OS user's home; a word that is that home or below it is written back as `~…`, unless
 * the path lies inside the agent's workspace (home or allowed paths), where it already works.
 */
export async function untilde(opts: GlobalOpts, words: string[]): Promise<string[]> {
  const home = homeDir();
  if (!home || home === '/' || !words.some((w) => inside(w, home))) return words;
  const agents = await client(opts, false).identities();
  const me = agents.list.find((a) => a.id === cliAgent(opts));
  // An unknown agent fails below with its own message; leave the words as typed.
  if (!me) return words;
  const workspace = [me.home, ...me.allowedPaths];
  return words.map((w) => (inside(w, home) && !workspace.some((d) => inside(w, d)) ? `~${w.slice(home.length)}` : w));
}

/** A word as one value for Loom's argument tokenizer (behaviour.md §5.2) and /set: `"…"` with `\\` and `"` escaped. */
export function quoteWord(w: string): string {
  return w !== '' && !/[\s"'\\]/.test(w) ? w : `"${w.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * Join the words after the topic with single spaces, keeping each word one value: the shell has
 * already removed the quotes of `loom main /act.add "Buy milk"`, so a word that holds spaces or
 * quotes is quoted again. `/exec` is the exception: its words are shell text, joined as they are
 * (`loom main /exec 'ls -la | wc -l'` runs the pipeline).
 */
export function joinWords(words: string[]): string {
  if (/^\s*\/exec(\s|$)/i.test(words[0])) return words.join(' ');
  return [words[0], ...words.slice(1).map(quoteWord)].join(' ');
}

/**
 * `loom [options] <topic> <cmd…>` (behaviour.md §2.13): the words after the topic are joined with
 * single spaces; `-` reads the whole command, body included, from stdin.
 */
export async function execForm(opts: GlobalOpts, topic: string, words: string[]): Promise<number> {
  if (words.length === 0) throw new UsageError(`loom: no command for topic '${topic}'; e.g.  loom ${topic} /help   (loom --help lists the CLI commands)`);
  const cmd = words.length === 1 && words[0] === '-' ? await readStdin() : joinWords(await untilde(opts, words));
  if (cmd.trim() === '') throw new UsageError('loom: the command is empty; e.g.  echo /help | loom main -');
  if (!cmd.trimStart().startsWith('/')) throw new UsageError(`loom: a command starts with /, e.g.  loom ${topic} /help`);
  return execOnce(opts, topic, cmd);
}

/** A queue refusal's body (429 QUEUE_FULL, 504 QUEUE_TIMEOUT): an error code and its message. */
function isRefusal(e: { error: string; message?: string } | undefined): e is { error: string; message: string } {
  return e !== undefined && /^[A-Z][A-Z0-9_]+$/.test(e.error) && typeof e.message === 'string';
}

/**
 * A queue refusal printed like a failed command (`ERROR(QUEUE_FULL): Topic q already has 5 commands
 * waiting.`), or `{error, code, message}` with --json; exit 1 as any failed command.
 */
function printRefusal(opts: GlobalOpts, e: { error: string; message: string }): number {
  const body = `ERROR(${e.error}): ${e.message}`;
  process.stderr.write(opts.json ? `${JSON.stringify({ error: e.message, code: e.error, message: body }, null, 2)}\n` : `${body}\n`);
  return 1;
}

/**
 * One /exec call (behaviour.md §2.13): the content without its `re:` line on stdout when ok (exit
 * 0); when not, the content with its `ERROR(…)` line on stderr (exit 1). `--json` prints the parsed
 * `{head, content, done}`, or `{error, code, message}` on stderr. Never registers the agent.
 * `o.requestId` is sent as the command's request id; `o.onAnswer` runs once the answer is in,
 * before anything is printed (`loom install` ends its progress display there).
 */
export async function execOnce(opts: GlobalOpts, topic: string, cmd: string, o: { requestId?: string; onAnswer?: () => void; recovery?: (code: string | null) => Promise<string | null> } = {}): Promise<number> {
  const c = client(opts);
  const out = await c.exec(topic, cmd, o.requestId);
  o.onAnswer?.();
  if (out.status === 401) throw agentFailure(cliAgent(opts), c.wire);
  if (out.status !== 200 && isRefusal(out.error)) return printRefusal(opts, out.error);
  if (out.status !== 200) throw httpFailure(out.status, out.error);
  if (out.incomplete || !out.head) throw new CliFailure({ error: "the daemon's answer was cut off", code: 'STREAM_INCOMPLETE' });
  let body = out.body ?? '';
  if (!out.head.ok && o.recovery) {
    // A way forward only the CLI knows (the shell's folder, say), after the daemon's own lines.
    const line = await o.recovery(out.head.code ?? null);
    if (line !== null) body = `${body}\nRecovery: ${line}`;
  }
  if (out.head.ok) {
    print(opts, { head: out.head, content: out.content, done: out.done }, body);
    return 0;
  }
  if (opts.json) {
    const first = body.split('\n')[0].replace(/^ERROR\([A-Z0-9_]+\): /, '');
    process.stderr.write(JSON.stringify({ error: first, code: out.head.code, message: body }, null, 2) + '\n');
  } else {
    process.stderr.write(body + '\n');
  }
  return 1;
}
