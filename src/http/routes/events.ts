import type { Express, Request } from 'express';
import type { EventsService } from '../../services/events.js';
import { LoomError } from '../../domain/errors.js';
import type { EventRecord } from '../../domain/events.js';
import { readJsonObject } from '../body.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { sendJson } from '../jsonAnswer.js';

/** The six spec fields of an event (spec §2 Event), whatever else the store keeps. */
export function eventJson(e: EventRecord): EventRecord {
  return { id: e.id, agentId: e.agentId, receivedAt: e.receivedAt, source: e.source, text: e.text, status: e.status };
}

const ACK_USAGE = 'Give "ids" (a non-empty array of event ids) or "all": true';

/** The ids of an ack body, or 'all' (400 otherwise). */
function ackTarget(body: Record<string, unknown>): string[] | 'all' {
  if (body.all === true && body.ids === undefined) return 'all';
  const ids = body.ids;
  if (body.all !== undefined || !Array.isArray(ids) || ids.length === 0 || !ids.every((x) => typeof x === 'string')) throw new LoomError(400, ACK_USAGE);
  return ids as string[];
}

/**
 * The inbox as JSON for `loom event … --json` (beyond spec; behaviour.md §2.13 asks `--json` for
 * parsed objects, and the spec's event commands answer text only). Same rules as the commands:
 * reading never acknowledges; an ack names known ids only, else nothing changes.
 *
 * - `GET /agents/{id}/events[?all=1]` → `{agent_id, pending, acked, events: [event…]}`, newest first
 *   (pending only unless `all`)
 * - `GET /agents/{id}/events/{event_id}` → the event; unknown: 404 `Event not found: <id>`
 * - `POST /agents/{id}/events/ack` `{"ids": […]}` or `{"all": true}` → `{agent_id, acked: [{id, already}]}`
 *
 * An unknown agent is 404 `Unknown agent: <id>`, as on the webhook routes.
 */
export function eventsJsonRoutes(events: EventsService) {
  return (app: Express, ctx: AppContext): void => {
    const agentOf = (req: Request): string => {
      const id = String(req.params.id);
      if (!ctx.system.hasAgent(id)) throw new LoomError(404, `Unknown agent: ${id}`);
      return id;
    };
    route(app, '/agents/:id/events', {
      GET: (req, res) => {
        const id = agentOf(req);
        const all = req.query.all === '1' || req.query.all === 'true';
        const l = events.list(id, { all, limit: Number.MAX_SAFE_INTEGER });
        sendJson(req, res, 200, { agent_id: id, pending: l.pending, acked: l.acked, events: l.rows.map(eventJson) });
      },
    });
    route(app, '/agents/:id/events/ack', {
      POST: async (req, res) => {
        const id = agentOf(req);
        const r = await events.ack(id, ackTarget(await readJsonObject(req)));
        if (!r.ok) throw new LoomError(404, `Event not found: ${r.unknown}`);
        sendJson(req, res, 200, { agent_id: id, acked: r.acked });
      },
    });
    route(app, '/agents/:id/events/:event_id', {
      GET: (req, res) => {
        const id = agentOf(req);
        const e = events.get(id, String(req.params.event_id));
        if (!e) throw new LoomError(404, `Event not found: ${String(req.params.event_id)}`);
        sendJson(req, res, 200, eventJson(e));
      },
    });
  };
}
