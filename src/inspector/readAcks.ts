import { randomBytes } from 'node:crypto';

/** The parts of a `ws` WebSocket read acknowledgements use. */
export interface PingableClient {
  readonly readyState: number;
  ping(data: Buffer): void;
  on(event: 'pong', listener: (data: Buffer) => void): unknown;
}

/** WebSocket.OPEN. */
const OPEN = 1;

/**
 * How much of what was sent to a WebSocket client it has provably read (behaviour.md §13.1). The
 * socket's own `bufferedAmount` only counts what the kernel has not taken yet, and on loopback the
 * kernel's buffers (ours and the client's) absorb megabytes: a client that never reads looks
 * healthy for a long time. So after a send, when no ping is out, a ping goes with a random payload;
 * its pong proves that everything sent before it was read (frames arrive in order, and a client
 * answers a ping only when it reads it). Pongs whose payload is not the one out are ignored, so a
 * client cannot claim reads it did not make.
 */
export class ReadAcks {
  /** Bytes sent, and the part of them a pong proved read. */
  private sent = 0;
  private acked = 0;
  /** The ping out: its payload and the `sent` count it stands for. */
  private out: { payload: Buffer; mark: number } | null = null;

  constructor(private readonly client: PingableClient) {
    client.on('pong', (data) => this.pong(data));
  }

  /** Bytes sent that no pong has acknowledged yet: an upper bound of what the client has not read. */
  get unread(): number {
    return this.sent - this.acked;
  }

  /** Count a frame of `bytes` just sent, and ask for an acknowledgement if none is being waited for. */
  sentBytes(bytes: number): void {
    this.sent += bytes;
    if (this.out === null) this.ping();
  }

  private ping(): void {
    if (this.client.readyState !== OPEN) return;
    this.out = { payload: randomBytes(8), mark: this.sent };
    this.client.ping(this.out.payload);
  }

  private pong(data: Buffer): void {
    if (this.out === null || !this.out.payload.equals(data)) return;
    this.acked = this.out.mark;
    this.out = null;
    // What was sent while this ping was out still needs its own acknowledgement.
    if (this.sent > this.acked) this.ping();
  }
}

/** True when `client` can carry pings (a real WebSocket; test stand-ins may not). */
export function isPingable(client: object): client is PingableClient {
  return typeof (client as Partial<PingableClient>).ping === 'function' && typeof (client as Partial<PingableClient>).on === 'function';
}
