/** One parsed Server-Sent Event. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Incremental SSE parser: feed text chunks, get complete events. Comment lines (`: running`)
 * are skipped; multi-line data is joined with `\n` (the SSE rules).
 */
export class SseParser {
  private buf = '';

  push(chunk: string): SseEvent[] {
    this.buf += chunk;
    const out: SseEvent[] = [];
    let i: number;
    while ((i = this.buf.indexOf('\n\n')) >= 0) {
      const block = this.buf.slice(0, i);
      this.buf = this.buf.slice(i + 2);
      let event = 'message';
      const data: string[] = [];
      let any = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const c = line.indexOf(':');
        const field = c < 0 ? line : line.slice(0, c);
        const value = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
        if (field === 'event') { event = value; any = true; }
        if (field === 'data') { data.push(value); any = true; }
      }
      if (any) out.push({ event, data: data.join('\n') });
    }
    return out;
  }
}
