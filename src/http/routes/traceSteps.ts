import type { Express } from 'express';
import type { TraceService } from '../../services/traces.js';
import { LoomError } from '../../domain/errors.js';
import { redactText } from '../../domain/redact.js';
import { TRACE_ID_RE } from '../../services/traces.js';
import { route } from '../route.js';
import { sendJson } from '../jsonAnswer.js';

/**
 * GET /inspect/trace/{id} (behaviour.md §13.8): a recorded trace as the steps the inspector page
 * steps through (`/inspect?trace=<id>`), read-only and masked as everything the inspector sends
 * (§13.4, at the stepper). Unknown id: 404 `Unknown trace: <id>`.
 */
export function mountTraceSteps(traces: TraceService) {
  return (app: Express): void => {
    route(app, '/inspect/trace/:id', {
      GET: async (req, res) => {
        const id = String(req.params.id);
        // Only a trace id names a file: anything else is unknown before the folder is looked at.
        if (!TRACE_ID_RE.test(id)) throw new LoomError(404, `Unknown trace: ${redactText(id)}`);
        sendJson(req, res, 200, await traces.steps(id));
      },
    });
  };
}
