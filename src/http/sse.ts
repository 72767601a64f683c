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
    this.res.write(frame(name, data));
  }

  /** An SSE comment line (not an event), e.g. `: running`. */
  comment(text: string): void {
    this.res.write(`: ${text}\n\n`);
  }

  end(): void {
    this.res.end();
  }

  /**
   * The last events and the end of the stream in one `res.end(tail)`: the usual answer is `head`,
   * `content`, `done` at once. One string in one end() is the form that delivers the body on every
   * supported Node line: `cork()` + `write()`s + `end()` after `flushHeaders()` sends the last chunk
   * without the corked data on Node 22 and 24 (empty stream, then a desynchronised keep-alive
   * connection). It is also the fastest form measured (bench/RESULTS.md, "SSE tail").
   */
  finish(events: Array<[name: string, data: unknown]>): void {
    let tail = '';
    for (const [name, data] of events) tail += frame(name, data);
    this.res.end(tail);
  }

  /** True once the client has gone or the stream ended. */
  get closed(): boolean {
    return this.res.writableEnded || this.res.destroyed;
  }
}

/** One SSE event frame: `event: <name>\ndata: <one-line JSON>\n\n`. */
function frame(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}
