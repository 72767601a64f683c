import { describe, expect, it } from '@jest/globals';
import { bindArguments, type BindContext, type BindOutcome, type FieldFileRead } from '../../src/sfmd/bind.js';
import type { ShortcutValue } from '../../src/domain/session.js';
import { cli, f, req } from './helpers.js';

/** A pure binding world. */
function bctx(opts: { shortcuts?: Record<string, ShortcutValue>; vars?: Record<string, string>; store?: Record<string, string>; defs?: Record<string, string>; files?: Record<string, FieldFileRead> } = {}): BindContext {
  return {
    home: '/home/leo',
    vars: new Map(Object.entries(opts.vars ?? {})),
    shortcut: (n) => opts.shortcuts?.[n],
    knownShortcuts: () => Object.keys(opts.shortcuts ?? {}),
    storeDollar: (n) => opts.store?.[n],
    definitionDollar: (n) => opts.defs?.[n] ?? opts.store?.[n],
    readFieldFile: (p) => opts.files?.[p] ?? { ok: false, kind: 'unreadable', display: p, reason: 'no such file' },
  };
}

const search = cli('search', 'echo', [
  req('query', 'string', { alias: 'q' }),
  req('repo', 'tuple'),
  f('state', 'string', { alias: 's', default: 'open', allowed: ['open', 'closed'] }),
  f('limit', 'number', { min: 1, max: 100, default: '20' }),
  f('verbose', 'boolean', { alias: 'v' }),
]);

/** Bound values as plain data. */
function values(o: BindOutcome): Record<string, unknown> {
  if (o.kind !== 'ok') throw new Error(`not ok: ${JSON.stringify(o)}`);
  return Object.fromEntries([...o.fields].filter(([, b]) => b.value !== undefined).map(([k, b]) => [k, b.value]));
}

const bind = (args: string, c = bctx(), a = search) => bindArguments(a, args, c);

describe('behaviour.md §5.3 binding: flags', () => {
  it('when --name value, --name=value and -n value are used, then each sets its field', () => {
    expect(values(bind('--query cats --repo a,b'))).toMatchObject({ query: 'cats', repo: ['a', 'b'] });
    expect(values(bind('--query=cats --repo=a'))).toMatchObject({ query: 'cats', repo: ['a'] });
    expect(values(bind('-q cats --repo a -s closed'))).toMatchObject({ query: 'cats', state: 'closed' });
  });

  it('when a boolean flag has no value, then it is true', () => {
    expect(values(bind('x r --verbose'))).toMatchObject({ verbose: 'true' });
    expect(values(bind('x r -v'))).toMatchObject({ verbose: 'true' });
  });

  it('when a boolean flag is followed by a boolean literal, then it takes it (quoted or not)', () => {
    expect(values(bind('--verbose no x r'))).toMatchObject({ verbose: 'false', query: 'x' });
    expect(values(bind('--verbose "OFF" x r'))).toMatchObject({ verbose: 'false' });
    expect(values(bind('--verbose 1 x r'))).toMatchObject({ verbose: 'true' });
  });

  it('when a boolean flag is followed by another value, then it is true and the value is positional (§5.3 edge case)', () => {
    const a = cli('x', 'echo', [f('verbose', 'boolean'), req('msg')]);
    expect(values(bind('--verbose fv', bctx(), a))).toEqual({ verbose: 'true', msg: 'fv' });
  });

  it('when a quoted value starts with -, then it is a value, not a flag', () => {
    expect(values(bind('"-rf" r'))).toMatchObject({ query: '-rf' });
    const a = cli('x', 'echo', [req('y')]);
    expect(values(bind('"--y"', bctx(), a))).toEqual({ y: '--y' });
  });

  it('when a number flag is followed by a negative number, then it takes it', () => {
    const a = cli('x', 'echo', [req('lon', 'number')]);
    expect(values(bind('--lon -74.01', bctx(), a))).toEqual({ lon: '-74.01' });
  });

  it('when --q= is given, then the field has an explicit empty value', () => {
    const o = bind('x r --state=');
    expect(o.kind).toBe('error');
    const a = cli('x', 'echo', [f('q')]);
    const b = bind('--q=', bctx(), a);
    if (b.kind !== 'ok') throw new Error();
    expect(b.fields.get('q')).toMatchObject({ value: '', fromDefault: false });
  });

  it('when a non-boolean flag has no value, then INVALID_ARGS needs a value', () => {
    expect(bind('--query')).toEqual({ kind: 'error', code: 'INVALID_ARGS', message: '--query needs a value (string)', recovery: '/act.search --help' });
    expect(bind('--limit --verbose')).toMatchObject({ message: '--limit needs a value (number)' });
  });

  it('when a flag is unknown, then the error lists the flags and recovers with --help', () => {
    expect(bind('--nope 1')).toEqual({
      kind: 'error', code: 'INVALID_ARGS', message: 'Unknown flag --nope for /act.search',
      details: ['Flags: --query, -q, --repo, --state, -s, --limit, --verbose, -v'], recovery: '/act.search --help',
    });
    expect(bind('-z')).toMatchObject({ message: 'Unknown flag -z for /act.search' });
  });

  it('when a field is given twice (flag, alias), then it is an error', () => {
    expect(bind('--query a -q b')).toMatchObject({ code: 'INVALID_ARGS', message: '--query given more than once', recovery: '/act.search --help' });
  });
});

