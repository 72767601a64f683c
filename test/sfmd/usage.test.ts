import { describe, expect, it } from '@jest/globals';
import { parseDocument } from '../../src/sfmd/parse.js';
import { actionHelp, usageLine, wantsHelp } from '../../src/sfmd/usage.js';
import { parseNavFile } from '../../src/sfmd/links.js';
import { slug } from '../../src/sfmd/anchors.js';

const F = '```';
const search = parseDocument([
  `${F}act.search`,
  'GET https://api.test/search?q={query} -H "Authorization: Bearer $TOKEN"',
  '  query, -q: string (required) "Search terms"',
  '  repo: tuple (required) "Repository"',
  '  state, -s: string (optional, open|closed) "Issue state" = "open"',
  '  limit: number (min:1, max:100) "Max results" = "20"',
  '  verbose, -v: boolean',
  '  body: POSTED', // an unrecognised line: never part of the help
  F,
].join('\n')).actions[0];

describe('actionHelp (behaviour.md §5.5)', () => {
  it('when an action has fields, then the help lists usage, padded field lines, positional order and the -file note', () => {
    expect(actionHelp(search)).toEqual({
      system: 'Action: search',
      lines: [
        'Usage: /act.search <query> <repo> [--state <string>] [--limit <number>] [--verbose]',
        '  --query, -q <string>   required  Search terms',
        '  --repo <tuple>         required  Repository; @name-N from a list, or "a,b"',
        '  --state, -s <string>   optional  Issue state; one of open|closed; default "open"',
        '  --limit <number>       optional  Max results; min:1 max:100; default "20"',
        '  --verbose, -v          optional  boolean flag',
        'Positional order: query, repo',
        'Any field also accepts --<field>-file <path>.',
      ],
    });
  });
  it('when the help is built, then method, URL, headers and body never appear', () => {
    const text = actionHelp(search).lines.join('\n');
    for (const secret of ['GET', 'api.test', 'Authorization', 'TOKEN', 'POSTED']) expect(text).not.toContain(secret);
  });
  it('when an action has no fields, then the usage stands alone', () => {
    const a = parseDocument(`${F}act.now\nCLI date\n${F}\n`).actions[0];
    expect(actionHelp(a).lines).toEqual(['Usage: /act.now', '  (no fields)']);
    expect(usageLine(a)).toBe('Usage: /act.now');
  });
  it('when hints exist, then they follow the enumeration', () => {
    const a = parseDocument(`${F}act.h\nGET https://x.test/\n  q: string (lowercase) "Q"\n${F}\n`).actions[0];
    expect(actionHelp(a).lines[1]).toBe('  --q <string>   optional  Q; lowercase');
  });
});

describe('wantsHelp (behaviour.md §5.3 step 1)', () => {
  it.each([
    ['--help', true], ['x --help', true], ['-h', true], ['"--help"', false], ["'--help'", false], ['\\--help', false],
    ['-- --help', false], ['x -- -h', false], ['--helpme', false], ['', false], ['"unterminated --help', false],
  ])('when the arguments are %p, then help is %p', (args, want) => {
    expect(wantsHelp(args as string, search)).toBe(want);
  });
  it('when a field declares alias h, then -h is that field, not help', () => {
    const a = parseDocument(`${F}act.x\nGET https://x.test/\n  host, -h: string\n${F}\n`).actions[0];
    expect(wantsHelp('-h example.org', a)).toBe(false);
    expect(wantsHelp('--help', a)).toBe(true);
  });
});

describe('parseNavFile (behaviour.md §3.8)', () => {
  it('when a nav file lists links, then [@id Label] gives id and [Label] the slug (duplicates -2, -3)', () => {
    expect(parseNavFile('- [@home Home](../string.md)\n- [Pull Requests](prs.md)\n\nSee [Pull Requests](other.md) and [Pull Requests](third.md)\n')).toEqual([
      { id: 'home', label: 'Home', href: '../string.md' },
      { id: 'pull-requests', label: 'Pull Requests', href: 'prs.md' },
      { id: 'pull-requests-2', label: 'Pull Requests', href: 'other.md' },
      { id: 'pull-requests-3', label: 'Pull Requests', href: 'third.md' },
    ]);
  });
  it('when a nav file has more than 200 links, then the first 200 are entries', () => {
    expect(parseNavFile(Array.from({ length: 250 }, (_, i) => `[E${i}](e${i}.md)`).join('\n')).length).toBe(200);
  });
});

describe('slug (behaviour.md §3.5)', () => {
  it.each([['Hello, World!', 'hello-world'], ['Ünïcode 日本 _x-y', 'ünïcode-日本-_x-y'], ['A  B', 'a--b'], ['?!', '']])('when the heading is %p, then the slug is %p', (t, s) => {
    expect(slug(t)).toBe(s);
  });
});
