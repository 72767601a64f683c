import { afterAll, describe, expect, it } from '@jest/globals';
import { closeParsePool, parseOffLoop, PARSE_OFFLOAD_CHARS } from '../../src/commands/documents/parseCache.js';
import { createParsePool } from '../../src/effects/parsePool.js';
import { parseDocument } from '../../src/sfmd/parse.js';

/** An action document of about `bytes`, with headings, prose, act blocks and a unique marker. */
function bigDoc(bytes: number, marker: string): string {
  let out = `---\ntitle: Big ${marker}\n---\n# Big\n\n`;
  for (let i = 0; out.length < bytes; i++) {
    out += `## Part ${i} {#p${i}}\n\nSome *text* with a [link](./x.md) and \`code\`.\n\n\`\`\`act.a${i}\nGET https://example.com/${i}\n  q: string "Query"\n\`\`\`\n\n`;
  }
  return out;
}

afterAll(async () => { await closeParsePool(); });

describe('document parsing off the event loop (architecture.md, bench/isolation)', () => {
  it('when a worker parses a document, then the result equals the inline parse, source included', async () => {
    const pool = createParsePool({ size: 1 });
    try {
      const text = bigDoc(24 * 1024, 'a');
      expect(await pool.parse(text)).toEqual(parseDocument(text));
    } finally {
      await pool.close();
    }
  });

  it('when a large document is parsed, then the event loop keeps turning meanwhile (other mailboxes go on)', async () => {
    const text = bigDoc(96 * 1024, 'b');
    let turns = 0;
    let done = false;
    const spin = () => { if (!done) { turns++; setImmediate(spin); } };
    setImmediate(spin);
    const doc = await parseOffLoop(text);
    done = true;
    expect(doc.title).toBe('Big b');
    // Parsed inline, the loop would not have turned once before the result.
    expect(turns).toBeGreaterThan(5);
  });

  it('when the same large text is asked for twice at once, then one parse serves both, and later calls hit the cache', async () => {
    const text = bigDoc(PARSE_OFFLOAD_CHARS * 2, 'c');
    const [a, b] = await Promise.all([parseOffLoop(text), parseOffLoop(text)]);
    expect(a).toBe(b);
    expect(await parseOffLoop(text)).toBe(a);
    expect(Object.isFrozen(a) && Object.isFrozen(a.actions[0])).toBe(true);
  });

  it('when a text is below the threshold, then it is parsed on the calling thread (no worker starts)', async () => {
    const pool = createParsePool({ size: 1 });
    const small = '# Small\n\ntext\n';
    expect((await parseOffLoop(small)).title).toBe('Small');
    expect(pool.workers()).toBe(0);
    await pool.close();
  });

  it('when a pool has been idle for idleMs, then its workers are gone; closing rejects what waits', async () => {
    const pool = createParsePool({ size: 1, idleMs: 30 });
    await pool.parse(bigDoc(20 * 1024, 'd'));
    expect(pool.workers()).toBe(1);
    for (let i = 0; i < 100 && pool.workers() > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(pool.workers()).toBe(0);
    const pending = expect(pool.parse(bigDoc(200 * 1024, 'e'))).rejects.toThrow('parse pool closed');
    await pool.close();
    await pending;
  });
});
