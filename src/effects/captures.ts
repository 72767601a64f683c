import type { OutputCapture } from './shellRun.js';

/**
 * `/exec` output (behaviour.md §8.1): stdout and stderr merged in arrival order; past the cap, the
 * first and last `half` bytes are kept and the middle counted.
 */
export class HeadTailCapture implements OutputCapture {
  private readonly head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  private total = 0;

  constructor(private readonly half: number) {}

  push(_stream: 'stdout' | 'stderr', chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headLen < this.half) {
      const take = chunk.subarray(0, this.half - this.headLen);
      this.head.push(take);
      this.headLen += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    this.tail.push(chunk);
    this.tailLen += chunk.length;
    while (this.tailLen - this.tail[0].length >= this.half) this.tailLen -= (this.tail.shift() as Buffer).length;
  }

  /** The kept bytes (head then tail) and how many were dropped from the middle. */
  result(): { output: Buffer; omitted: number } {
    const tail = Buffer.concat(this.tail);
    const keptTail = tail.subarray(Math.max(0, tail.length - this.half));
    return { output: Buffer.concat([...this.head, keptTail]), omitted: this.total - this.headLen - keptTail.length };
  }
}

/** Collects chunks up to a byte cap. */
export class Capped {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  constructor(private readonly max: number) {}
  push(c: Buffer): void {
    if (this.size >= this.max) return;
    const take = c.subarray(0, this.max - this.size);
    this.chunks.push(take);
    this.size += take.length;
  }
  get(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** CLI action output (behaviour.md §4.9): stdout, stderr and both in arrival order, each up to a cap. */
export class SplitCapture implements OutputCapture {
  readonly stdout: Capped;
  readonly stderr: Capped;
  readonly combined: Capped;

  constructor(maxBytes: number) {
    this.stdout = new Capped(maxBytes);
    this.stderr = new Capped(maxBytes);
    this.combined = new Capped(maxBytes);
  }

  push(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    (stream === 'stdout' ? this.stdout : this.stderr).push(chunk);
    this.combined.push(chunk);
  }
}

/** behaviour.md §8.1: ANSI escape sequences and CR removed, trailing newlines removed. */
export function cleanOutput(text: string): string {
  return text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]/g, '').replace(/\r/g, '').replace(/\n+$/, '');
}
