/**
 * The event inbox and local webhook as the commands see them (spec §2 Event, Local webhook;
 * behaviour.md §1.2, §2.10, §9.7, §9.8). Pure types and rules; the store lives in src/stores/inbox.ts.
 */

/** spec §2 Event: status of a stored event (the machine's `deleted` is never stored). */
export type EventStatus = 'pending' | 'acked';

/** spec §2 Event (inbox record): exactly the six fields the stream sends (behaviour.md §9.8). */
export interface EventRecord {
  id: string;
  agentId: string;
  receivedAt: string;
  source: string;
  text: string;
  status: EventStatus;
}

/** An event without its text: what listings by status and predicates need (texts stay on disk). */
export type EventHead = Omit<EventRecord, 'text'>;

/** An event as kept in the inbox log (behaviour.md §9.8 adds `ackedAt`). */
export interface StoredEvent extends EventRecord {
  ackedAt: string | null;
}

/** spec §2 Event: `source` of webhook-created events. */
export const WEBHOOK_SOURCE = 'local-webhook';

/** behaviour.md §1.2: `evt_` + 26-character ULID (Crockford base32). */
export const EVENT_ID_RE = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;

/** behaviour.md §1.2: `wh_` + 43 base64url characters (32 random bytes). */
export const WEBHOOK_TOKEN_RE = /^wh_[A-Za-z0-9_-]{43}$/;

/** One page of the inbox, newest first (behaviour.md §2.10). */
export interface EventListing {
  /** At most `limit` events, newest first. */
  rows: EventRecord[];
  /** How many events the filter matched in total (rows plus the ones not shown). */
  matched: number;
  pending: number;
  acked: number;
}

/** The outcome of `/events.ack` (behaviour.md §2.10). */
export type AckOutcome =
  | { ok: true; acked: Array<{ id: string; already: boolean }> }
  | { ok: false; unknown: string };

/**
 * What the event and webhook commands reach through `services.events`.
 * Implemented by src/services/events.ts.
 */
export interface EventsPort {
  list(agentId: string, opts: { all: boolean; limit: number }): EventListing;
  get(agentId: string, id: string): EventRecord | undefined;
  /** Acknowledge ids (all known, else nothing changes) or every pending event. */
  ack(agentId: string, ids: string[] | 'all'): Promise<AckOutcome>;
  /** Delete acked events, or all events; returns how many were deleted. */
  clear(agentId: string, all: boolean): Promise<number>;
  /** The webhook URL, creating the token if absent (spec §3 Webhook token, GET row). */
  showWebhook(agentId: string): Promise<string>;
  /** A new token; the old URL is dead at once (spec §3 Webhook token, POST row). */
  rotateWebhook(agentId: string): Promise<string>;
  /** The current webhook URL, or null when the agent has no token (never creates one). */
  webhookUrl(agentId: string): string | null;
}

/**
 * behaviour.md §2.10 preview: first non-blank line, runs of whitespace collapsed to one space,
 * at most 80 characters (79 + `…`). When more non-blank text follows that line, the preview ends
 * with `…` too (a multi-line event must not look complete). Characters are code points so a
 * surrogate pair is never split.
 */
export function eventPreview(text: string, max = 80): string {
  const lines = text.split(/\r\n|\r|\n/);
  const at = lines.findIndex((l) => l.trim() !== '');
  const flat = at < 0 ? '' : lines[at].replace(/\s+/g, ' ').trim();
  const more = at >= 0 && lines.slice(at + 1).some((l) => l.trim() !== '');
  const chars = [...flat];
  if (chars.length > max || (more && chars.length === max)) return chars.slice(0, max - 1).join('') + '…';
  return more ? `${flat}…` : flat;
}

/**
 * The inbox port (behaviour.md §9.8) that the actors layer uses; the append-only log in
 * src/stores/inbox.ts implements it and is injected by the events feature.
 */
export interface InboxPort {
  add(agentId: string, text: string, status: EventStatus): Promise<EventRecord>;
  get(agentId: string, id: string): EventRecord | undefined;
  list(agentId: string, opts: { all: boolean; limit: number }): EventListing;
  /** Every event without its text, oldest first. */
  all(agentId: string): EventHead[];
  ack(agentId: string, ids: string[]): Promise<void>;
  clear(agentId: string, deletes: (e: EventHead) => boolean): Promise<number>;
  drop(agentId: string): Promise<void>;
  /** Close every open log (shutdown). */
  closeAll(): Promise<void>;
}