describe('behaviour.md §5.3 binding: positionals and --', () => {
  it('when bare values are given, then they bind to required fields in declaration order', () => {
    expect(values(bind('cats owner,repo'))).toMatchObject({ query: 'cats', repo: ['owner', 'repo'] });
  });

  it('when a required field is set by a flag, then positionals skip it', () => {
    expect(values(bind('--query cats a,b'))).toMatchObject({ query: 'cats', repo: ['a', 'b'] });
  });

  it('when optional fields exist, then they are never bound positionally', () => {
    expect(bind('a b c')).toEqual({
      kind: 'error', code: 'INVALID_ARGS', message: 'Too many positional values for /act.search: 3 given, 2 expected (query, repo)',
      recovery: 'pass optional fields as flags (--name value); put -- before values that start with -',
    });
  });

  it('when a bare value is given for an optional field, then the Recovery line is the exact flag form', () => {
    const now = cli('now', 'echo', [f('city', 'string'), f('units', 'string', { allowed: ['metric', 'imperial'] })]);
    expect(bind('"New York"', bctx(), now)).toEqual({
      kind: 'error', code: 'INVALID_ARGS', message: 'Too many positional values for /act.now: 1 given, 0 expected (none)',
      recovery: '/act.now --city "New York"',
    });
    const two = cli('two', 'echo', [f('city', 'string'), f('country', 'string')]);
    expect(bind('seoul', bctx(), two)).toMatchObject({ recovery: '/act.two --city seoul (other optional fields that fit: --country)' });
    const forecast = cli('forecast', 'echo', [f('city', 'string')]);
    expect(bind('seoul', bctx(), forecast)).toMatchObject({ recovery: '/act.forecast --city seoul' });
    expect(bind('\'say "hi" \\o/\'', bctx(), forecast)).toMatchObject({ recovery: '/act.forecast --city "say \\"hi\\" \\\\o/"' });
    expect(bind('-- -5', bctx(), forecast)).toMatchObject({ recovery: '/act.forecast --city "-5"' });
  });

  it('when the extra value fits only a later optional field, then that field is named; flags given are kept', () => {
    expect(bind('a b 5')).toMatchObject({ recovery: '/act.search a b --limit 5' });
    expect(bind('--verbose x r closed')).toMatchObject({ recovery: '/act.search x r --verbose --state closed' });
    expect(bind('-q "two words" r 7 closed')).toMatchObject({ recovery: '/act.search r --query "two words" --limit 7 --state closed' });
  });

  it('when every required field is already set, then any positional is too many', () => {
    expect(bind('--query a --repo b c')).toMatchObject({ message: 'Too many positional values for /act.search: 1 given, 0 expected (none)' });
  });

  it('when -- appears, then every later token is positional (§5.3 edge case)', () => {
    const a = cli('x', 'echo', [req('a'), req('b')]);
    expect(values(bind('-- -5 --z', bctx(), a))).toEqual({ a: '-5', b: '--z' });
  });

  it('when --help appears before --, then help is asked for; after -- it is a value', () => {
    expect(bind('x --help')).toEqual({ kind: 'help' });
    expect(bind('-h')).toEqual({ kind: 'help' });
    const a = cli('x', 'echo', [req('a')]);
    expect(values(bind('-- --help', bctx(), a))).toEqual({ a: '--help' });
  });

  it('when a field declares alias h, then -h is that field, not help', () => {
    const a = cli('x', 'echo', [f('host', 'string', { alias: 'h' })]);
    expect(values(bind('-h example', bctx(), a))).toEqual({ host: 'example' });
  });

  it('when required fields are missing, then binding reports them (with defaults filling others)', () => {
    expect(bind('')).toMatchObject({ kind: 'missing' });
    const o = bind('--repo a');
    if (o.kind !== 'missing') throw new Error();
    expect(o.missing.map((m) => m.name)).toEqual(['query']);
  });

  it('when a required field has a default, then it is filled positionally first and else takes its default', () => {
    const a = cli('x', 'echo', [req('a', 'string', { default: 'A' }), req('b')]);
    expect(values(bind('1 2', bctx(), a))).toEqual({ a: '1', b: '2' });
    expect(bind('1', bctx(), a)).toMatchObject({ kind: 'missing' });
    expect(values(bind('--b 2', bctx(), a))).toEqual({ a: 'A', b: '2' });
  });
});

