import { TOOL_NAME } from '../domain/mcpTool.js';
import { httpSend, type HttpAnswer } from './http.js';
import type { InspectorSnapshot } from './inspector.js';
import { SseParser, type SseEvent } from './sse.js';
import { refusedOutcome, streamedOutcome, type ExecOutcome } from './execAnswer.js';
import type { InstallProgress } from '../domain/install.js';
import { WIRES, isWireName, type WireDescription, type WireName } from '../domain/wire.js';

export type { InspectorSnapshot, SnapshotAgent, SnapshotTicket, SnapshotTopic } from './inspector.js';

export { SseParser, type SseEvent };
export type { ExecHead, ExecOutcome } from './execAnswer.js';

/** An inbox event as the JSON routes and the event stream send it (spec §2 Event). */
export interface EventJson {
  id: string;
  agentId: string;
  receivedAt: string;
  source: string;
  text: string;
  status: 'pending' | 'acked';
}

/** A running install as `GET /installs` lists it (behaviour.md §13.2 progress fields). */
export interface InstallJson extends InstallProgress {
  request_id: string | null;
}

/** What one MCP `tools/call` returned: the envelope text, or the HTTP status and raw body of a failure. */
export interface McpCallOutcome {
  status: number;
  text?: string;
  isError?: boolean;
  raw?: string;
}

/** POST /traces answer (behaviour.md §14.1). */
export interface TraceStarted {
  trace_id: string;
  agent_id: string | null;
  topic: string | null;
  started_at: string;
}

/** One row of GET /traces (behaviour.md §14.1). */
export interface TraceListing extends TraceStarted {
  note: string | null;
  stopped_at: string | null;
  steps: number;
  bytes: number;
}

/** Thrown when the daemon cannot be reached (CLI exit 3). */
export class DaemonUnreachable extends Error {}

/**
 * Thrown when something answers on the daemon's address that is not Loom (an answer Loom never
 * gives: a body that is not JSON where Loom answers JSON, /exec without its event stream). A kind of
 * unreachable: no Loom daemon answers there (CLI exit 3, `loom status` says not running).
 */
export class NotLoom extends DaemonUnreachable {
  constructor(readonly baseUrl: string, readonly what: string) {
    super(`${baseUrl} answers, but not as Loom (${what})`);
  }
}

/** A short, printable sample of a foreign answer. */
function sample(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > 40 ? `${one.slice(0, 40)}…` : one;
}

/** Thrown by `eventStream` and `installStream` when the daemon answers with an error status (spec §4.5: 400, 401; 429). */
export class EventStreamRefused extends Error {
  constructor(readonly status: number, readonly error: string) {
    super(`event stream refused: HTTP ${status} ${error}`);
  }
}

/** One registered identity as `GET /agents` (or `GET /users`) lists it. */
export interface IdentitySummary {
  id: string;
  home: string;
  allowedPaths: string[];
  createdAt: string;
  /** behaviour.md §15 (absent from daemons before the sandbox). */
  sandbox?: 'none' | 'workspace';
}

/** A request in the form of a wire: path and JSON body. */
type Build = (w: WireDescription) => { path: string; body?: unknown };

/**
 * A typed client for Loom's wire protocol v0.1, agent wire or the earlier user wire (spec §9;
 * behaviour.md §11): the wire description gives the identity header, resource and field names.
 * Used by the CLI, the MCP stdio bridge, benchmarks and tests; it never imports server code.
 */
export class LoomClient {
  private current: WireDescription;
  /** True while the wire is a guess to check against `/describe` on the first refusal. */
  private auto: boolean;

  /**
   * `wire` `'auto'` starts as the agent wire and, when a request is refused with 400 or 404, asks
   * `/describe` once which wire the daemon serves; on the other wire it sends the request again in
   * that wire's form (nothing ran: those refusals come before any command). The common case costs
   * no extra request.
   */
  constructor(readonly baseUrl: string, readonly agentId?: string, wire: WireName | WireDescription | 'auto' = 'agent') {
    this.auto = wire === 'auto';
    this.current = wire === 'auto' ? WIRES.agent : typeof wire === 'string' ? WIRES[wire] : wire;
  }

  /** The wire this client speaks (after detection, the daemon's). */
  get wire(): WireDescription {
    return this.current;
  }

