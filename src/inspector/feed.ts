import type { Inspection, InspectorMessage, LiveMessage } from '../services/inspection.js';
import { iso } from '../services/inspectionMessages.js';
import type { InspectionSnapshot } from '../services/inspectionSnapshot.js';
import type { Clock } from '../domain/ports.js';
import { Coalescer } from './coalesce.js';
import { isPingable, ReadAcks } from './readAcks.js';

/** The parts of a `ws` WebSocket the feed uses (a test passes a stand-in). */
export interface FeedClient {
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string): void;
  close(code: number, reason: string): void;
  /** Destroy the connection at once (a client that never answers the close). */
  terminate(): void;
}

/** How long a client gets to answer the closing handshake at shutdown before its socket is destroyed. */
const CLOSE_GRACE_MS = 200;

/**
 * Live messages are sent in frames of at most one per this many ms (a JSON array of the messages
 * in order). At a few thousand commands a second a frame per message costs the daemon a socket
 * write each and the page a frame dispatch each (bench/inspector); a person cannot read faster
 * than this anyway.
 */
export const FRAME_MS = 50;

/** WebSocket.OPEN. */
const OPEN = 1;
/** RFC 6455 §7.4.1 "try again later": the close code of a client that reads too slowly (behaviour.md §13.1). */
export const SLOW_CLIENT_CODE = 1013;

/**
 * Messages a second above which a coalesced client's frames span {@link COALESCED_FRAME_MS} (the
 * page redraws once a second from this rate on too, web/inspector/app.js BUSY_MESSAGES_PER_S).
 */
export const COALESCE_ABOVE_PER_S = 500;
/** The span of a coalesced frame under a flood. */
export const COALESCED_FRAME_MS = 1000;

/** What a client asked for at the upgrade (behaviour.md §13.3 and our `?coalesce=1`). */
export interface FeedOptions {
  coalesce?: boolean;
}

/**
 * The inspector's live feed to its WebSocket clients (behaviour.md §13.1–13.3): each client gets the
 * snapshot first, then every live message, in frames of up to {@link FRAME_MS} ms each holding a
 * JSON array of messages. The tree is observed only while at least one client is attached, and
 * each frame is serialised once for all of them: with nobody watching nothing is serialised at
 * all. A client whose unread data passes the limit is closed with 1013, so a slow page never holds
 * memory or slows the daemon. Unread is measured two ways, either one passing the limit closes it:
 * the socket's send buffer, and the live bytes sent since the last acknowledged ping (readAcks.ts),
 * since the kernel's buffers hide a client that stopped reading.
 *
 * A client that asked for the coalesced feed (`?coalesce=1`, the page) gets frames of its own: of
 * {@link FRAME_MS} while quiet, of {@link COALESCED_FRAME_MS} while more than
 * {@link COALESCE_ABOVE_PER_S} messages a second come, each with only what changes its picture
 * (coalesce.ts), led by a `coalesced` message counting what was left out. Why: under a flood of
 * thousands of commands a second a page that received every message would spend CPU, on the same
 * cores, that the daemon's throughput pays for (bench/inspector), for the few rows it shows.
 */
export class InspectorFeed {
  private readonly clients = new Set<FeedClient>();
  private readonly coalescing = new Set<FeedClient>();
  /** What each client has provably read of its live frames (readAcks.ts). */
  private readonly acks = new WeakMap<FeedClient, ReadAcks>();
  /** The subscription to the tree's live messages while anyone watches. */
  private live: ReturnType<Inspection['liveFeed']> | null = null;
  /** JSON texts of the messages of the frame being gathered, and its timer. */
  private pending: string[] = [];
  private timer: unknown = null;
  /** The coalesced clients' frame being gathered (null while there are none), its timer and span. */
  private coalescer: Coalescer | null = null;
  private coalesceTimer: unknown = null;
  private coalesceMs = FRAME_MS;
  /** When the last coalesced frame went out (clock ms). */
  private coalescedAt = 0;

  constructor(
    private readonly source: { inspection: Inspection; inspectState(): InspectionSnapshot },
    private readonly clock: Clock,
    private readonly limitBytes: number,
  ) {}

  /** Number of attached clients. */
  get size(): number {
    return this.clients.size + this.coalescing.size;
  }

