import type { Express } from 'express';
import type { TraceService } from '../../services/traces.js';
import { LoomError } from '../../domain/errors.js';
import { isAgentId } from '../../domain/ids.js';
import { TRACE_NOTE_CHARS } from '../../domain/limits.js';
import { parseTopic } from '../../domain/topic.js';
import { readJsonObject } from '../body.js';
import { route } from '../route.js';
import { sendJson } from '../jsonAnswer.js';

const absent = (v: unknown) => v === undefined || v === null || v === '';

/** The body of POST /traces (behaviour.md §14.1): every field optional; a wrong one is 400 and nothing starts. */
function traceRequest(body: Record<string, unknown>): { agentId: string | null; topic: string | null; note: string | null } {
  const { agent_id: agentId, topic, note } = body;
  if (!absent(agentId) && !isAgentId(agentId)) throw new LoomError(400, `Invalid agent_id: ${typeof agentId === 'string' ? agentId : JSON.stringify(agentId)}`);
  let canonical: string | null = null;
  if (!absent(topic)) {
    const ref = parseTopic(topic);
    if (!ref) throw new LoomError(400, `Invalid topic: ${typeof topic === 'string' ? topic : JSON.stringify(topic)}`);
    canonical = ref.topic;
  }
  if (!absent(note) && (typeof note !== 'string' || [...note].length > TRACE_NOTE_CHARS)) {
    throw new LoomError(400, `Invalid note: a string of at most ${TRACE_NOTE_CHARS} characters`);
  }
  return { agentId: absent(agentId) ? null : (agentId as string), topic: canonical, note: absent(note) ? null : (note as string) };
}

/** POST/GET /traces, GET/DELETE /traces/{id} (behaviour.md §14.1). */
export function mountTraces(traces: TraceService) {
  return (app: Express): void => {
    route(app, '/traces', {
      POST: async (req, res) => {
        const info = traces.start(traceRequest(await readJsonObject(req)));
        sendJson(req, res, 201, { trace_id: info.trace_id, agent_id: info.agent_id, topic: info.topic, started_at: info.started_at });
      },
      GET: (req, res) => {
        sendJson(req, res, 200, { traces: traces.list() });
      },
    });
    route(app, '/traces/:id', {
      GET: async (req, res) => {
        const stream = await traces.open(String(req.params.id));
        res.status(200).setHeader('Content-Type', 'application/x-ndjson');
        await new Promise<void>((resolve, reject) => {
          // A client that leaves mid-file: pipe() alone never closes the file, so each such client
          // would keep a descriptor open for good, and enough of them run the daemon into EMFILE.
          res.once('close', () => { stream.destroy(); resolve(); });
          stream.once('error', reject);
          stream.once('end', resolve);
          stream.pipe(res);
        });
      },
      DELETE: async (req, res) => {
        const purge = req.query.purge === '1' || req.query.purge === 'true';
        sendJson(req, res, 200, await traces.stop(String(req.params.id), purge));
      },
    });
  };
}
