import { LoomClient, type ExecOutcome } from '../../src/client/index.js';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';

/**
 * Shared helpers of the hostile suites: a black-box daemon, /exec and /mcp calls that
 * report what came back, and a liveness check that every hostile test ends with.
 */

/** The names that reach a plain object's prototype. */
export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'] as const;

/** The prototype names that are legal agent ids and topic segments (behaviour.md §1.2: no leading `_`). */
export const LEGAL_PROTO_IDS = PROTO_KEYS.filter((k) => /^[A-Za-z0-9]/.test(k));

/** Daemons started by a suite, killed in afterAll even when set-up failed half-way. */
export class Daemons {
  private readonly list: RunningDaemon[] = [];
  async start(opts: Parameters<typeof startDaemon>[0] = {}): Promise<RunningDaemon> {
    const d = await startDaemon(opts);
    this.list.push(d);
    return d;
  }
  async killAll(): Promise<void> {
    for (const d of this.list.splice(0)) await d.kill();
  }
}

/** One /exec: status, ok, code and the body after the `re:` line. */
export async function exec(base: string, agent: string, topic: string, cmd: string): Promise<ExecOutcome> {
  return new LoomClient(base, agent).exec(topic, cmd);
}

/** One MCP tools/call over stateless Streamable HTTP: the HTTP status and the JSON-RPC answer. */
export async function mcpCall(base: string, agent: string | undefined, args: unknown): Promise<{ status: number; json: unknown; text: string }> {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...(agent ? { 'X-Agent-Id': agent } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'loom', arguments: args } }),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // SSE-framed answer: the JSON is on the data line.
    const m = /^data: (.*)$/m.exec(text);
    json = m ? JSON.parse(m[1]) : undefined;
  }
  return { status: res.status, json, text };
}

/** The text of an MCP tool result (the envelope body), or undefined for a JSON-RPC error. */
export function toolText(json: unknown): { text: string; isError: boolean } | undefined {
  const r = (json as { result?: { content?: Array<{ text: string }>; isError?: boolean } }).result;
  if (!r?.content) return undefined;
  return { text: r.content.map((c) => c.text).join(''), isError: r.isError === true };
}

/** The daemon still answers /health with 200 and its process has not exited. */
export async function alive(d: RunningDaemon): Promise<boolean> {
  if (d.proc.exitCode !== null || d.proc.signalCode !== null) return false;
  try {
    return (await fetch(`${d.base}/health`)).status === 200;
  } catch {
    return false;
  }
}

/** JSON request helper (status and parsed body). */
export async function json(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(base + path, { method, headers: { 'Content-Type': 'application/json', ...headers }, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try { parsed = JSON.parse(text) as Record<string, unknown>; } catch { parsed = { raw: text }; }
  return { status: res.status, body: parsed };
}
