import { describe, expect, it } from '@jest/globals';
import type { FileHandle } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TraceWriter, writeAll } from '../../src/services/traceWriter.js';
import { tempDir } from '../helpers/temp.js';

/** A handle whose writev takes at most `max` bytes per call, as a kernel may: what it got, in order. */
function shortWriter(max: number): { handle: Pick<FileHandle, 'writev'>; text(): string; calls: number } {
  const got: Buffer[] = [];
  const state = { calls: 0 };
  const handle = {
    async writev(buffers: readonly NodeJS.ArrayBufferView[]) {
      state.calls++;
      let left = max;
      for (const b of buffers as Buffer[]) {
        if (left === 0) break;
        const part = b.subarray(0, left);
        got.push(Buffer.from(part));
        left -= part.length;
      }
      return { bytesWritten: max - left, buffers: buffers as Buffer[] };
    },
  } as unknown as Pick<FileHandle, 'writev'>;
  return { handle, text: () => Buffer.concat(got).toString('utf8'), get calls() { return state.calls; } };
}

describe('trace writer', () => {
  it('when writev writes less than it was given, then the rest follows in order, split buffers included', async () => {
    const lines = ['{"seq":1}\n', '{"seq":2,"t":"é🙂"}\n', 'x'.repeat(50) + '\n', '{"seq":4}\n'];
    for (const max of [1, 3, 7, 16, 1000]) {
      const w = shortWriter(max);
      await writeAll(w.handle, lines.map((l) => Buffer.from(l)));
      expect(w.text()).toBe(lines.join(''));
    }
  });

  it('when more lines than one writev takes are buffered, then all reach the file in order', async () => {
    const path = join(tempDir(), 't.jsonl');
    const w = new TraceWriter(path, { truncate: true, onError: (m) => { throw new Error(m); } });
    const lines = Array.from({ length: 2500 }, (_, i) => JSON.stringify({ seq: i + 1, text: `line ${i} é` }));
    for (const l of lines) w.append(l);
    await w.close();
    expect(readFileSync(path, 'utf8')).toBe(lines.map((l) => `${l}\n`).join(''));
    expect(w.bytes).toBe(Buffer.byteLength(lines.map((l) => `${l}\n`).join('')));
  });

  it('when lines are appended as pieces sharing one content Buffer, then the file holds each whole line, in order with plain ones', async () => {
    const path = join(tempDir(), 'p.jsonl');
    const w = new TraceWriter(path, { truncate: true, onError: (m) => { throw new Error(m); } });
    const shared = Buffer.from(JSON.stringify('re: /help\nCommands é 🙂'));
    const expected: string[] = [];
    for (let i = 0; i < 1500; i++) {
      if (i % 7 === 0) {
        const l = JSON.stringify({ seq: i, kind: 'agent' });
        w.append(l);
        expected.push(l);
      } else {
        w.appendParts({ head: `{"seq":${i},"content":`, content: shared, tail: `,"n":${i}}` });
        expected.push(`{"seq":${i},"content":${shared.toString()},"n":${i}}`);
      }
    }
    await w.close();
    const text = expected.map((l) => `${l}\n`).join('');
    expect(readFileSync(path, 'utf8')).toBe(text);
    expect(w.bytes).toBe(Buffer.byteLength(text));
  });
});
