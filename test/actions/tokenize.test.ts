import { describe, expect, it } from '@jest/globals';
import { asFlag, isEndOfOptions, tokenize } from '../../src/sfmd/tokenize.js';

const texts = (s: string) => {
  const r = tokenize(s);
  if (!r.ok) throw new Error(r.message);
  return r.tokens.map((t) => t.text);
};

describe('behaviour.md §5.2 tokenizer', () => {
  it('when tokens are separated by spaces, tabs and newlines, then each is one token', () => {
    expect(texts('a  b\tc\nd')).toEqual(['a', 'b', 'c', 'd']);
  });

  it('when a value is double-quoted, then \\" and \\\\ are escapes and other backslashes stay literal', () => {
    expect(texts('"a \\"b\\" \\\\ \\n"')).toEqual(['a "b" \\ \\n']);
  });

  it('when a value is single-quoted, then nothing inside is an escape', () => {
    expect(texts("'a \\\" b'")).toEqual(['a \\" b']);
  });

  it('when a backslash stands outside quotes, then it escapes the next character', () => {
    expect(texts('a\\ b c')).toEqual(['a b', 'c']);
  });

  it('when quoted and unquoted pieces touch, then they form one token', () => {
    expect(texts('ab"c d"\'e\'f')).toEqual(['abc def']);
  });

  it('when a quoted value is empty, then it is an empty token', () => {
    expect(texts('--q ""')).toEqual(['--q', '']);
  });

  it('when a quoted value spans lines, then the newline is part of the value', () => {
    expect(texts('"line1\nline2" x')).toEqual(['line1\nline2', 'x']);
  });

  it.each(['"abc', "'abc", 'a "b'])('when a quote is unterminated (%s), then the tokenizer fails with the exact text', (s) => {
    expect(tokenize(s)).toEqual({ ok: false, message: 'Unterminated quote in the arguments' });
  });
});

describe('behaviour.md §5.2 flags', () => {
  const tok = (s: string) => { const r = tokenize(s); if (!r.ok) throw new Error(); return r.tokens[0]; };

  it.each([
    ['--name', { kind: 'long', name: 'name', raw: '--name' }],
    ['--name=value', { kind: 'long', name: 'name', raw: '--name', value: 'value' }],
    ['--q=', { kind: 'long', name: 'q', raw: '--q', value: '' }],
    ['-n', { kind: 'short', name: 'n', raw: '-n' }],
    ['--my-field_2', { kind: 'long', name: 'my-field_2', raw: '--my-field_2' }],
  ])('when the unquoted token is %s, then it is a flag', (s, flag) => {
    expect(asFlag(tok(s))).toEqual(flag);
  });

  it.each(['"--name"', "'-n'", '-5', '-0.5', '-', '--1x', '-ab', '\\-\\-name'])('when the token is %s, then it is a value', (s) => {
    expect(asFlag(tok(s))).toBeNull();
  });

  it('when only the value part of --name=value is quoted, then it is still a flag with that value', () => {
    expect(asFlag(tok('--msg="a b"'))).toEqual({ kind: 'long', name: 'msg', raw: '--msg', value: 'a b' });
  });

  it('when the flag part itself is quoted, then the token is a value', () => {
    expect(asFlag(tok('"--msg"=x'))).toBeNull();
  });

  it('when -- is unquoted, then it ends options; quoted it is a value', () => {
    expect(isEndOfOptions(tok('--'))).toBe(true);
    expect(isEndOfOptions(tok('"--"'))).toBe(false);
  });
});
