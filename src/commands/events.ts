import { eventPreview, type EventsPort } from '../domain/events.js';
import { confirm, content, fail, nextLine, type CommandResult } from '../domain/result.js';
import { plural } from '../domain/text.js';
import { columns } from './format.js';
import type { Command, CommandContext } from './types.js';

/** behaviour.md §1.8: rows of an `/events` listing. */
export const EVENTS_LISTING_ROWS = 100;

/** The EventsPort of the events feature, when it is installed. */
export function eventsPort(ctx: CommandContext): EventsPort | undefined {
  return ctx.services.events;
}

const missing = () => fail('INTERNAL_ERROR', 'Internal error: the event inbox is not available');

/** The `/events` page (behaviour.md §2.10): system line and content lines, with `next:` last when any. */
export function listingPage(port: EventsPort, agentId: string, all: boolean): { system: string; lines: string[]; next: string | null } {
  const l = port.list(agentId, { all, limit: EVENTS_LISTING_ROWS });
  const system = all
    ? `Event inbox of ${agentId} — ${plural(l.matched, 'event')} (${l.pending} pending, ${l.acked} acked; newest first)`
    : `Event inbox of ${agentId} — ${l.pending} pending (newest first)`;
  if (l.rows.length === 0) return { system, lines: ['  (no events)'], next: null };
  const lines = columns(l.rows.map((e) => [e.id, e.status, e.receivedAt, eventPreview(e.text)]));
  if (l.matched > l.rows.length) lines.push(`  … ${plural(l.matched - l.rows.length, 'older event')} not shown`);
  return { system, lines, next: nextLine(['/events.read <id>', '/events.ack <id>']) };
}

/** `/events --help`: the six forms (behaviour.md §2.10). */
const HELP_LINES = columns([
  ['/events', 'list pending events, newest first'],
  ['/events list --all', 'list pending and acked events'],
  ['/events.read <id>', 'show one event in full (reading never acknowledges)'],
  ['/events.ack <id>', 'acknowledge events: one or more ids, or --all'],
  ['/events.clear', 'delete the acked events'],
  ['/events.clear --all', 'delete all events, pending ones too'],
], '');

const words = (args: string): string[] => args.split(/\s+/).filter(Boolean);

function list(ctx: CommandContext, port: EventsPort, args: string[]): CommandResult {
  const rest = args[0] === 'list' ? args.slice(1) : args;
  if (rest.length > 1 || (rest.length === 1 && rest[0] !== '--all')) return fail('INVALID_ARGS', 'Usage: /events [list] [--all]');
  const page = listingPage(port, ctx.agent.id, rest.length === 1);
  return content(page.system, page.next ? [...page.lines, page.next] : page.lines);
}

function read(ctx: CommandContext, port: EventsPort, args: string[]): CommandResult {
  if (args.length !== 1) return fail('INVALID_ARGS', 'Usage: /events.read <id>');
  const e = port.get(ctx.agent.id, args[0]);
  if (!e) return fail('NOT_FOUND', `Event not found: ${args[0]}`);
  const lines = [`received: ${e.receivedAt}`, `source: ${e.source}`, `status: ${e.status}`, '', e.text];
  if (e.status === 'pending') lines.push('', nextLine([`/events.ack ${e.id}`]));
  return content(`Event ${e.id}`, lines);
}

async function ack(ctx: CommandContext, port: EventsPort, args: string[]): Promise<CommandResult> {
  const all = args.length === 1 && args[0] === '--all';
  if (args.length === 0 || (!all && args.some((a) => a.startsWith('--')))) return fail('INVALID_ARGS', 'Usage: /events.ack <id> [<id>…] | /events.ack --all');
  const r = await port.ack(ctx.agent.id, all ? 'all' : args);
  if (!r.ok) return fail('NOT_FOUND', `Event not found: ${r.unknown}`);
  if (all || r.acked.length !== 1) return confirm(`Acked ${plural(r.acked.length, 'event')}`);
  const one = r.acked[0];
  return confirm(`Acked ${one.id}${one.already ? ' (already acked)' : ''}`);
}

async function clear(ctx: CommandContext, port: EventsPort, args: string[]): Promise<CommandResult> {
  if (args.length > 1 || (args.length === 1 && args[0] !== '--all')) return fail('INVALID_ARGS', 'Usage: /events.clear [--all]');
  const all = args.length === 1;
  const n = await port.clear(ctx.agent.id, all);
  return confirm(all ? `Cleared ${plural(n, 'event')}` : `Cleared ${plural(n, 'acked event')}`);
}

/**
 * `/events`, `/events list [--all]`, `/events.read`, `/events.ack`, `/events.clear [--all]`,
 * `/events --help` (spec §4.10; behaviour.md §2.10). They work in every topic.
 */
export const eventsCommand: Command = {
  name: 'events',
  async run(ctx) {
    const port = eventsPort(ctx);
    if (!port) return missing();
    const args = words(ctx.args);
    if (args.includes('--help')) return content('Event commands', HELP_LINES);
    switch (ctx.sub) {
      case null: return list(ctx, port, args);
      case 'read': return read(ctx, port, args);
      case 'ack': return ack(ctx, port, args);
      case 'clear': return clear(ctx, port, args);
      default: return fail('COMMAND_UNSUPPORTED', `Unknown events command: /events.${ctx.sub}`);
    }
  },
};

/** `/webhook [show|rotate]` (spec §4.10; behaviour.md §2.10). */
export const webhookCommand: Command = {
  name: 'webhook',
  async run(ctx) {
    const port = eventsPort(ctx);
    if (!port) return missing();
    if (ctx.sub !== null) return fail('COMMAND_UNSUPPORTED', `Unknown command: /webhook.${ctx.sub}`, { recovery: '/help lists the commands' });
    const arg = ctx.args.trim();
    const who = `agent '${ctx.agent.id}'`;
    if (arg === '' || arg === 'show') {
      const url = await port.showWebhook(ctx.agent.id);
      return content(`Local webhook for ${who}`, [url, `Post text to it: curl -X POST --data-binary @message.txt '${url}'`, 'Rotate: /webhook rotate']);
    }
    if (arg === 'rotate') return content(`Rotated webhook for ${who}`, await port.rotateWebhook(ctx.agent.id));
    return fail('INVALID_ARGS', 'Usage: /webhook [show|rotate]');
  },
};

/**
 * The `event` hub page (behaviour.md §2.12): the `/events` page with a blank line and the webhook
 * line inserted before its `next:` line (at the end when it has none). Showing the hub never
 * creates a token.
 */
export function eventHubPage(ctx: CommandContext): string[] {
  const port = eventsPort(ctx);
  if (!port) return ['(the event inbox is not available)'];
  const page = listingPage(port, ctx.agent.id, false);
  const url = port.webhookUrl(ctx.agent.id);
  const lines = [page.system, ...page.lines, '', url ? `Webhook: ${url}` : 'Webhook: (none) — /webhook show creates one'];
  if (page.next) lines.push(page.next);
  return lines;
}
