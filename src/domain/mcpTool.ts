import { contentBody } from './output.js';
import type { ExecOutput, RefusalReason } from './ticket.js';
import { parseTopic, type TopicRef } from './topic.js';

/** spec §4.8: the one tool, named after the service (behaviour.md §10.1). */
export const TOOL_NAME = 'loom';
/** behaviour.md §10.1: the tool's title. */
export const TOOL_TITLE = 'Loom';

/** behaviour.md §10.1: property description of `topic` (exact text). */
export const TOPIC_DESCRIPTION =
  'Session to use: main (or any name), app:NAME, app:NAME:CONFIG, bash:NAME, or a hub: app, tool, bash, event, system, agent.';

/** behaviour.md §10.1: property description of `cmd` (exact text). */
export const CMD_DESCRIPTION =
  'One slash command, e.g. /help, /open ./notes.md, /act.search --q "rust", /exec ls -la. Lines after the first are the command\'s body.';

/** behaviour.md §10.1: the tool description that teaches an agent how to start (exact text). */
export const TOOL_DESCRIPTION = [
  'Run one Loom command in a topic and get its text result. Loom is your local workspace runtime:',
  'you read Markdown documents, call the actions they declare (HTTP calls or local commands), edit',
  'files, run shell commands and read your event inbox — all through slash commands.',
  '',
  'topic: the session to use. Each topic keeps its own open document, history, variables and shell.',
  '  main, notes, …        free tabs',
  '  app:NAME[:CONFIG]     an installed app; CONFIG keeps a separate set of settings',
  '  bash:NAME             a persistent shell: cwd and exports survive between /exec calls',
  '  app tool bash event system agent   hubs (overview pages; event = your inbox)',
  "cmd: one slash command. Text after the first line is the command's body (used by /write,",
  '  /append, /replace, /set and multi-line /exec scripts).',
  '',
  'Start with /help. Common commands:',
  '  /open <file|folder|URL|app:NAME|@shortcut|#anchor>   /back   /info',
  '  /act.<id> --help   then   /act.<id> value --field value',
  '  /ls [path]   /edit <file>   /write <file> + body   /replace <file> --old "text" + body',
  '  /exec <shell command>          (do not wrap the command in quotes)',
  '  /set $NAME = "value"   /events   /events.read <id>   /events.ack <id>',
  '',
  'Results start with a status line, then ---, then content; follow the "next:" hints.',
  'Failures start with ERROR(CODE): message and may end with a Recovery: line.',
  'A topic runs one command at a time: ERROR(BUSY) means retry shortly or use another topic.',
].join('\n');

/** What a runner reports for one command: success, the canonical topic and the body without `re:`. */
export interface ToolOutcome {
  ok: boolean;
  topic: string;
  body: string;
  /** The command's error code, when known (used only to repair a failure body without a prefix). */
  code?: string | null;
}

/**
 * Runs one validated command (topic parsed, cmd trimmed and starting with `/`). The daemon runs it
 * through the system facade; `loom mcp` forwards it to POST /exec. Must not throw.
 */
export type ToolRunner = (ref: TopicRef, cmd: string) => Promise<ToolOutcome>;

/** The `tools/call` result of spec §4.8. */
export interface ToolCallResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  isError: boolean;
}

/** Escape `&`, `"`, `<`, `>` as XML entities (behaviour.md §10.2). */
export function xmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The envelope of behaviour.md §10.2: `<loom topic="…">\n<body>\n</loom>`. */
export function envelope(topic: string, body: string): string {
  return `<loom topic="${xmlEscape(topic)}">\n${body}\n</loom>`;
}

/** behaviour.md §10.2: the BUSY body (topic executing, from /exec or /mcp). */
export function busyText(topic: string): string {
  return `ERROR(BUSY): Topic ${topic} is executing another command. Retry shortly.`;
}

/**
 * behaviour.md §10.2: failures always start with `ERROR(<CODE>): `; a failure body that does not
 * (a bug somewhere below) is prefixed rather than shown bare.
 */
export function failureBody(body: string, code: string | null): string {
  return /^ERROR\([A-Z0-9_]+\): /.test(body) ? body : `ERROR(${code ?? 'INTERNAL_ERROR'}): ${body}`;
}

function result(topic: string, ok: boolean, body: string): ToolCallResult {
  return { content: [{ type: 'text', text: envelope(topic, body) }], isError: !ok };
}

/** A finished command as the tool reports it: the /exec output without its `re:` line (behaviour.md §10.2). */
export function outputOutcome(output: ExecOutput): ToolOutcome {
  return { ok: output.head.ok, topic: output.head.topic, body: contentBody(output.content), code: output.head.code };
}

/** A command the topic refused (behaviour.md §10.2: BUSY at once, never queued). */
export function refusedOutcome(topic: string, reason: RefusalReason): ToolOutcome {
  return { ok: false, topic, body: reason === 'BUSY' ? busyText(topic) : `ERROR(INTERNAL_ERROR): refused: ${reason}`, code: reason };
}

/** The `tools/call` result of a runner's outcome (behaviour.md §10.2): what POST /mcp sends and a trace records. */
export function outcomeResult(out: ToolOutcome): ToolCallResult {
  return result(out.topic, out.ok, out.ok ? out.body : failureBody(out.body, out.code ?? null));
}

/**
 * One `tools/call` of the `loom` tool (spec §4.8, behaviour.md §10.2): validate topic and cmd,
 * run the command, wrap the outcome in the envelope. Shared by POST /mcp and `loom mcp`; it lives in
 * domain because it is pure and both the daemon and the CLI (which may not import server layers) need it.
 */
export async function callTool(args: { topic: string; cmd: string }, run: ToolRunner): Promise<ToolCallResult> {
  const ref = parseTopic(args.topic);
  if (!ref) return result(args.topic, false, `ERROR(INVALID_TARGET): Invalid topic: ${args.topic}`);
  // Only the header is trimmed (behaviour.md §2.1): a body keeps its trailing newline.
  const cmd = args.cmd.trimStart();
  if (!cmd.startsWith('/')) return result(ref.topic, false, 'ERROR(INVALID_ARGS): Command must start with /');
  return outcomeResult(await run(ref, cmd));
}
