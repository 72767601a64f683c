import type { Express } from 'express';
import type { EventStreams } from '../../services/eventStreams.js';
import { LoomError } from '../../domain/errors.js';
import type { AppContext } from '../context.js';
import { agentHeader, route } from '../route.js';
import { SseWriter } from '../sse.js';

/**
 * GET /events/stream (spec §4.5, §6; behaviour.md §9.8): 400 without `X-Agent-Id`, 401 for an
 * unknown agent, 429 past 16 open streams; then `ready`, `event`s and `ping`s until the client
 * leaves, the agent is deleted or the daemon stops.
 */
export function eventStreamRoute(streams: EventStreams) {
  return (app: Express, ctx: AppContext): void => {
    route(app, '/events/stream', {
      GET: (req, res) => {
        const id = agentHeader(req);
        if (!id) throw new LoomError(400, 'X-Agent-Id header required');
        if (!ctx.system.hasAgent(id)) throw new LoomError(401, `Unknown agent: ${id}`);
        if (streams.count(id) >= streams.maxPerAgent) throw new LoomError(429, `Too many event streams for agent ${id} (max ${streams.maxPerAgent})`);
        const sse = new SseWriter(res);
        sse.open();
        const handle = streams.open(id, {
          send: (name, data) => { if (!sse.closed) sse.event(name, data); },
          end: () => { if (!sse.closed) sse.end(); },
        });
        res.on('close', () => handle?.close());
        // The request body (none expected) is not read; let it flow so the socket is not held up.
        req.resume();
      },
    });
  };
}
