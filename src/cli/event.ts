import { EventStreamRefused, type LoomClient } from '../client/index.js';
import { eventPreview } from '../domain/events.js';
import { UsageError, agentFailure, cliAgent, client, examples, globals, guard, httpFailure, print, type CliParts, type GlobalOpts } from './common.js';
import { execOnce } from './exec.js';

/** Reconnect delays of `loom event watch`: 1 s doubling up to 30 s (reset once a stream is open). */
export const WATCH_BACKOFF_MS = { first: 1000, max: 30000 };

/** One printable line of an `event` SSE event: `<id>  <receivedAt>  <preview>` (the /events preview rule). */
export function watchLine(data: { id: string; receivedAt: string; text: string }): string {
  return `${data.id}  ${data.receivedAt}  ${eventPreview(data.text)}`;
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

/** Why a watch ended for good: the agent does not exist (never registered by the CLI) or another refusal. */
export class WatchRefused extends Error {
  constructor(readonly status: number, readonly error: string) {
    super(error);
  }
}

/**
 * `loom event watch` (beyond spec): tail GET /events/stream and print each event; when the stream
 * ends or the daemon is unreachable, reconnect after 1, 2, 4 … 30 s. A refusal other than 429
 * (unknown agent included: the CLI never registers agents) ends the watch with WatchRefused.
 * Runs until interrupted (or `signal` aborts, for tests).
 */
export async function watch(c: LoomClient, opts: { json?: boolean; signal?: AbortSignal }, io: WatchIo = realIo): Promise<number> {
  let delay = WATCH_BACKOFF_MS.first;
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
      if (err instanceof EventStreamRefused && err.status !== 429) throw new WatchRefused(err.status, err.error);
      io.err(`loom: event stream unavailable (${(err as Error).message}); reconnecting in ${delay / 1000} s`);
    }
    await io.sleep(delay);
    delay = Math.min(delay * 2, WATCH_BACKOFF_MS.max);
  }
  return 0;
}

/** A JSON route's answer: the agent-level 404 is the unknown-agent failure, others as they are. */
function checked<T>(opts: GlobalOpts, r: { status: number; body: T & { error?: string } }): T {
  if (r.status === 404 && r.body.error?.startsWith('Unknown agent:')) throw agentFailure(cliAgent(opts));
  if (r.status !== 200) throw httpFailure(r.status, r.body);
  return r.body;
}

/** `--json`: the parsed objects from the JSON routes; text: the /exec command's own text. */
async function listOrText(opts: GlobalOpts, json: () => Promise<unknown>, cmd: string): Promise<number> {
  if (!opts.json) return execOnce(opts, 'event', cmd);
  print(opts, await json(), '');
  return 0;
}

/** `event ack` needs ids or --all, not both. */
function usage(): never {
  throw new UsageError('loom: event ack takes event ids or --all (not both); e.g.  loom event ack evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2');
}

/**
 * `loom event webhook show|rotate`, `loom event list [--all]`, `loom event read <id>`,
 * `loom event ack <id>…|--all`, `loom event watch` (spec §4.10 shell forms; behaviour.md §2.13): text
 * through /exec in the `event` topic (the same text as the commands); `--json` prints objects.
 */
export function eventCommands({ program }: CliParts): void {
  const g = () => globals(program);
  const c = () => client(g());
  const me = () => cliAgent(g());
  const event = examples(program.command('event').description('Event inbox and local webhook: list, read, ack, watch, webhook show|rotate'), [
    'loom --agent leo event list', 'loom --agent leo event watch',
  ]);
  const webhook = examples(event.command('webhook').description('Show or rotate the local webhook URL of the agent'), ['loom --agent leo event webhook show']);
  examples(webhook.command('show').description('Print the webhook URL (created if absent)'), ['loom event webhook show', 'loom event webhook show --json   # {"agent_id", "webhook_url"}'])
    .action(() => guard(g(), () => listOrText(g(), async () => checked(g(), await c().webhook(me())), '/webhook show')));
  examples(webhook.command('rotate').description('Replace the webhook token; the old URL stops working'), ['loom event webhook rotate'])
    .action(() => guard(g(), () => listOrText(g(), async () => checked(g(), await c().webhook(me(), true)), '/webhook rotate')));
  examples(event.command('list').description('List pending events (--all: acked ones too), newest first').option('--all', 'include acked events'), [
    'loom event list', 'loom event list --all --json   # {"agent_id", "pending", "acked", "events": [...]}',
  ]).action((o: { all?: boolean }) => guard(g(), () => listOrText(g(), async () => checked(g(), await c().events(me(), o.all === true)), o.all ? '/events list --all' : '/events')));
  examples(event.command('read <id>').description('Print one event in full (does not acknowledge it)'), ['loom event read evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2'])
    .action((id: string) => guard(g(), () => listOrText(g(), async () => checked(g(), await c().event(me(), id)), `/events.read ${id}`)));
  examples(event.command('ack [ids...]').description('Acknowledge events by id, or every pending one with --all').option('--all', 'acknowledge every pending event'), [
    'loom event ack evt_01J2Z9X8Q4M7K3T5V6W8Y0A1B2', 'loom event ack --all',
  ]).action((ids: string[], o: { all?: boolean }) => guard(g(), () => (ids.length === 0) === !o.all ? usage() : listOrText(g(), async () => checked(g(), await c().ackEvents(me(), o.all ? 'all' : ids)), o.all ? '/events.ack --all' : `/events.ack ${ids.join(' ')}`)));
  examples(event.command('watch').description('Print events as they arrive; reconnects when the daemon restarts'), [
    'loom --agent leo event watch', 'loom event watch --json   # one event record per line',
  ]).action(() => guard(g(), async () => {
    try {
      return await watch(c(), { json: g().json });
    } catch (err) {
      if (err instanceof WatchRefused && err.status === 401) throw agentFailure(me());
      if (err instanceof WatchRefused) throw httpFailure(err.status, { error: err.error });
      throw err;
    }
  }));
}
