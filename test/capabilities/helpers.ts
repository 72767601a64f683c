import { Agent, request } from 'node:http';
import { call } from '../helpers/app.js';
import type { WireJson } from '../helpers/json.js';

/** A raw HTTP answer with the body as bytes. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: WireJson;
}

/**
 * Send one request through node:http with the path exactly as given (never normalised: hostile
 * paths must reach the daemon byte for byte).
 */
export function send(port: number, opts: { method?: string; path: string; headers?: Record<string, string>; body?: Buffer | string; agent?: Agent }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers, agent: opts.agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        let json: unknown;
        try { json = JSON.parse(body.toString('utf8')); } catch { json = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** Mint through POST /capabilities; returns the 201 body (fails the test otherwise). */
export async function mint(base: string, spec: Record<string, unknown>): Promise<{ token_id: string; secret: string; [k: string]: unknown }> {
  const r = await call(base, 'POST', '/capabilities', { body: spec });
  if (r.status !== 201) throw new Error(`mint failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Register an agent; returns its home. */
export async function addAgent(base: string, agentId: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await call(base, 'POST', '/agents', { body: { agent_id: agentId, ...extra } });
  if (r.status !== 200) throw new Error(`register failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.home as string;
}