describe('behaviour.md §5.4 --<field>-file', () => {
  const file = (text: string): FieldFileRead => ({ ok: true, data: Buffer.from(text), display: '~/note.txt' });
  const a = cli('note', 'echo', [req('text'), f('title')]);

  it('when --text-file names a readable file, then its content is the value verbatim', () => {
    const c = bctx({ files: { 'note.txt': file('hello {x}\n'), }, vars: { x: 'X' } });
    expect(values(bind('--text-file note.txt', c, a))).toEqual({ text: 'hello {x}\n' });
    expect(values(bind('--text-file=note.txt', c, a))).toEqual({ text: 'hello {x}\n' });
  });

  it('when both --text and --text-file are given, then it is an error', () => {
    const c = bctx({ files: { 'n': file('x') } });
    expect(bind('--text a --text-file n', c, a)).toMatchObject({ code: 'INVALID_ARGS', message: 'Give either --text or --text-file, not both' });
    expect(bind('--text-file n --text-file n', c, a)).toMatchObject({ message: '--text given more than once' });
  });

  it('when the file is unreadable, then Cannot read names the reason', () => {
    const c = bctx({ files: { d: { ok: false, kind: 'unreadable', display: '~/d', reason: 'is a directory' } } });
    expect(bind('--text-file d', c, a)).toEqual({ kind: 'error', code: 'INVALID_ARGS', message: 'Cannot read --text-file ~/d: is a directory', recovery: '/act.note --help' });
    expect(bind('--text-file missing', bctx(), a)).toMatchObject({ message: 'Cannot read --text-file missing: no such file' });
  });

  it('when the file is over 1 MiB, then it is too large', () => {
    const c = bctx({ files: { big: { ok: false, kind: 'tooLarge', display: '~/big', size: 1048577 } } });
    expect(bind('--text-file big', c, a)).toMatchObject({ message: '--text-file ~/big is too large: 1048577 bytes (limit 1048576)' });
  });

  it.each(['cost $5', 'run `id`'])('when the content contains $ or a backtick (%s), then it is refused', (text) => {
    const c = bctx({ files: { n: file(text) } });
    expect(bind('--text-file n', c, a)).toMatchObject({ message: '--text-file ~/note.txt contains $ or a backtick; file values may not contain them' });
  });

  it('when --text-file has no path, then it needs a value', () => {
    expect(bind('--text-file', bctx(), a)).toEqual({ kind: 'error', code: 'INVALID_ARGS', message: '--text-file needs a value (path)', recovery: '/act.note --help' });
  });

  it('when the path is outside the workspace, then FORBIDDEN', () => {
    const c = bctx({ files: { '/etc/passwd': { ok: false, kind: 'forbidden', display: '/etc/passwd' } } });
    expect(bind('--text-file /etc/passwd', c, a)).toEqual({ kind: 'error', code: 'FORBIDDEN', message: 'Path outside the workspace: /etc/passwd' });
  });

  it('when --x-file names no declared field, then it is an ordinary (unknown) flag', () => {
    expect(bind('--body-file n', bctx(), a)).toMatchObject({ message: 'Unknown flag --body-file for /act.note' });
  });

  it('when a field is itself named <f>-file, then --<f>-file sets that field', () => {
    const b = cli('x', 'echo', [f('text'), f('text-file')]);
    expect(values(bind('--text-file plain', bctx(), b))).toEqual({ 'text-file': 'plain' });
  });

  it('when the file value fails its type check, then the type error is reported', () => {
    const b = cli('x', 'echo', [req('n', 'number')]);
    expect(bind('--n-file n', bctx({ files: { n: file('abc') } }), b)).toMatchObject({ message: 'Invalid value for --n: "abc" is not a number' });
  });
});