  /**
   * The wire a daemon serves, read from `GET /describe` (spec §9: clients detect features through
   * /describe). A daemon without a `wire` field is the agent wire.
   */
  static async detectWire(baseUrl: string): Promise<WireName> {
    const d = await new LoomClient(baseUrl).describe();
    const wire = (d.body as { wire?: unknown }).wire;
    return isWireName(wire) ? wire : 'agent';
  }

  /** A client for the wire the daemon at `baseUrl` serves. */
  static async connect(baseUrl: string, id?: string): Promise<LoomClient> {
    return new LoomClient(baseUrl, id, await LoomClient.detectWire(baseUrl));
  }

  /** A client of the same daemon and wire acting as another identity. */
  as(id: string | undefined): LoomClient {
    return new LoomClient(this.baseUrl, id, this.auto ? 'auto' : this.current);
  }

  private async send(method: string, path: string, body: unknown, headers: Record<string, string>): Promise<HttpAnswer> {
    try {
      return await httpSend(this.baseUrl + path, {
        method,
        headers: { ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...(this.agentId ? { [this.current.header]: this.agentId } : {}), ...headers },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
    } catch (err) {
      throw new DaemonUnreachable(`cannot reach ${this.baseUrl}: ${(err as Error).message}`);
    }
  }

  /** One request built for the current wire; in auto mode a 400/404 may switch the wire and re-send. */
  private async request(method: string, build: Build, headers: Record<string, string> = {}): Promise<HttpAnswer> {
    const first = build(this.current);
    const res = await this.send(method, first.path, first.body, headers);
    if (!this.auto || (res.status !== 400 && res.status !== 404)) return res;
    this.auto = false;
    const name = await LoomClient.detectWire(this.baseUrl).catch(() => this.current.name);
    if (name === this.current.name) return res;
    res.cancel();
    this.current = WIRES[name];
    const again = build(this.current);
    return this.send(method, again.path, again.body, headers);
  }

  private async json<T>(method: string, build: Build | string, body?: unknown): Promise<{ status: number; body: T }> {
    const res = await this.request(method, typeof build === 'string' ? () => ({ path: build, body }) : build);
    const text = await res.text();
    if (!text) return { status: res.status, body: {} as T };
    try {
      return { status: res.status, body: JSON.parse(text) as T };
    } catch {
      throw new NotLoom(this.baseUrl, `HTTP ${res.status}, ${res.contentType || 'no content type'}: ${sample(text)}`);
    }
  }

  health() { return this.json<{ ok: boolean; agents: number; users?: number; sessions: number }>('GET', '/health'); }
  describe() { return this.json<Record<string, unknown>>('GET', '/describe'); }
  shutdown() { return this.json<{ ok: boolean; message: string }>('POST', '/shutdown'); }
  /** GET /agents (agent wire). */
  listAgents() { return this.json<{ agents: IdentitySummary[] }>('GET', '/agents'); }
  /** GET /agents or GET /users: the registered identities of either wire. */
  async identities(): Promise<{ status: number; list: IdentitySummary[] }> {
    const r = await this.json<Record<string, IdentitySummary[] | undefined>>('GET', (w) => ({ path: w.resource }));
    return { status: r.status, list: r.body[this.current.listField] ?? [] };
  }
  /** POST /agents with a body as given (POST /users on the user wire: `{id, home}` both required). */
  registerAgent(input: Record<string, unknown>) { return this.json<Record<string, unknown>>('POST', (w) => ({ path: w.resource, body: input })); }
  /** Register `id` with the wire's id field (`agent_id`; `id` on the user wire) and the other fields. */
  register(id: string, fields: { home?: string; allowed_paths?: string[]; webhook?: boolean; sandbox?: string } = {}) {
    return this.json<Record<string, unknown>>('POST', (w) => ({ path: w.resource, body: { [w.registerIdFields[0]]: id, ...fields } }));
  }
  /** DELETE /agents/{id}; `purge` deletes the default home too, `force` a home the user chose (behaviour.md §17). */
  deleteAgent(id: string, opts: { purge?: boolean; force?: boolean } = {}) {
    const query = opts.purge ? `?purge=1${opts.force ? '&force=1' : ''}` : '';
    return this.json<Record<string, unknown>>('DELETE', (w) => ({ path: `${w.resource}/${encodeURIComponent(id)}${query}` }));
  }
  listSessions(agentId?: string) { return this.json<{ sessions: unknown[] }>('GET', (w) => ({ path: `/sessions${agentId ? `?${w.idField}=${encodeURIComponent(agentId)}` : ''}` })); }
  openSession(agentId: string, topic: string) { return this.json<Record<string, unknown>>('POST', (w) => ({ path: '/sessions', body: { [w.idField]: agentId, topic } })); }
  closeSession(agentId: string, topic: string) { return this.json<Record<string, unknown>>('DELETE', `/sessions/${encodeURIComponent(agentId)}/${encodeURIComponent(topic)}`); }
  webhook(agentId: string, rotate = false) { return this.json<{ agent_id: string; webhook_url: string }>(rotate ? 'POST' : 'GET', `/agents/${encodeURIComponent(agentId)}/webhook`); }
  mintCapability(spec: Record<string, unknown>) { return this.json<Record<string, unknown>>('POST', '/capabilities', spec); }
  listCapabilities(agentId?: string) { return this.json<{ capabilities: Array<Record<string, unknown>> }>('GET', `/capabilities${agentId ? `?agent_id=${encodeURIComponent(agentId)}` : ''}`); }
  /** GET /inspect/state: the state inspector's snapshot (behaviour.md §13.2). */
  inspectState() { return this.json<InspectorSnapshot>('GET', '/inspect/state'); }
  /** GET /inspect/export: the snapshot and the machine catalogue as one bundle (behaviour.md §13.8). */
  inspectExport() { return this.json<Record<string, unknown>>('GET', '/inspect/export'); }
  /** The inbox as JSON (beyond spec: `GET /agents/{id}/events`), newest first; pending only unless `all`. */
  events(agentId: string, all = false) { return this.json<{ agent_id: string; pending: number; acked: number; events: EventJson[] } & { error?: string }>('GET', `/agents/${encodeURIComponent(agentId)}/events${all ? '?all=1' : ''}`); }
  event(agentId: string, eventId: string) { return this.json<EventJson & { error?: string }>('GET', `/agents/${encodeURIComponent(agentId)}/events/${encodeURIComponent(eventId)}`); }
  ackEvents(agentId: string, target: string[] | 'all') { return this.json<{ agent_id: string; acked: Array<{ id: string; already: boolean }> } & { error?: string }>('POST', `/agents/${encodeURIComponent(agentId)}/events/ack`, target === 'all' ? { all: true } : { ids: target }); }
  /** Running installs of the agent with their progress (beyond spec: `GET /installs`); `requestId` keeps the one that command started. */
  installs(requestId?: string) { return this.json<{ agent_id: string; installs: InstallJson[] } & { error?: string }>('GET', `/installs${requestId ? `?request_id=${encodeURIComponent(requestId)}` : ''}`); }
  /** The agent's package registry (beyond spec: `GET /packages`), sorted by name. */
  packages() { return this.json<{ agent_id: string; packages: Array<Record<string, unknown>> } & { error?: string }>('GET', '/packages'); }
  revokeCapability(tokenId: string) { return this.json<Record<string, unknown>>('DELETE', `/capabilities/${encodeURIComponent(tokenId)}`); }

  /** POST /exec and read the SSE answer (spec §4.7). */
  async exec(topic: string, cmd: string, requestId?: string): Promise<ExecOutcome> {
    const res = await this.request('POST', () => ({ path: '/exec', body: { cmd, topic, ...(requestId ? { request_id: requestId } : {}) } }), { Accept: 'text/event-stream' });
    if (res.status !== 200) {
      const text = await res.text();
      if (!/^\s*\{/.test(text)) throw new NotLoom(this.baseUrl, `HTTP ${res.status} to POST /exec: ${sample(text)}`);
      return refusedOutcome(res.status, text);
    }
    if (!res.contentType.startsWith('text/event-stream')) {
      const text = await res.text();
      throw new NotLoom(this.baseUrl, `POST /exec answered ${res.contentType || 'no content type'}: ${sample(text)}`);
    }
    const parser = new SseParser();
    const events: SseEvent[] = [];
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.chunks()) events.push(...parser.push(decoder.decode(chunk, { stream: true })));
    } catch {
      // A cut stream is reported as STREAM_INCOMPLETE below.
    }
    return streamedOutcome(events);
  }

  /**
   * One `tools/call` of the `loom` tool through POST /mcp (spec §4.8; stateless, JSON response):
   * the tool's text (the envelope) and isError, or the HTTP status and body when it is not a result.
   */
  async mcpCall(topic: string, cmd: string): Promise<McpCallOutcome> {
    const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: TOOL_NAME, arguments: { topic, cmd } } };
    const res = await this.request('POST', () => ({ path: '/mcp', body: rpc }), { Accept: 'application/json, text/event-stream' });
    const raw = await res.text();
    let parsed: { result?: { content?: Array<{ text?: unknown }>; isError?: unknown } } | undefined;
    try { parsed = JSON.parse(raw) as typeof parsed; } catch { parsed = undefined; }
    const text = parsed?.result?.content?.[0]?.text;
    if (res.status !== 200 || typeof text !== 'string') return { status: res.status, raw };
    return { status: 200, text, isError: parsed?.result?.isError === true };
  }

  /** `tools/list` through POST /mcp: the tool names (also loads the daemon's MCP server, which it does on first use). */
  async mcpTools(): Promise<string[]> {
    const res = await this.request('POST', () => ({ path: '/mcp', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }), { Accept: 'application/json, text/event-stream' });
    const body = (await res.json().catch(() => ({}))) as { result?: { tools?: Array<{ name: string }> } };
    return body.result?.tools?.map((t) => t.name) ?? [];
  }

  /** POST /webhook/{token} with a text body, by the URL GET /agents/{id}/webhook gave (spec §4.4). */
  async postWebhook(url: string, text: string): Promise<{ status: number; body: string }> {
    let res: HttpAnswer;
    try {
      res = await httpSend(url, { method: 'POST', headers: { 'Content-Type': 'text/plain;charset=UTF-8' }, body: text });
    } catch (err) {
      throw new DaemonUnreachable(`cannot reach ${url}: ${(err as Error).message}`);
    }
    return { status: res.status, body: await res.text() };
  }

  /** POST /traces (behaviour.md §14.1). */
  startTrace(spec: { agent_id?: string; topic?: string; note?: string }) { return this.json<TraceStarted & { error?: string }>('POST', '/traces', spec); }
  listTraces() { return this.json<{ traces: TraceListing[]; error?: string }>('GET', '/traces'); }
  stopTrace(id: string, purge = false) { return this.json<{ trace_id: string; stopped: boolean; steps: number; error?: string }>('DELETE', `/traces/${encodeURIComponent(id)}${purge ? '?purge=1' : ''}`); }

  /** GET /traces/{id}: the NDJSON text of the trace, or the error body. */
  async getTrace(id: string): Promise<{ status: number; text: string }> {
    const res = await this.request('GET', () => ({ path: `/traces/${encodeURIComponent(id)}` }));
    return { status: res.status, text: await res.text() };
  }

  /** Open GET /events/stream; yields parsed events until the stream ends or `signal` aborts. */
  eventStream(signal?: AbortSignal): AsyncGenerator<SseEvent> {
    return this.sseStream('/events/stream', signal);
  }

  /**
   * Open GET /installs/stream (beyond spec), only the install of `requestId` when given: `ready`,
   * then `install` events (InstallJson) as its progress changes, until `signal` aborts.
   */
  installStream(requestId?: string, signal?: AbortSignal): AsyncGenerator<SseEvent> {
    return this.sseStream(`/installs/stream${requestId ? `?request_id=${encodeURIComponent(requestId)}` : ''}`, signal);
  }

  /** A GET answered with SSE: its parsed events; an error status throws EventStreamRefused. */
  private async *sseStream(path: string, signal?: AbortSignal): AsyncGenerator<SseEvent> {
    const res = await httpSend(this.baseUrl + path, { method: 'GET', headers: { Accept: 'text/event-stream', ...(this.agentId ? { [this.current.header]: this.agentId } : {}) }, signal }).catch((err: Error) => {
      throw new DaemonUnreachable(err.message);
    });
    if (res.status !== 200) {
      const text = await res.text();
      let error = text;
      try { error = String((JSON.parse(text) as { error?: unknown }).error ?? text); } catch { /* not JSON: keep the text */ }
      throw new EventStreamRefused(res.status, error);
    }
    const parser = new SseParser();
    const decoder = new TextDecoder();
    for await (const chunk of res.chunks()) {
      for (const e of parser.push(decoder.decode(chunk, { stream: true }))) yield e;
    }
  }
}
