import type { IncomingMessage, ServerResponse } from 'node:http';
import { redactText, type ValueMasks } from '../domain/redact.js';
import { logPath, pathAgent, type RequestLogEntry, type RequestLogSink, type RequestNote } from '../domain/requestLog.js';
import { AGENT_WIRE, type WireDescription } from '../domain/wire.js';

/** What routes learned about a request after reading its body (topic, command word, request id). */
const notes = new WeakMap<ServerResponse, RequestNote>();

/**
 * Add fields to the log entry of the request `res` answers (behaviour.md §2.13): /exec and /mcp
 * call it once the body is parsed. Express's `res` is the same object the server created.
 */
export function noteRequest(res: ServerResponse, note: RequestNote): void {
  const before = notes.get(res);
  notes.set(res, before ? { ...before, ...note } : note);
}

/** A field a client chose, through the log's one masking rule (§13.4); null stays null. */
const masked = (v: string | null, masks: ValueMasks | null): string | null => (v === null ? null : redactText(v, masks));

/**
 * The entry as the log writes it: every field a client chose (method, path, agent, topic, command
 * word, request id) masked; the daemon's own fields (time, status, duration) as they are.
 */
export function maskedEntry(e: RequestLogEntry, masks: ValueMasks | null): RequestLogEntry {
  return {
    time: e.time, method: redactText(e.method, masks), path: redactText(e.path, masks), status: e.status, duration_ms: e.duration_ms,
    agent: masked(e.agent, masks), topic: masked(e.topic, masks), command: masked(e.command, masks), request_id: masked(e.request_id, masks),
  };
}

/** The trimmed identity header (X-Agent-Id; X-User-Id on the user wire), or null. */
function headerAgent(req: IncomingMessage, header: string): string | null {
  const v = req.headers[header.toLowerCase()];
  const s = (Array.isArray(v) ? v[0] : v)?.trim();
  return s ? s : null;
}

/** The values of a registered agent's topic to keep out of the log (null: shapes only). */
export type LogMasks = (agent: string, topic: string | null) => ValueMasks | null;

/**
 * The request log (behaviour.md §2.13), installed in front of every handler — the Express app and
 * the /fs fast path alike — by `listen()`. It writes one entry when the response is done or the
 * client left; it never reads bodies, so nothing but the fields a route notes can reach the log.
 * This is the log's masking point (§13.4): every field a client chose goes through the one rule,
 * with the values of the agent and topic the request named, so a secret typed anywhere stays out.
 */
export function requestLogger(sink: RequestLogSink, now: () => number = Date.now, wire: Pick<WireDescription, 'header' | 'resource'> = AGENT_WIRE, masksOf: LogMasks = () => null): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const started = now();
    let written = false;
    // `on` with a flag rather than `once`: `once` binds a wrapper for every request; a response closes once anyway.
    res.on('close', () => {
      if (written) return;
      written = true;
      const ended = now();
      const path = logPath(req.url ?? '/');
      const note = notes.get(res) ?? {};
      const agent = note.agent ?? headerAgent(req, wire.header) ?? pathAgent(path, wire.resource);
      const topic = note.topic ?? null;
      const entry: RequestLogEntry = {
        time: new Date(ended).toISOString(),
        method: req.method ?? '',
        path,
        status: res.statusCode,
        duration_ms: ended - started,
        agent,
        topic,
        command: note.command ?? null,
        request_id: note.request_id ?? null,
      };
      sink.write(maskedEntry(entry, agent === null ? null : masksOf(agent, topic)));
    });
  };
}
