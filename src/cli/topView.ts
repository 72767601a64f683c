import { redactText } from '../domain/redact.js';
import type { InspectorSnapshot, SnapshotTicket, SnapshotTopic } from '../client/index.js';

/**
 * One frame of `loom top` (behaviour.md §13.6): agents, topics, the running command with its
 * elapsed time and the waiting ones with their wait and the time left before the queue limit.
 * Pure: a snapshot (or the reason there is none) in, lines out.
 */

const BOLD = '\x1b[1m';
const DIM = '\x1b[2m';
const RED = '\x1b[31m';
const GREEN = '\x1b[32m';
const YELLOW = '\x1b[33m';
const BLUE = '\x1b[34m';
const RESET = '\x1b[0m';

/** `812ms`, `4.2s`, `2m03s` */
export function shortDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '-';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** Cut a line to `width` visible characters (escape sequences do not count). */
function fit(line: string, width: number): string {
  let visible = 0;
  let out = '';
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '\x1b') {
      const end = line.indexOf('m', i);
      out += line.slice(i, end + 1);
      i = end;
      continue;
    }
    if (visible >= width) break;
    out += line[i];
    visible++;
  }
  return out + RESET;
}

function stateText(state: unknown): string {
  const s = typeof state === 'string' ? state : JSON.stringify(state);
  return s === 'executing' ? `${BLUE}${s}${RESET}` : s === 'idle' ? `${GREEN}${s}${RESET}` : s;
}

/** `request r1` when the client named its request, else nothing. */
const requestOf = (t: SnapshotTicket): string => (t.request_id ? ` request ${t.request_id}` : '');

function waitingLine(w: SnapshotTicket, index: number, waitLimit: number | undefined): string {
  const limit = waitLimit === undefined ? '' : ` of ${shortDuration(waitLimit)}`;
  return `      ${YELLOW}#${w.position ?? index + 1} waiting${RESET} ${w.cmd}  ${BOLD}${shortDuration(w.waited_ms)}${RESET} ${DIM}(${shortDuration(w.expires_in_ms)} left${limit}) ${w.via}${requestOf(w)}${RESET}`;
}

/** `waiting 2/5` (the limit when the daemon says it). */
const waitingCount = (t: SnapshotTopic): string => `waiting ${t.waiting.length}${t.queue_limit === undefined ? '' : `/${t.queue_limit}`}`;

/** A refusal with the limit it hit: `QUEUE_FULL (limit 5 waiting)`, `QUEUE_TIMEOUT (limit 2m00s)`. */
function failureText(r: SnapshotTopic['recent'][number]): string {
  const limit = r.queue_limit !== undefined ? ` (limit ${r.queue_limit} waiting)` : r.wait_limit_ms !== undefined ? ` (limit ${shortDuration(r.wait_limit_ms)})` : '';
  return `${r.code ?? ''}${limit}`;
}

function topicLines(t: SnapshotTopic): string[] {
  const lastFail = [...t.recent].reverse().find((r) => !r.ok);
  const head = `    ${BOLD}${t.topic}${RESET} ${DIM}${t.topic_type}${RESET}  ${stateText(t.state)}  ${waitingCount(t)}` +
    (t.shell ? `  ${DIM}shell ${String(t.shell.state ?? '')}${t.shell.cwd ? ` ${t.shell.cwd}` : ''}${RESET}` : '') +
    (lastFail ? `  ${RED}last failure ${failureText(lastFail)} ${lastFail.cmd}${RESET}` : '');
  const lines = [head];
  if (t.running) lines.push(`      ${BLUE}running${RESET} ${t.running.cmd}  ${BOLD}${shortDuration(t.running.elapsed_ms)}${RESET} ${DIM}${t.running.via}${requestOf(t.running)}${RESET}`);
  t.waiting.forEach((w, i) => lines.push(waitingLine(w, i, t.wait_limit_ms)));
  return lines;
}

const plain = (line: string) => line.replace(/\x1b\[[0-9;]*m/g, '');

/** The lines of one frame, each cut to `width`; `color: false` (not a terminal) leaves out the escape codes. */
export function renderTop(snapshot: InspectorSnapshot | null, opts: { width: number; url: string; problem?: string; color?: boolean }): string[] {
  // The daemon redacts its snapshot; redacting again here keeps a secret off the screen whatever daemon answered.
  const lines = frameLines(snapshot, opts).map((l) => fit(redactText(l), opts.width));
  return opts.color === false ? lines.map(plain) : lines;
}

function frameLines(snapshot: InspectorSnapshot | null, opts: { url: string; problem?: string }): string[] {
  const lines: string[] = [];
  const title = snapshot ? `loom ${snapshot.version} · up ${shortDuration(snapshot.uptime_ms)} · ${snapshot.agents.length} agent(s) · ${opts.url}` : `loom · ${opts.url}`;
  lines.push(`${BOLD}${title}${RESET}   ${DIM}q quits${RESET}`);
  if (opts.problem) lines.push(`${RED}${opts.problem}${RESET}`);
  if (!snapshot) return lines;
  if (snapshot.agents.length === 0) lines.push('no agents registered');
  for (const a of snapshot.agents) {
    const ev = a.events ? `  inbox ${a.events.pending} pending, ${a.events.streams} stream(s)` : '';
    const caps = a.capabilities ? `  ${a.capabilities.filter((c) => c.state === 'live').length} live capabilities` : '';
    lines.push('', `${BOLD}agent ${a.agent_id}${RESET}${DIM}${ev}${caps}${RESET}`);
    for (const i of a.installs ?? []) lines.push(`    install ${i.name ?? i.install_id} ${String(i.state)} ${i.files_done ?? 0}/${i.files_total ?? '?'} files`);
    if (a.topics.length === 0) lines.push(`    ${DIM}no open topics${RESET}`);
    for (const t of a.topics) lines.push(...topicLines(t));
  }
  return lines;
}
