import { describe, expect, it } from '@jest/globals';
import { compareAnswer } from '../../src/replay/compare.js';

/*
 * The replay comparison (behaviour.md §14.3): status, head ok/code/topic/topic_type/meta and the
 * content, after normalising both sides; a difference is a unified diff naming the step.
 */

const meta = { uri: 'file://~/w.md', title: 'W', current_block: null };

describe('compareAnswer (behaviour.md §14.3)', () => {
  it('equal after normalising ids, timestamps, durations and temp paths: a match', () => {
    const expected = { status: 200, head: { ok: true, code: null, topic: 'main' }, content: 're: [r1] /events\nevt_01M85ZFQPH5XXBG52Z7D712RTK at 2026-11-24T05:12:03.537Z (12 ms) /tmp/loom-a/x' };
    const actual = { status: 200, head: { ok: true, code: null, topic: 'main', topic_type: 'tab' }, content: 're: [r1] /events\nevt_01M8AAAAAAAAAAAAAAAAAAAAAA at 2026-11-25T00:00:00.000Z (3 ms) /tmp/loom-b/x' };
    expect(compareAnswer(4, expected, actual, ['/tmp'])).toBeNull();
  });

  it('only the fields the expectation names are compared; meta compares whatever its key order', () => {
    const actual = { status: 500, head: { ok: false, code: 'X', topic: 'other', meta: { title: 'W', current_block: null, uri: 'file://~/w.md' } }, content: 'anything' };
    expect(compareAnswer(1, { head: { meta } }, actual, [])).toBeNull();
    expect(compareAnswer(1, {}, actual, [])).toBeNull();
  });

  it('one changed content line: a unified diff of expected vs actual naming the step', () => {
    const expected = { status: 200, content: 're: [r2] /open ~/w.md\n# W\nSunny' };
    const actual = { status: 200, content: 're: [r2] /open ~/w.md\n# W\nRainy' };
    expect(compareAnswer(3, expected, actual, [])).toBe([
      '--- expected (step 3)',
      '+++ actual (step 3)',
      '@@ -2,4 +2,4 @@',
      ' content:',
      ' re: [r2] /open ~/w.md',
      ' # W',
      '-Sunny',
      '+Rainy',
    ].join('\n'));
  });

  it('a different status, code or missing head field shows in the diff', () => {
    const diff = compareAnswer(7, { status: 200, head: { ok: true, code: null } }, { status: 429, error: { error: 'Queue full' } }, []);
    expect(diff).toContain('-status: 200\n-ok: true\n-code: null\n+status: 429\n+ok: (none)\n+code: (none)');
  });
});
