import type { ServerResponse } from 'node:http';
import { errorMessage } from '../domain/errors.js';
import { HEADERS_WINDOW_MS, RUNNING_COMMENT_MS } from '../domain/limits.js';
import { refusalError } from '../domain/output.js';
import type { CommandEvent, ExecHead } from '../domain/ticket.js';

/** The stream headers of spec §4.7 (every SSE response). */
const STREAM_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
} as const;

/** The stream headers with the length of a finished stream, as one literal (no spread of STREAM_HEADERS per answer). */
const streamHeaders = (length: number) => ({
  'Content-Type': STREAM_HEADERS['Content-Type'], 'Cache-Control': STREAM_HEADERS['Cache-Control'], Connection: STREAM_HEADERS.Connection,
  'X-Accel-Buffering': STREAM_HEADERS['X-Accel-Buffering'], 'Content-Length': length,
});

/** One event framed `event: <name>\ndata: <one-line JSON>\n\n` (LF). */
export function sseFrame(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Writers whose headers wait (at most HEADERS_WINDOW_MS): one timer for all. */
const pendingHeaders = new Set<SseWriter>();
let headersTimer: NodeJS.Timeout | undefined;

function flushPending(): void {
  headersTimer = undefined;
  for (const w of [...pendingHeaders]) w.flushHeaders();
}

/**
 * The one SSE writer (architecture.md "actors emit, HTTP listens"): owns the headers of spec §4.7
 * and the framing. `open()` decides the 200; the headers go out within HEADERS_WINDOW_MS unless the
 * stream is finished first, so a command that answers within that window is one write (headers,
 * head, content, done) — the usual case, and what a client reads fastest. On loopback each socket
 * write costs the daemon real time (the kernel delivers to the reader inside it) and the client one
 * more read (docs/decisions/0006).
 */
export class SseWriter {
  private state: 'new' | 'pending' | 'sent' = 'new';

  constructor(private readonly res: ServerResponse) {}

  /**
   * Commit to a 200 stream; the headers follow within HEADERS_WINDOW_MS unless the stream is
   * finished first. `onSent` runs when they go out on their own (a command still running).
   */
  open(onSent?: () => void): void {
    if (this.state !== 'new') return;
    this.state = 'pending';
    this.onSent = onSent;
    pendingHeaders.add(this);
    headersTimer ??= setTimeout(flushPending, HEADERS_WINDOW_MS);
  }

  private onSent: (() => void) | undefined;

  /** Send the headers now if they are still pending. */
  flushHeaders(): void {
    if (this.state !== 'pending') return;
    pendingHeaders.delete(this);
    this.state = 'sent';
    if (this.closed) return;
    this.res.writeHead(200, STREAM_HEADERS);
    this.res.flushHeaders();
    this.onSent?.();
  }

  /** One event; data is JSON-encoded on one line. */
  event(name: string, data: unknown): void {
    this.flushHeaders();
    this.res.write(sseFrame(name, data));
  }

  /** An SSE comment line (not an event), e.g. `: running`. */
  comment(text: string): void {
    this.flushHeaders();
    this.res.write(`: ${text}\n\n`);
  }

  end(): void {
    this.flushHeaders();
    this.res.end();
  }

  /**
   * The last events and the end of the stream as one `res.end(tail)` (one socket write; with the
   * headers still pending, headers and tail go together as one string with a Content-Length, the
   * cheapest answer node:http can write). One string in one
   * end() is the form that delivers the body on every supported Node line: `cork()` + `write()`s +
   * `end()` after `flushHeaders()` sends the last chunk without the corked data on Node 22 and 24.
   */
  finish(events: Array<[name: string, data: unknown]>): void {
    const tail = events.map(([name, data]) => sseFrame(name, data)).join('');
    if (this.state !== 'sent') {
      pendingHeaders.delete(this);
      this.state = 'sent';
      this.res.writeHead(200, streamHeaders(Buffer.byteLength(tail)));
    }
    this.res.end(tail);
  }

  /** True once the client has gone or the stream ended. */
  get closed(): boolean {
    return this.res.writableEnded || this.res.destroyed;
  }
}

/**
 * Run `fn` once the topic has handed its next waiting command to its runner. The topic machine emits
 * `command.finished` and then starts the next ticket one microtask later (actors/tree.ts
 * runTicket); two microtask hops put this answer's socket write after that start, so a persistent
 * shell is already running the next command while this answer goes out (the write is then off the
 * shell's critical path). Still within the same turn of the event loop,
 * so an instant command keeps its one write.
 */
function afterNextStart(fn: () => void): void {
  queueMicrotask(() => queueMicrotask(fn));
}

/** What streamCommand needs of a submitted command. */
export interface CommandStreamSource {
  /** Submit, with the listener for this ticket's events; returns the leave function. */
  submit(listener: (ev: CommandEvent) => void): { leave(): void };
}

/**
 * Stream one /exec command as behaviour.md §9.4 says: nothing while it waits; the 200 headers when
 * it starts, then `: running` every 15 s; exactly `head`, `content`, `done` when it finishes, and the
 * end. A refusal (429, 504) rejects with its LoomError for the error renderer. A client that leaves
 * while waiting is removed from the queue; one that leaves while its command runs does not cancel it
 * (the result is discarded). Resolves when the exchange is over. `headOf` names the head's fields
 * for the wire (the user wire's `user_id`, behaviour.md §11).
 */
export function streamCommand(res: ServerResponse, source: CommandStreamSource, headOf: (head: ExecHead) => unknown = (head) => head): Promise<void> {
  const sse = new SseWriter(res);
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  return new Promise<void>((resolve, reject) => {
    const handle = source.submit((ev) => {
      switch (ev.type) {
        case 'command.started':
          // `: running` every 15 s for a command still running once its headers went out (most never need it).
          sse.open(() => { timer = setInterval(() => { if (!sse.closed) sse.comment('running'); }, RUNNING_COMMENT_MS); });
          return;
        case 'command.refused':
          settled = true;
          reject(refusalError(ev));
          return;
        case 'command.finished':
          settled = true;
          clearInterval(timer);
          afterNextStart(() => {
            // Outside the actor's listener guard now (commandRun.ts guarded): a throw here must not
            // become an uncaught exception; the client's socket is closed instead.
            try {
              if (!sse.closed) sse.finish([['head', headOf(ev.output.head)], ['content', ev.output.content], ['done', {}]]);
            } catch (err) {
              process.emitWarning(`answer of ${ev.ticket.id} not written: ${errorMessage(err)}`);
              res.destroy();
            }
            resolve();
          });
          return;
        default:
      }
    });
    res.on('close', () => {
      if (settled) return;
      clearInterval(timer);
      handle.leave();
      resolve();
    });
  });
}