  /**
   * Attach a client: the snapshot, then live messages. Both happen in this tick, so no message can
   * fall between the snapshot and the subscription; the frames being gathered go out to the
   * clients already attached first, since the new one's snapshot already holds what they say.
   */
  attach(client: FeedClient, options: FeedOptions = {}): void {
    this.flush();
    this.flushCoalesced();
    const snapshot = this.source.inspectState();
    this.deliver(client, JSON.stringify({ type: 'snapshot', ...snapshot }));
    if (client.readyState !== OPEN) return;
    // Counted from the first live frame on: the snapshot is the daemon's state, sent once, not a backlog.
    if (isPingable(client) && !this.acks.has(client)) this.acks.set(client, new ReadAcks(client));
    if (options.coalesce) {
      // A new group starts from what this snapshot told; a running one is level with it after the flush.
      this.coalescer ??= new Coalescer(snapshot);
      this.coalescing.add(client);
    } else {
      this.clients.add(client);
    }
    this.live ??= this.source.inspection.liveFeed((m) => this.gather(m), this.clock);
  }

  /** A client went away (or was dropped): stop observing when it was the last. */
  detach(client: FeedClient): void {
    this.clients.delete(client);
    this.coalescing.delete(client);
    if (this.clients.size === 0) {
      this.pending = [];
      this.timer = this.cancel(this.timer);
    }
    if (this.coalescing.size === 0) {
      this.coalescer = null;
      this.coalesceTimer = this.cancel(this.coalesceTimer);
      this.coalesceMs = FRAME_MS;
    }
    if (this.size === 0 && this.live) {
      this.live.unsubscribe();
      this.live = null;
    }
  }

  private cancel(timer: unknown): null {
    if (timer !== null) this.clock.clearTimeout(timer);
    return null;
  }

  private gather(m: LiveMessage): void {
    if (this.clients.size > 0) {
      this.pending.push((this.live as NonNullable<typeof this.live>).json(m));
      this.timer ??= this.clock.setTimeout(() => this.flush(), FRAME_MS);
    }
    if (this.coalescer) {
      this.coalescer.add(m);
      if (this.coalesceTimer === null) {
        // The first message after a quiet spell goes out within FRAME_MS, whatever the flood before it set.
        if (this.clock.now() - this.coalescedAt >= COALESCED_FRAME_MS) this.coalesceMs = FRAME_MS;
        this.coalesceTimer = this.clock.setTimeout(() => this.flushCoalesced(), this.coalesceMs);
      }
    }
  }

  /** Send the gathered messages as one frame to every client. */
  private flush(): void {
    this.timer = this.cancel(this.timer);
    if (this.pending.length === 0) return;
    // The messages are JSON already: the frame is their array, as JSON.stringify would write it.
    const text = `[${this.pending.join(',')}]`;
    this.pending = [];
    for (const c of this.clients) this.deliver(c, text);
  }

  /** Send the coalesced clients their frame, and set the span of the next from this one's rate. */
  private flushCoalesced(): void {
    this.coalesceTimer = this.cancel(this.coalesceTimer);
    if (!this.coalescer || this.coalescer.size === 0) return;
    const gathered = this.coalescer.size;
    const live = this.live;
    if (!live) return;
    const frame = this.coalescer.take((m) => live.json(m));
    this.coalesceMs = (gathered * 1000) / this.coalesceMs > COALESCE_ABOVE_PER_S ? COALESCED_FRAME_MS : FRAME_MS;
    this.coalescedAt = this.clock.now();
    const texts = frame.droppedMessages === 0 ? frame.texts : [
      JSON.stringify({ type: 'coalesced', commands: frame.droppedCommands, messages: frame.droppedMessages, at: iso(this.clock.now()) } satisfies InspectorMessage),
      ...frame.texts,
    ];
    const text = `[${texts.join(',')}]`;
    for (const c of this.coalescing) this.deliver(c, text);
  }

  private deliver(client: FeedClient, text: string): void {
    if (client.readyState !== OPEN) {
      this.detach(client);
      return;
    }
    const acks = this.acks.get(client);
    if (client.bufferedAmount > this.limitBytes || (acks !== undefined && acks.unread > this.limitBytes)) {
      client.close(SLOW_CLIENT_CODE, 'inspector client too slow');
      this.detach(client);
      return;
    }
    client.send(text);
    acks?.sentBytes(Buffer.byteLength(text));
  }

  /**
   * Daemon shutdown: every client is told (1001 going away) and the observation ends. Upgraded
   * sockets are not the HTTP server's any more (closeAllConnections skips them): one that does not
   * answer the close is destroyed shortly after, so it never holds the server open.
   */
  closeAll(): void {
    this.flush();
    this.flushCoalesced();
    for (const c of [...this.clients, ...this.coalescing]) {
      c.close(1001, 'loom shutting down');
      this.detach(c);
      setTimeout(() => c.terminate(), CLOSE_GRACE_MS).unref();
    }
  }
}
