import { SseParser } from '../../src/client/sse.js';
import type { FuzzInput } from './inputs.js';

/**
 * Send generated inputs to a daemon and judge every answer: never a 5xx, never
 * INTERNAL_ERROR (in /exec heads or MCP tool results), never a JSON-RPC internal error (-32603),
 * every /exec 200 is exactly head, content, done, every other answer a JSON error; the daemon stays up.
 */

/** behaviour.md §1.6 codes a command may end with (INTERNAL_ERROR is the one a fuzzer must never see). */
const DEFINED = /^(NOT_FOUND|INVALID_ARGS|INVALID_TARGET|INVALID_PATH|FORBIDDEN|CONFLICT|COMMAND_UNSUPPORTED|ENV_REQUIRED|HTTP_ERROR|EXIT_\d{1,3}|TIMEOUT|INSTALL_FAILED|BUSY)$/;

export interface FuzzReport {
  sent: number;
  exec: number;
  mcp: number;
  /** Inputs whose first send failed without an answer and whose second was answered. */
  retried: number;
  statuses: Record<string, number>;
  codes: Record<string, number>;
  findings: string[];
}

const bump = (m: Record<string, number>, k: string) => { m[k] = (m[k] ?? 0) + 1; };
const short = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}…` : s);

/** Judge one /exec answer; returns a finding or null. */
function judgeExec(status: number, text: string, report: FuzzReport): string | null {
  if (status !== 200) {
    try {
      const body = JSON.parse(text) as { error?: unknown };
      return typeof body.error === 'string' ? null : `exec ${status} without an error string: ${short(text)}`;
    } catch {
      return `exec ${status} not JSON: ${short(text)}`;
    }
  }
  const events = new SseParser().push(text);
  const names = events.map((e) => e.event);
  if (names.join(',') !== 'head,content,done') return `exec 200 with events ${names.join(',')}`;
  const head = JSON.parse(events[0].data) as { ok: boolean; code: string | null };
  const content = JSON.parse(events[1].data) as string;
  bump(report.codes, head.code ?? 'ok');
  if (head.ok) return head.code === null ? null : `ok head with code ${head.code}`;
  if (head.code === null || !DEFINED.test(head.code)) return `exec code ${head.code}: ${short(content)}`;
  const first = content.split('\n')[1] ?? '';
  return first.startsWith(`ERROR(${head.code}): `) ? null : `exec failure body does not start with ERROR(${head.code}): ${short(content)}`;
}

/** The JSON-RPC messages of an MCP answer (JSON or SSE-framed). */
function rpcMessages(text: string): unknown[] {
  const t = text.trim();
  if (t === '') return [];
  const value = t.startsWith('event:') || t.startsWith('data:') ? new SseParser().push(text).map((e) => JSON.parse(e.data) as unknown) : [JSON.parse(t) as unknown];
  return value.flatMap((v) => (Array.isArray(v) ? v : [v]));
}

/** Judge one /mcp answer; returns a finding or null. */
function judgeMcp(status: number, text: string, report: FuzzReport): string | null {
  let msgs: unknown[];
  try {
    msgs = rpcMessages(text);
  } catch {
    return status >= 400 && status < 500 ? null : `mcp ${status} not JSON: ${short(text)}`;
  }
  for (const m of msgs as Array<{ error?: { code?: number; message?: string }; result?: { content?: Array<{ text?: string }>; isError?: boolean } }>) {
    if (m.error?.code === -32603) return `mcp internal error: ${short(JSON.stringify(m))}`;
    const body = m.result?.content?.map((c) => c.text ?? '').join('') ?? '';
    const code = /ERROR\(([A-Z_0-9]+)\)/.exec(body)?.[1];
    if (m.result) bump(report.codes, m.result.isError ? `mcp:${code ?? 'error'}` : 'mcp:ok');
    if (code === 'INTERNAL_ERROR') return `mcp tool INTERNAL_ERROR: ${short(body)}`;
  }
  return null;
}

/** Send every input (`concurrency` at a time) and judge the answers; stops early if the daemon is gone. */
export async function fuzz(base: string, list: FuzzInput[], opts: { concurrency?: number; alive?: () => Promise<boolean> } = {}): Promise<FuzzReport> {
  const report: FuzzReport = { sent: 0, exec: 0, mcp: 0, retried: 0, statuses: {}, codes: {}, findings: [] };
  let next = 0;
  let dead = false;
  const send = async (input: FuzzInput): Promise<{ status: number; text: string }> => {
    const res = await fetch(`${base}/${input.kind}`, { method: 'POST', headers: input.headers, body: input.body });
    return { status: res.status, text: await res.text() };
  };
  const worker = async () => {
    while (!dead && next < list.length) {
      const input = list[next++];
      let answer: { status: number; text: string };
      try {
        answer = await send(input);
      } catch (first) {
        // A pooled keep-alive socket the daemon closed just as the client reused it fails without an
        // answer (a client-side race that a loaded machine makes likely): the same input is sent once
        // more; an input that really breaks the connection fails again and is reported.
        try {
          answer = await send(input);
          report.retried++;
        } catch (err) {
          const cause = (err as { cause?: { code?: string; message?: string } }).cause ?? (first as { cause?: { code?: string; message?: string } }).cause;
          report.findings.push(`${input.kind} request failed twice (${(err as Error).message}${cause ? `: ${cause.code ?? cause.message}` : ''}): ${short(input.body)}`);
          if (opts.alive && !(await opts.alive())) dead = true;
          continue;
        }
      }
      const { status, text } = answer;
      report.sent++;
      report[input.kind]++;
      bump(report.statuses, `${input.kind} ${status}`);
      const finding = status >= 500 ? `${input.kind} ${status}: ${short(text)}` : input.kind === 'exec' ? judgeExec(status, text, report) : judgeMcp(status, text, report);
      if (finding) report.findings.push(`${finding}\n  input: ${short(input.body)}`);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker));
  if (opts.alive && !(await opts.alive())) report.findings.push('the daemon is not answering /health after the run');
  return report;
}
