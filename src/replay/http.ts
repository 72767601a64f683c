import { Agent, request } from 'node:http';
import { DaemonUnreachable, type ExecOutcome } from '../client/index.js';
import { refusedOutcome, streamedOutcome } from '../client/execAnswer.js';
import { SseParser } from '../client/sse.js';

/**
 * POST /exec for `loom replay`: node:http over keep-alive sockets instead of fetch. A replay sends
 * one request per step, and fetch's stream machinery costs more CPU per request than the daemon's
 * whole answer (bench/traces compares replay with a bare client loop). Same outcome shape as
 * LoomClient.exec.
 */
export class ExecTransport {
  private readonly agent = new Agent({ keepAlive: true });
  private readonly url: URL;

  constructor(baseUrl: string) {
    this.url = new URL(baseUrl);
  }

  private post(agentId: string, body: string): Promise<{ status: number; text: string }> {
    return this.send('POST', '/exec', body, { Accept: 'text/event-stream', 'X-Agent-Id': agentId });
  }

  private send(method: string, path: string, body: string | undefined, headers: Record<string, string>): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = request({
        host: this.url.hostname, port: this.url.port, path, method, agent: this.agent,
        headers: { ...(body !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) } : {}), ...headers },
      }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => { text += c; });
        // A cut stream ends what was read; the outcome reports it incomplete.
        res.on('error', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', (err) => reject(new DaemonUnreachable(`cannot reach ${this.url.origin}: ${err.message}`)));
      req.end(body);
    });
  }

  /**
   * A JSON request (GET /health, POST /agents) on the same sockets: the replay then never loads
   * fetch's HTTP stack (undici, slow to load) unless a trace has MCP or webhook steps.
   */
  async json(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const r = await this.send(method, path, body === undefined ? undefined : JSON.stringify(body), {});
    let parsed: unknown = {};
    try { parsed = r.text ? JSON.parse(r.text) : {}; } catch { parsed = { error: r.text }; }
    return { status: r.status, body: typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {} };
  }

  /** One command (spec §4.7): the SSE answer read whole, or the error body of a refusal. */
  async exec(agentId: string, topic: string, cmd: string, requestId?: string): Promise<ExecOutcome> {
    const r = await this.post(agentId, JSON.stringify({ cmd, topic, ...(requestId ? { request_id: requestId } : {}) }));
    if (r.status !== 200) return refusedOutcome(r.status, r.text);
    return streamedOutcome(new SseParser().push(r.text));
  }

  /** Close the idle sockets (the replay is over). */
  close(): void {
    this.agent.destroy();
  }
}