describe('behaviour.md §5.3 step 4: shortcuts and variables in values', () => {
  const a = cli('read', 'echo', [req('issue', 'tuple'), f('note')]);

  it('when a value is a tuple shortcut, then the field gets its slots', () => {
    expect(values(bind('@issue-1', bctx({ shortcuts: { 'issue-1': ['o/r', '31'] } }), a))).toEqual({ issue: ['o/r', '31'] });
  });

  it('when a scalar shortcut goes to a tuple field, then it is a 1-slot tuple; to a string field it is the text', () => {
    const c = bctx({ shortcuts: { city: '37.5,127', post: 'p1' } });
    expect(values(bind('@city --note @post', c, a))).toEqual({ issue: ['37.5,127'], note: 'p1' });
  });

  it('when a shortcut is unknown, then NOT_FOUND lists the known ones (first 12)', () => {
    const shortcuts = Object.fromEntries(Array.from({ length: 14 }, (_, i) => [`s-${i + 1}`, 'v']));
    const o = bind('@nope', bctx({ shortcuts }), a);
    expect(o).toMatchObject({ kind: 'error', code: 'NOT_FOUND', message: 'Unknown shortcut: @nope' });
    expect((o as { details: string[] }).details).toEqual([`Known: ${Array.from({ length: 12 }, (_, i) => `@s-${i + 1}`).join(', ')}`]);
    expect(bind('@nope', bctx(), a)).toMatchObject({ details: ['No shortcuts in this topic yet.'] });
  });

  it('when a value starts with @@, then it is a literal @', () => {
    expect(values(bind('x --note @@me', bctx(), a))).toMatchObject({ note: '@me' });
  });

  it('when @ is part of other text, then the value is literal', () => {
    expect(values(bind('x --note "@bob said hi"', bctx(), a))).toMatchObject({ note: '@bob said hi' });
  });

  it('when a value holds {var} and $NAME, then known session and store variables are substituted once', () => {
    const c = bctx({ vars: { who: 'Ann', loop: '{who}' }, store: { CITY: 'Seoul' } });
    expect(values(bind('x --note "{who} in $CITY / ${CITY} {loop} {nope} $NOPE"', c, a))).toMatchObject({ note: 'Ann in Seoul / Seoul {who} {nope} $NOPE' });
  });

  it('when $NAME is only in the process environment, then a caller value keeps it literal', () => {
    expect(values(bind('x --note $HOME', bctx(), a))).toMatchObject({ note: '$HOME' });
  });

  it('when a default holds {var} and $NAME, then they are substituted from the definitions chain', () => {
    const b = cli('x', 'echo', [f('city', 'string', { default: '$CITY' }), f('who', 'string', { default: '{who} ({role})' })]);
    const o = bind('', bctx({ defs: { CITY: 'Tokyo' }, vars: { who: 'Ann' } }), b);
    expect(values(o)).toEqual({ city: 'Tokyo', who: 'Ann ({role})' });
    expect(o).toMatchObject({ warnings: [] });
  });

  it('when a default names an unset $NAME, then it stays literal with the warning', () => {
    const b = cli('x', 'echo', [f('city', 'string', { default: '$CITY' })]);
    const o = bind('', bctx(), b);
    expect(values(o)).toEqual({ city: '$CITY' });
    expect(o).toMatchObject({ warnings: ['warning: $CITY is not set (sent literally); set it with /set $CITY = "..."'] });
  });
});

