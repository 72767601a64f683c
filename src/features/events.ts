import { EventStreams } from '../services/eventStreams.js';
import { EventsService } from '../services/events.js';
import { WebhookTokens } from '../services/webhooks.js';
import { eventHubPage, eventsCommand, webhookCommand } from '../commands/events.js';
import { EVENT_PING_MS } from '../domain/limits.js';
import { eventStreamRoute } from '../http/routes/eventStream.js';
import { eventsJsonRoutes } from '../http/routes/events.js';
import { webhookRoutes } from '../http/routes/webhook.js';
import { FileInbox } from '../stores/inbox.js';
import type { Feature } from './types.js';

/**
 * Local webhooks, the durable event inbox, the event stream and the event commands
 * (spec §2 Event and Local webhook, §3, §4.4, §4.5, §4.10, §6; behaviour.md §2.10, §2.12, §9.7, §9.8).
 */
export const eventsFeature: Feature = async ({ directory, inspection, agents, clock, info, stateFolders }) => {
  const inbox = new FileInbox(info.dataDir, clock);
  // Rebuild every registered agent's index now (and compact its log when it needs it); an agent
  // without a state folder has no log, and its inbox is made on first use.
  const records = agents.list();
  for (const a of records) {
    if (!stateFolders.has(a.id)) continue;
    const r = await inbox.load(a.id);
    if (r.skipped > 0) process.emitWarning(`event inbox of ${a.id}: ${r.skipped} damaged line${r.skipped === 1 ? '' : 's'} moved to ${r.quarantine}`);
  }
  const streams = new EventStreams(clock);
  const webhooks = new WebhookTokens(records, { store: agents, directory });
  const urlOf = (token: string) => `http://127.0.0.1:${info.port()}/webhook/${token}`;
  const events = new EventsService(inbox, streams, webhooks, urlOf, (e) => inspection.intake({ agentId: e.agentId, text: e.text, at: clock.now() }));
  return {
    commands: [eventsCommand, webhookCommand],
    hubs: { event: eventHubPage },
    services: { events },
    describe: { 'agent-webhooks': {}, events: {}, 'event-stream': { ping_ms: EVENT_PING_MS } },
    actors: { webhook: webhooks.actors },
    onRegister: { apply: async (agent, input) => (input.webhook ? { webhook_url: await events.showWebhook(agent.id) } : {}) },
    // The inspector shows whether a token exists and counts only, never a token or an event's text (behaviour.md §13.2, §13.4).
    inspectAgent: (agentId) => {
      const { pending, acked } = inbox.list(agentId, { all: false, limit: 0 });
      return { webhook: webhooks.has(agentId), events: { pending, acked, streams: streams.count(agentId) } };
    },
    onDelete: (agentId) => events.deleteAgent(agentId),
    onShutdown: () => events.shutdown(),
    routes: [webhookRoutes(events), eventStreamRoute(streams), eventsJsonRoutes(events)],
  };
};
