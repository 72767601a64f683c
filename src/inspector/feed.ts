import type { Inspection } from '../actors/inspection.js';
import type { InspectionSnapshot } from '../actors/inspectionSnapshot.js';
import type { Clock } from '../domain/ports.js';

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
 * write each and the page a frame dispatch each (bench/inspector: 6 s of chromium CPU per 6 s
 * watched); a person cannot read faster than this anyway.
 */
export const FRAME_MS = 50;

/** WebSocket.OPEN. */
const OPEN = 1;
/** RFC 6455 §7.4.1 "try again later": the close code of a client that reads too slowly (behaviour.md §13.1). */
export const SLOW_CLIENT_CODE = 1013;

/**
 * The inspector's live feed to its WebSocket clients (behaviour.md §13.1–13.3): each client gets the
 * snapshot first, then every live message, in frames of up to {@link FRAME_MS} ms each holding a
 * JSON array of messages. The tree is observed only while at least one client is attached, and
 * each frame is serialised once for all of them: with nobody watching nothing is serialised at
 * all. A client whose send buffer passes the limit is closed with 1013, so a slow page never holds
 * memory or slows the daemon.
 */
export class InspectorFeed {
  private readonly clients = new Set<FeedClient>();
  private unsubscribe: (() => void) | null = null;
  /** JSON texts of the messages of the frame being gathered, and its timer. */
  private pending: string[] = [];
  private timer: unknown = null;

  constructor(
    private readonly source: { inspection: Inspection; inspectState(): InspectionSnapshot },
    private readonly clock: Clock,
    private readonly limitBytes: number,
  ) {}

  /** Number of attached clients. */
  get size(): number {
    return this.clients.size;
  }

  /**
   * Attach a client: the snapshot, then live messages. Both happen in this tick, so no message can
   * fall between the snapshot and the subscription; the frame being gathered goes out to the
   * clients already attached first, since the new one's snapshot already holds what it says.
   */
  attach(client: FeedClient): void {
    this.flush();
    this.deliver(client, JSON.stringify({ type: 'snapshot', ...this.source.inspectState() }));
    if (client.readyState !== OPEN) return;
    this.clients.add(client);
    this.unsubscribe ??= this.source.inspection.feed((msg) => this.gather(msg), this.clock);
  }

  /** A client went away (or was dropped): stop observing when it was the last. */
  detach(client: FeedClient): void {
    this.clients.delete(client);
    if (this.clients.size === 0 && this.unsubscribe) {
      this.unsubscribe();
      this.unsubscribe = null;
      this.pending = [];
      if (this.timer !== null) this.clock.clearTimeout(this.timer);
      this.timer = null;
    }
  }

  private gather(json: string): void {
    this.pending.push(json);
    this.timer ??= this.clock.setTimeout(() => this.flush(), FRAME_MS);
  }

  /** Send the gathered messages as one frame to every client. */
  private flush(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.length === 0) return;
    // The messages are JSON already: the frame is their array, as JSON.stringify would write it.
    const text = `[${this.pending.join(',')}]`;
    this.pending = [];
    for (const c of this.clients) this.deliver(c, text);
  }

  private deliver(client: FeedClient, text: string): void {
    if (client.readyState !== OPEN) {
      this.detach(client);
      return;
    }
    if (client.bufferedAmount > this.limitBytes) {
      client.close(SLOW_CLIENT_CODE, 'inspector client too slow');
      this.detach(client);
      return;
    }
    client.send(text);
  }

  /**
   * Daemon shutdown: every client is told (1001 going away) and the observation ends. Upgraded
   * sockets are not the HTTP server's any more (closeAllConnections skips them): one that does not
   * answer the close is destroyed shortly after, so it never holds the server open.
   */
  closeAll(): void {
    this.flush();
    for (const c of [...this.clients]) {
      c.close(1001, 'loom shutting down');
      this.detach(c);
      setTimeout(() => c.terminate(), CLOSE_GRACE_MS).unref();
    }
  }
}
