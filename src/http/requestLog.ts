import type { IncomingMessage, ServerResponse } from 'node:http';
import { shown, type ValueMasks } from '../domain/redact.js';
import { logPath, pathAgent, type RequestLogEntry, type RequestLogSink, type RequestNote } from '../domain/requestLog.js';
import { AGENT_WIRE, type WireDescription } from '../domain/wire.js';

/** What routes learned about a request after reading its body (topic, command word, request id). */
const notes = new WeakMap<ServerResponse, RequestNote>();

/**
 * Add fields to the log entry of the request `res` answers (behaviour.md §2.13): /exec and /mcp
 * call it once the body is parsed. Express's `res` is the same object the server created.
 */
export function noteRequest(res: ServerResponse, note: RequestNote): void {
  notes.set(res, { ...notes.get(res), ...note });
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
    res.once('close', () => {
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
      sink.write(shown(entry, agent === null ? null : masksOf(agent, topic)));
    });
  };
}
