import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { failLine, freshHex, initLine, parseReport, recoveryLine, runLine, SentinelScanner, sentinelCommand, sentinelTag, shellQuote } from '../../src/effects/shellProtocol.js';

/** Feed `chunks` to a scanner for `hex`; returns the bytes passed on and the report. */
function scan(hex: string, chunks: Array<string | Buffer>) {
  const got: Buffer[] = [];
  const s = new SentinelScanner(sentinelTag(hex), (b) => got.push(Buffer.from(b)));
  let report = null;
  for (const c of chunks) {
    const r = s.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
    if (r) { report = r; break; }
  }
  return { before: Buffer.concat(got).toString(), report, scanner: s, got };
}

describe('behaviour.md §8.3 completion protocol', () => {
  const hex = '0123456789abcdef';

  it('a fresh sentinel is 16 hex digits, different each time', () => {
    const seen = new Set(Array.from({ length: 1000 }, () => freshHex()));
    expect(seen.size).toBe(1000);
    for (const h of seen) expect(h).toMatch(/^[0-9a-f]{16}$/);
  });

  it('the typed lines never hold the sentinel as one string (an echo of the line cannot end a command)', () => {
    const tag = sentinelTag(hex).toString().slice(1);
    for (const line of [initLine(hex, true), initLine(hex, false), runLine('/tmp/x', hex), recoveryLine(hex), failLine('m', hex)]) {
      expect(line).not.toContain(tag);
      expect(line).not.toContain(`__LOOM_DONE_${hex}`);
      expect(line.endsWith('\n')).toBe(true);
      expect(line.slice(0, -1)).not.toContain('\n');
    }
    expect(runLine("/tmp/it's", hex)).toBe(`. '/tmp/it'\\''s' </dev/null; ${sentinelCommand(hex)}\n`);
    expect(initLine(hex, true).startsWith('stty -echo')).toBe(true);
  });

  it('bash prints exactly the sentinel line the scanner looks for, with status and cwd', () => {
    const r = spawnSync('/bin/bash', ['--noprofile', '--norc', '-c', `cd /tmp; (exit 7); ${sentinelCommand(hex)}`], { encoding: 'utf8' });
    expect(r.stdout).toBe(`\n__LOOM_DONE_${hex}__|7|/tmp\n`);
    expect(scan(hex, [r.stdout]).report).toEqual({ exitCode: 7, cwd: '/tmp' });
    // A user's printf function or alias does not take the sentinel over.
    const hostile = spawnSync('/bin/bash', ['--noprofile', '--norc', '-c', `printf() { echo fake; }; ${sentinelCommand(hex)}`], { encoding: 'utf8' });
    expect(hostile.stdout).toBe(`\n__LOOM_DONE_${hex}__|0|/work/wt/issue-15\n`.replace('/work/wt/issue-15', process.cwd()));
  });

  it('shell quoting survives quotes, spaces and newlines', () => {
    for (const s of ["it's", 'a b', 'x\ny', '$HOME `id`', "''"]) {
      expect(spawnSync('/bin/bash', ['-c', `printf %s ${shellQuote(s)}`], { encoding: 'utf8' }).stdout).toBe(s);
    }
  });

  it('the failure line prints its message to stderr and ends with status 1', () => {
    const r = spawnSync('/bin/bash', ['--noprofile', '--norc'], { input: failLine("loom: can't write", hex), encoding: 'utf8' });
    expect(r.stderr).toBe("loom: can't write\n");
    expect(scan(hex, [r.stdout]).report).toEqual({ exitCode: 1, cwd: process.cwd() });
  });

  it.each([1, 2, 3, 7, 13, 36, 64])('when the output arrives in chunks of %i bytes, then everything before the sentinel is passed on once and the report is read', (size) => {
    const text = `line one\nline two without end__LOOM_DONE_${hex}` + `\n__LOOM_DONE_${hex}__|3|/home/leo/src dir\nafter`;
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += size) chunks.push(text.slice(i, i + size));
    const r = scan(hex, chunks);
    expect(r.before).toBe(`line one\nline two without end__LOOM_DONE_${hex}`);
    expect(r.report).toEqual({ exitCode: 3, cwd: '/home/leo/src dir' });
  });

  it('when the output holds other sentinels, a sentinel without its leading newline, or a prefix of the tag, then they are output', () => {
    const hostile = [
      `__LOOM_DONE_${'f'.repeat(16)}__|0|/\n`,
      `\n__LOOM_DONE_${hex.slice(0, 15)}__|0|/\n`,
      `x__LOOM_DONE_${hex}__|0|/\n`,
      `\n__LOOM_DONE_`,
    ].join('');
    const r = scan(hex, [hostile, `\n__LOOM_DONE_${hex}__|0|/x\n`]);
    expect(r.before).toBe(hostile);
    expect(r.report).toEqual({ exitCode: 0, cwd: '/x' });
  });

  it('bytes are held back only while they could start the sentinel, and flush releases them', () => {
    const r = scan(hex, ['abc\n__LOOM_DO']);
    expect(r.before).toBe('abc');
    expect(r.report).toBeNull();
    r.scanner.flush();
    expect(Buffer.concat(r.got).toString()).toBe('abc\n__LOOM_DO');
    expect(scan(hex, ['plain text']).before).toBe('plain text');
  });

  it('multi-byte characters split across chunks stay intact', () => {
    const text = Buffer.from(`héllo ✓ 日本\n__LOOM_DONE_${hex}__|0|/tmp/ü\n`);
    const r = scan(hex, [text.subarray(0, 2), text.subarray(2, 9), text.subarray(9)]);
    expect(r.before).toBe('héllo ✓ 日本');
    expect(r.report).toEqual({ exitCode: 0, cwd: '/tmp/ü' });
  });

  it('reports are parsed leniently: a CR left by stty onlcr is dropped, a garbled status reads as 1', () => {
    expect(parseReport('0|/tmp\r')).toEqual({ exitCode: 0, cwd: '/tmp' });
    expect(parseReport('x|/a|b')).toEqual({ exitCode: 1, cwd: '/a|b' });
    expect(parseReport('5')).toEqual({ exitCode: 5, cwd: '' });
  });
});
