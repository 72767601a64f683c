import type { Response } from 'express';

/**
 * The one SSE writer (architecture.md "actors emit, HTTP listens"): owns the headers of spec §4.7
 * and the framing `event: <name>\ndata: <one-line JSON>\n\n` (LF).
 */
export class SseWriter {
  private opened = false;

  constructor(private readonly res: Response) {}

  /** Send 200 and the four stream headers at once (flushHeaders: clients see them immediately). */
  open(): void {
    if (this.opened) return;
    this.opened = true;
    this.res.status(200);
    this.res.setHeader('Content-Type', 'text/event-stream');
    this.res.setHeader('Cache-Control', 'no-cache');
    this.res.setHeader('Connection', 'keep-alive');
    this.res.setHeader('X-Accel-Buffering', 'no');
    this.res.flushHeaders();
  }

  /** One event; data is JSON-encoded on one line. */
  event(name: string, data: unknown): void {
    this.res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** An SSE comment line (not an event), e.g. `: running`. */
  comment(text: string): void {
    this.res.write(`: ${text}\n\n`);
  }

  end(): void {
    this.res.end();
  }

  /**
   * The last events and the end of the stream in one socket write (corked): the usual answer is
   * `head`, `content`, `done` at once, and one write instead of four saves syscalls and wake-ups.
   */
  finish(events: Array<[name: string, data: unknown]>): void {
    this.res.cork();
    for (const [name, data] of events) this.event(name, data);
    // end() uncorks fully (node:http), flushing the events and the last chunk together.
    this.res.end();
  }

  /** True once the client has gone or the stream ended. */
  get closed(): boolean {
    return this.res.writableEnded || this.res.destroyed;
  }
}
