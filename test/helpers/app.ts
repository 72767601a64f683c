import type { Server } from 'node:http';
import { request as httpRequest } from 'node:http';
import { loadConfig } from '../../src/config.js';
import { closeServer, compose, listen, type Composition } from '../../src/daemon.js';
import type { Clock } from '../../src/domain/ports.js';
import { LoomClient } from '../../src/client/index.js';
import { tempDir } from './daemon.js';
import { freezeTopicContexts } from './deepFreeze.js';
import type { WireJson } from './json.js';

/** An in-process daemon for contract tests (createApp on port 0, memory agent registry). */
export interface TestApp {
  c: Composition;
  server: Server;
  port: number;
  base: string;
  dataDir: string;
  shutdowns: number;
  /** What the topic-context freezer could not freeze (a buffer, a function); `close` fails when any. */
  frozenProblems: string[];
  client(agentId?: string): LoomClient;
  close(): Promise<void>;
}

/** Start an in-process app; `memory: false` uses the real lowdb file registry in the temp data dir. */
export async function startApp(opts: { clock?: Clock; memory?: boolean; env?: Record<string, string>; queue?: { max: number; waitMs: number }; dataDir?: string } = {}): Promise<TestApp> {
  const dataDir = opts.dataDir ?? tempDir();
  const config = loadConfig({ SVC_DATA_DIR: dataDir, SVC_PORT: '1', ...(opts.env ?? {}) });
  const t = { shutdowns: 0 } as TestApp;
  const c = await compose(config, { clock: opts.clock, memory: opts.memory ?? true, onShutdown: () => { t.shutdowns++; }, queue: opts.queue });
  // Every in-process suite runs over frozen topic contexts: a command that writes its session in
  // place instead of returning a change throws (architecture.md "One read model").
  const frozen = freezeTopicContexts((o) => c.system.inspection.observe(o));
  const server = await listen(c, 0);
  const port = (server.address() as { port: number }).port;
  return Object.assign(t, {
    c, server, port, dataDir, base: `http://127.0.0.1:${port}`, frozenProblems: frozen.problems,
    client: (agentId?: string) => new LoomClient(`http://127.0.0.1:${port}`, agentId, c.ctx.wire),
    async close() {
      frozen.stop();
      await c.system.shutdown();
      await closeServer(server);
      if (frozen.problems.length > 0) throw new Error(`topic context holds what is not data: ${frozen.problems.slice(0, 5).join('; ')}`);
    },
  });
}

/** A raw HTTP exchange through node:http (fetch drops a forged Host header). */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Send one request with exact headers and body via node:http. */
export function raw(port: number, opts: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** JSON helper over fetch for contract tests. */
export async function call(base: string, method: string, path: string, opts: { body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: WireJson; headers: Headers }> {
  const res = await fetch(base + path, {
    method,
    headers: { ...(opts.body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...(opts.headers ?? {}) },
    body: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try { body = JSON.parse(text); } catch { /* not JSON: keep text */ }
  return { status: res.status, body, headers: res.headers };
}