describe('behaviour.md §4.4 / §5.6 types and constraints', () => {
  const one = (type: Parameters<typeof f>[1], extra = {}) => cli('x', 'echo', [req('v', type, extra)]);

  it.each([
    ['number', '12', '12'], ['number', '-0.5', '-0.5'], ['number', '1e3', '1e3'], ['number', '.5', '.5'],
    ['boolean', 'YES', 'true'], ['boolean', 'off', 'false'], ['boolean', '0', 'false'],
    ['path', '~/x.txt', '/home/leo/x.txt'], ['path', 'rel/y', '/home/leo/rel/y'], ['path', '/abs', '/abs'],
    ['tuple', '(a, b)', ['a', 'b']], ['tuple', 'a, "b,c"', ['a', 'b,c']], ['tuple', 'solo', ['solo']],
  ])('when a %s field gets %s, then its normal form is %j', (type, input, out) => {
    expect(values(bind(`-- "${input.replace(/"/g, '\\"')}"`, bctx(), one(type as 'string')))).toEqual({ v: out });
  });

  it.each([
    ['number', 'abc', 'Invalid value for --v: "abc" is not a number'],
    ['number', '1.2.3', 'Invalid value for --v: "1.2.3" is not a number'],
    ['boolean', 'maybe', 'Invalid value for --v: "maybe" is not a boolean (use true or false)'],
    ['tuple', '(a, b', 'Invalid value for --v: expected a tuple (@name-N or "a,b")'],
    ['tuple', '', 'Invalid value for --v: expected a tuple (@name-N or "a,b")'],
  ])('when a %s field gets %j, then INVALID_ARGS says %s', (type, input, message) => {
    expect(bind(`-- "${input}"`, bctx(), one(type as 'string'))).toEqual({ kind: 'error', code: 'INVALID_ARGS', message, recovery: '/act.x --help' });
  });

  it.each([
    [{ allowed: ['open', 'closed'] }, 'string', 'all', 'Invalid value for --v: "all" (allowed: open|closed)'],
    [{ min: 1 }, 'number', '0', 'Invalid value for --v: 0 is below min:1'],
    [{ max: 100 }, 'number', '101', 'Invalid value for --v: 101 is above max:100'],
    [{ min: 3 }, 'string', 'ab', 'Invalid value for --v: shorter than min:3 characters'],
    [{ max: 3 }, 'string', 'abcd', 'Invalid value for --v: longer than max:3 characters'],
  ])('when constraint %j is broken, then the §5.6 text is used', (extra, type, input, message) => {
    expect(bind(`-- ${input}`, bctx(), one(type as 'string', extra))).toMatchObject({ message });
  });

  it('when length constraints count characters, then multi-byte text counts by character', () => {
    expect(values(bind('-- 한국어', bctx(), one('string', { max: 3 })))).toEqual({ v: '한국어' });
  });

  it('when a value contains a NUL byte, then it is refused', () => {
    expect(bind('-- "a\u0000b"', bctx(), one('string'))).toMatchObject({ message: 'Value for --v contains a NUL byte' });
  });

  it('when the arguments have an unterminated quote, then INVALID_ARGS', () => {
    expect(bind('"abc')).toEqual({ kind: 'error', code: 'INVALID_ARGS', message: 'Unterminated quote in the arguments', recovery: '/act.search --help' });
  });
});
