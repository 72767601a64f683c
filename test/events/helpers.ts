import { request } from 'node:http';
import { SseParser, type SseEvent } from '../../src/client/sse.js';
import type { Clock } from '../../src/domain/ports.js';
import { call } from '../helpers/app.js';
import type { WireJson } from '../helpers/json.js';

/** A clock whose timers fire only when the test advances it (architecture.md: time is injected). */
export class ManualClock implements Clock {
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();
  constructor(public t = Date.parse('2025-06-01T10:00:00.000Z')) {}
  now(): number { return this.t; }
  setTimeout(fn: (...args: unknown[]) => void, ms: number): unknown {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + ms, fn: () => fn() });
    return id;
  }
  clearTimeout(handle: unknown): void { this.timers.delete(handle as number); }
  /** Move time forward, firing due timers in order (timers set while firing included). */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, x]) => x.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
    }
    this.t = end;
  }
  pending(): number { return this.timers.size; }
}

/** An open GET /events/stream read through node:http, with helpers to await events and the end. */
export class StreamReader {
  readonly events: SseEvent[] = [];
  status = 0;
  headers: Record<string, string | string[] | undefined> = {};
  body = '';
  ended = false;
  private waiters: Array<() => void> = [];
  private destroy: () => void = () => undefined;

  static open(port: number, agentId?: string): Promise<StreamReader> {
    const r = new StreamReader();
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/events/stream', headers: { Accept: 'text/event-stream', ...(agentId !== undefined ? { 'X-Agent-Id': agentId } : {}) } }, (res) => {
        r.status = res.statusCode ?? 0;
        r.headers = res.headers;
        const parser = new SseParser();
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          r.body += c;
          r.events.push(...parser.push(c));
          r.wake();
        });
        const finish = () => { r.ended = true; r.wake(); };
        res.on('end', finish);
        res.on('close', finish);
        resolve(r);
      });
      r.destroy = () => req.destroy();
      req.on('error', (e) => { if (r.status === 0) reject(e); else { r.ended = true; r.wake(); } });
      req.end();
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Resolve when `pred` holds (checked on every chunk and at the end). */
  async until(pred: () => boolean, what = 'condition'): Promise<void> {
    while (!pred()) {
      if (this.ended) throw new Error(`stream ended before ${what}; got ${JSON.stringify(this.events)}`);
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  /** Events named `name`, data parsed. */
  named(name: string): Array<Record<string, unknown>> {
    return this.events.filter((e) => e.event === name).map((e) => JSON.parse(e.data) as Record<string, unknown>);
  }

  /** Wait until `n` events named `name` arrived. */
  async count(name: string, n: number): Promise<Array<Record<string, unknown>>> {
    await this.until(() => this.named(name).length >= n, `${n} × ${name}`);
    return this.named(name);
  }

  async waitEnd(): Promise<void> {
    while (!this.ended) await new Promise<void>((r) => this.waiters.push(r));
  }

  close(): void {
    this.destroy();
  }
}

/** Register an agent and return its webhook URL and token. */
export async function agentWithWebhook(base: string, id: string): Promise<{ url: string; token: string; path: string }> {
  const r = await call(base, 'POST', '/agents', { body: { agent_id: id, webhook: true } });
  const url = String(r.body.webhook_url);
  const token = url.slice(url.lastIndexOf('/') + 1);
  return { url, token, path: `/webhook/${token}` };
}

/** POST a text (or raw bytes) to a webhook path; the body is sent exactly as given. */
export async function postWebhook(base: string, path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<{ status: number; body: WireJson; headers: Headers }> {
  const res = await fetch(base + path, { method: 'POST', headers: { 'Content-Type': 'text/plain', ...headers }, body: typeof body === 'string' ? body : new Uint8Array(body) });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* not JSON: keep the text */ }
  return { status: res.status, body: parsed, headers: res.headers };
}
