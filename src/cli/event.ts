import { EventStreamRefused, type LoomClient } from '../client/index.js';
import type { CliParts } from './extensions.js';
import { client, guard, type GlobalOpts } from './common.js';
import { execOnce } from './exec.js';

/** Reconnect delays of `loom event watch`: 1 s doubling up to 30 s (reset once a stream is open). */
export const WATCH_BACKOFF_MS = { first: 1000, max: 30000 };

/** One printable line of an `event` SSE event: `<id>  <receivedAt>  <first line of the text>`. */
export function watchLine(data: { id: string; receivedAt: string; text: string }): string {
  const first = data.text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  return `${data.id}  ${data.receivedAt}  ${first.replace(/\s+/g, ' ').trim()}`;
}

export interface WatchIo {
  out(line: string): void;
  err(line: string): void;
  sleep(ms: number): Promise<void>;
}

const realIo: WatchIo = {
  out: (l) => process.stdout.write(l + '\n'),
  err: (l) => process.stderr.write(l + '\n'),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/**
 * `loom event watch` (beyond spec): tail GET /events/stream and print each event; when the stream
 * ends or the daemon is unreachable, reconnect after 1, 2, 4 … 30 s. An unknown agent is registered
 * once (as `loom <topic> '<cmd>'` does); any other refusal ends the watch with exit 1.
 * Runs until interrupted (or `signal` aborts, for tests).
 */
export async function watch(c: LoomClient, opts: { json?: boolean; signal?: AbortSignal }, io: WatchIo = realIo): Promise<number> {
  let delay = WATCH_BACKOFF_MS.first;
  let registered = false;
  while (!opts.signal?.aborted) {
    try {
      for await (const e of c.eventStream(opts.signal)) {
        if (e.event === 'ready') {
          delay = WATCH_BACKOFF_MS.first;
          io.err(`watching the event inbox of ${c.agentId} (Ctrl-C to stop)`);
        } else if (e.event === 'event') {
          io.out(opts.json ? e.data : watchLine(JSON.parse(e.data) as { id: string; receivedAt: string; text: string }));
        }
      }
      if (opts.signal?.aborted) break;
      io.err(`loom: event stream ended; reconnecting in ${delay / 1000} s`);
    } catch (err) {
      if (opts.signal?.aborted) break;
      if (err instanceof EventStreamRefused) {
        if (err.status === 401 && !registered && c.agentId) {
          registered = true;
          await c.registerAgent({ agent_id: c.agentId });
          continue;
        }
        if (err.status !== 429) {
          io.err(`loom: ${err.error}`);
          return 1;
        }
      }
      io.err(`loom: event stream unavailable (${(err as Error).message}); reconnecting in ${delay / 1000} s`);
    }
    await io.sleep(delay);
    delay = Math.min(delay * 2, WATCH_BACKOFF_MS.max);
  }
  return 0;
}

/**
 * `loom event webhook show|rotate`, `loom event list [--all]`, `loom event read <id>`,
 * `loom event ack <id>…`, `loom event watch` (spec §4.10 shell forms; behaviour.md §2.13): the first
 * four send the event commands through /exec in the `event` topic, so they print the same text.
 */
export function eventCommands({ program }: CliParts): void {
  const g = () => program.opts<GlobalOpts>();
  const run = (cmd: string) => guard(() => execOnce(g(), 'event', cmd));
  const event = program.command('event').description('Event inbox and local webhook: list, read, ack, watch, webhook show|rotate');
  const webhook = event.command('webhook').description('Show or rotate the local webhook URL of the agent');
  webhook.command('show').description('Print the webhook URL (created if absent)').action(() => run('/webhook show'));
  webhook.command('rotate').description('Replace the webhook token; the old URL stops working').action(() => run('/webhook rotate'));
  event.command('list').description('List pending events (--all: acked ones too), newest first')
    .option('--all', 'include acked events')
    .action((o: { all?: boolean }) => run(o.all ? '/events list --all' : '/events'));
  event.command('read <id>').description('Print one event in full (does not acknowledge it)').action((id: string) => run(`/events.read ${id}`));
  event.command('ack [ids...]').description('Acknowledge events by id, or every pending one with --all')
    .option('--all', 'acknowledge every pending event')
    .action((ids: string[], o: { all?: boolean }) => run(o.all ? '/events.ack --all' : `/events.ack ${ids.join(' ')}`));
  event.command('watch').description('Print events as they arrive; reconnects when the daemon restarts')
    .action(() => guard(() => watch(client(g()), { json: g().json })));
}
