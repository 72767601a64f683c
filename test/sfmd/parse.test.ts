import { describe, expect, it } from '@jest/globals';
import { parseDocument, warningLine } from '../../src/sfmd/parse.js';
import type { ActionDoc } from '../../src/sfmd/types.js';

const F = '```';
const ws = (d: ActionDoc) => d.warnings.map(warningLine);
const act = (body: string, id = 'a') => `${F}act.${id}\n${body}\n${F}\n`;
const one = (body: string) => parseDocument(act(body));

describe('parseDocument: frontmatter (behaviour.md §3.9)', () => {
  it('when title is in the frontmatter, then it is the title (stringified)', () => {
    expect(parseDocument('---\ntitle: Weather\n---\n# Other\n').title).toBe('Weather');
    expect(parseDocument('---\ntitle: 42\n---\n').title).toBe('42');
  });
  it('when there is no frontmatter title, then the first level-1 heading is the title, else null', () => {
    expect(parseDocument('## Two\n# One {#x}\n# Later\n').title).toBe('One');
    expect(parseDocument('no heading\n').title).toBeNull();
  });
  it('when default names a declared action, then it is the default action', () => {
    const d = parseDocument(`---\ndefault: now\n---\n${act('GET https://x.test/', 'now')}`);
    expect(d.defaultAction).toBe('now');
    expect(d.warnings).toEqual([]);
  });
  it('when default names no declared action, then it warns without a line and has no default', () => {
    const d = parseDocument('---\ndefault: home\n---\ntext\n');
    expect(d.defaultAction).toBeUndefined();
    expect(ws(d)).toEqual(['warning: default: action "home" is not declared']);
  });
  it('when env uses every form, then each entry declares one $NAME', () => {
    const d = parseDocument([
      '---', 'env:', '  - CITY: "City to report on"', '    default: "Seoul"', '  - name: NOTION_TOKEN', '    description: Integration token',
      '    required: false', '  - API_BASE', '  - $DOLLAR', '---', '',
    ].join('\n'));
    expect(d.env).toEqual([
      { name: 'CITY', description: 'City to report on', default: 'Seoul', required: true },
      { name: 'NOTION_TOKEN', description: 'Integration token', required: false },
      { name: 'API_BASE', required: true },
      { name: 'DOLLAR', required: true },
    ]);
  });
  it('when env is a map, then string values are descriptions and objects carry description and default', () => {
    const d = parseDocument('---\nenv:\n  CITY: "City"\n  UNITS: { description: "metric or imperial", default: "metric" }\n  BARE:\n---\n');
    expect(d.env).toEqual([
      { name: 'CITY', description: 'City', required: true },
      { name: 'UNITS', description: 'metric or imperial', default: 'metric', required: true },
      { name: 'BARE', required: true },
    ]);
  });
  it('when an env name is invalid, then it is ignored with a warning', () => {
    expect(ws(parseDocument('---\nenv:\n  - "9BAD"\n---\n'))).toEqual(['warning: env: "9BAD" is not a valid variable name; ignored']);
  });
  it('when requires is a list, a flow list or a string, then the names are read and $ is dropped', () => {
    expect(parseDocument('---\nrequires:\n  - A\n  - $B\n---\n').requires).toEqual(['A', 'B']);
    expect(parseDocument('---\nrequires: [OWNER, PROJECT_NUMBER]\n---\n').requires).toEqual(['OWNER', 'PROJECT_NUMBER']);
    expect(parseDocument('---\nrequires: "A, B C"\n---\n').requires).toEqual(['A', 'B', 'C']);
  });
  it('when a requires name is invalid, then it warns with the §3.10 text', () => {
    const d = parseDocument('---\nrequires: [GOOD, bad-name]\n---\n');
    expect(d.requires).toEqual(['GOOD']);
    expect(ws(d)).toEqual(['warning: requires: "bad-name" is not a valid variable name; ignored']);
  });
  it('when the YAML is invalid, then the document opens without frontmatter and warns; line numbers still count it', () => {
    const d = parseDocument(`---\ntitle: x\n  bad: indent\n---\n${act('GET https://x.test/\n  q: wrong (required)')}`);
    expect(d.frontmatter).toEqual({});
    expect(d.title).toBeNull();
    expect(d.actions.map((a) => a.id)).toEqual(['a']);
    expect(ws(d)[0]).toMatch(/^warning: frontmatter is not valid YAML \(bad indentation of a mapping entry.* at line 3\); ignored$/);
    expect(ws(d)[1]).toBe('warning: line 7: act.a: unknown type "wrong" for field q; treated as string');
    expect(d.rendered).toBe('');
  });
  it('when the frontmatter is YAML but not key: value pairs, then it is ignored with a warning', () => {
    expect(ws(parseDocument('---\n- a\n- b\n---\ntext\n'))).toEqual(['warning: frontmatter is not valid YAML (expected key: value pairs); ignored']);
  });
  it('when the opening --- is never closed, then there is no frontmatter (a thematic break)', () => {
    const d = parseDocument('---\ntitle: x\n');
    expect(d.frontmatter).toEqual({});
    expect(d.rendered).toBe('---\ntitle: x');
  });
});

describe('parseDocument: act fences (behaviour.md §4.1)', () => {
  it('when backtick and tilde fences declare actions, then both count and text after the first word is ignored', () => {
    const d = parseDocument(`${F}act.one extra words\nGET https://x.test/1\n${F}\n~~~act.two\nCLI echo hi\n~~~\n`);
    expect(d.actions.map((a) => [a.id, a.kind, a.line])).toEqual([['one', 'http', 1], ['two', 'cli', 4]]);
  });
  it('when a response template stands before or after its action, then it is attached with its first line', () => {
    const d = parseDocument(`${F}act.b.response\nB {Response.status}\n${F}\n${act('GET https://x.test/', 'b')}${act('GET https://x.test/', 'c')}${F}act.c.response\nC\n\nmore\n${F}\n`);
    expect(d.actions[0].response).toEqual({ lines: ['B {Response.status}'], line: 2 });
    expect(d.actions[1].response).toEqual({ lines: ['C', '', 'more'], line: 11 });
  });
  it('when an outer fence is longer, then an inner fence stays inside the template', () => {
    const d = parseDocument(`${act('GET https://x.test/', 'x')}\`\`\`\`act.x.response\n${F}\ncode\n${F}\n\`\`\`\`\n`);
    expect(d.actions[0].response?.lines).toEqual([F, 'code', F]);
  });
  it('when a fence sits in a list item, then it is still an action', () => {
    const d = parseDocument(`- item\n\n  ${F}act.li\n  GET https://x.test/\n    q: string\n  ${F}\n`);
    expect(d.actions[0].fields.map((f) => f.name)).toEqual(['q']);
  });
  it('when an id is invalid, then the block is ignored with the §3.10 warning and hidden from the rendering', () => {
    const d = parseDocument(`text\n\n${F}act.Bad!\nGET https://x.test/\n${F}\n`);
    expect(d.actions).toEqual([]);
    expect(ws(d)).toEqual(['warning: line 3: invalid action id "Bad!" (use [a-z][a-z0-9_-]*, at most 64 characters); block ignored']);
    expect(d.rendered).toBe('text');
  });
  it('when an id is longer than 64 characters, then it is invalid', () => {
    const id = 'a'.repeat(65);
    expect(ws(parseDocument(act('GET https://x.test/', id)))[0]).toContain(`invalid action id "${id}"`);
  });
  it('when an id repeats, then the second block is ignored with a warning', () => {
    const d = parseDocument(act('GET https://x.test/1') + act('GET https://x.test/2'));
    expect(d.actions.map((a) => a.url)).toEqual(['https://x.test/1']);
    expect(ws(d)).toEqual(['warning: line 4: duplicate action id "a"; this block is ignored']);
  });
  it('when a response template has no action, or a second one exists, then each warns', () => {
    const d = parseDocument(`${F}act.z.response\nx\n${F}\n${act('GET https://x.test/')}${F}act.a.response\n1\n${F}\n${F}act.a.response\n2\n${F}\n`);
    expect(ws(d)).toEqual(['warning: line 1: act.z.response has no act.z block; ignored', 'warning: line 10: act.a: second response template ignored']);
    expect(d.actions[0].response?.lines).toEqual(['1']);
  });
});

describe('parseDocument: first line (behaviour.md §4.2)', () => {
  it.each(['GET', 'post', 'Put', 'PATCH', 'delete'])('when the method is %s, then it is read case-insensitively', (m) => {
    const a = one(`${m} https://x.test/{id}`).actions[0];
    expect([a.kind, a.method, a.url]).toEqual(['http', m.toUpperCase(), 'https://x.test/{id}']);
  });
  it('when -H flags follow the URL, then each declares a header (name before the first colon, value trimmed)', () => {
    const a = one('GET https://x.test/ -H "Authorization: Bearer $TOKEN" -H \'X-Json: {"a": 1}\' -H "Q: say \\"hi\\""').actions[0];
    expect(a.headers).toEqual([{ name: 'Authorization', value: 'Bearer $TOKEN' }, { name: 'X-Json', value: '{"a": 1}' }, { name: 'Q', value: 'say "hi"' }]);
  });
  it('when -d follows the URL, then it is an inline body template', () => {
    const a = one(`POST https://x.test/ -H "A: b" -d '{"t":"{text}"}' -H "C: d"`).actions[0];
    expect(a.body).toBe('{"t":"{text}"}');
    expect(a.headers.map((h) => h.name)).toEqual(['A', 'C']);
  });
  it('when other text follows the URL, then it is ignored with a warning', () => {
    const d = one('GET https://x.test/ --verbose -H "A: b" extra');
    expect(d.actions[0].headers).toEqual([{ name: 'A', value: 'b' }]);
    expect(ws(d)).toEqual(['warning: line 2: act.a: unrecognised text after the URL ignored: --verbose extra']);
  });
  it.each([['FETCH https://x.test/'], ['GET'], ['CLI'], ['']])('when the first line is %p, then the action is ignored with a warning', (line) => {
    const d = one(line);
    expect(d.actions).toEqual([]);
    expect(ws(d)).toEqual([`warning: line ${line === '' ? 1 : 2}: act.a: cannot parse the first line (expected GET, POST, PUT, PATCH, DELETE or CLI and a target); action ignored`]);
  });
  it('when the type is CLI, then -H and -d are part of the command', () => {
    expect(one('CLI curl -H "A: b" -d x https://x.test/').actions[0].command).toBe('curl -H "A: b" -d x https://x.test/');
  });
});

describe('parseDocument: CLI continuation lines (behaviour.md §4.3)', () => {
  it('when lines follow a CLI first line, then they continue the command until the first parameter line', () => {
    const a = one('CLI python3 -c "\nimport sys\ntry:\n    print(1)\nexcept:\n    pass\n\n" {x}\n\n  x: string (required) "X"').actions[0];
    expect(a.command).toBe('python3 -c "\nimport sys\ntry:\n    print(1)\nexcept:\n    pass\n\n" {x}');
    expect(a.fields.map((f) => f.name)).toEqual(['x']);
  });
  it('when a body: line ends the command, then the body is ignored for CLI with a warning', () => {
    const d = one('CLI cat\n  body:\n    {"a": 1}');
    expect(d.actions[0].command).toBe('cat');
    expect(d.actions[0].body).toBeUndefined();
    expect(ws(d)).toEqual(['warning: line 3: act.a: body template ignored for CLI']);
  });
});

describe('parseDocument: parameter lines (behaviour.md §4.4)', () => {
  it('when a parameter declares alias, type, constraints, description and default, then all are read', () => {
    const f = one('GET https://x.test/\n  query, -q: STRING (required, max:50) "Search \\"terms\\"" = "a b"').actions[0].fields[0];
    expect(f).toEqual({ name: 'query', alias: 'q', type: 'string', required: true, max: 50, hints: [], description: 'Search "terms"', default: 'a b', line: 3 });
  });
  it('when constraints stand after the description, then they still apply', () => {
    const f = one('GET https://x.test/\n  n: number "Count" (optional, min:1, max:100) = 20').actions[0].fields[0];
    expect([f.required, f.min, f.max, f.description, f.default]).toEqual([false, 1, 100, 'Count', '20']);
  });
  it.each(['string', 'number', 'boolean', 'path', 'tuple'])('when the type is %s, then it is kept', (t) => {
    expect(one(`GET https://x.test/\n  f: ${t}`).actions[0].fields[0].type).toBe(t);
  });
  it('when a constraint contains |, then it is an enumeration', () => {
    expect(one('GET https://x.test/\n  s: string (open|closed | all)').actions[0].fields[0].allowed).toEqual(['open', 'closed', 'all']);
  });
  it('when a default is single-quoted or bare, then it is taken as written', () => {
    const fs = one("GET https://x.test/\n  a: string = 'it''s'\n  b: string = bare text  \n  c: string ='x'").actions[0].fields;
    expect(fs.map((f) => f.default)).toEqual(["'it''s'", 'bare text', 'x']);
  });
  it('when the type word is unknown, then the field is a string with a warning', () => {
    const d = one('GET https://x.test/\n  n: int (required)');
    expect(d.actions[0].fields[0]).toMatchObject({ name: 'n', type: 'string', required: true });
    expect(ws(d)).toEqual(['warning: line 3: act.a: unknown type "int" for field n; treated as string']);
  });
  it('when a constraint is unknown, then it is kept as a hint with a warning', () => {
    const d = one('GET https://x.test/\n  q: string (maxx:5, lowercase)');
    expect(d.actions[0].fields[0].hints).toEqual(['maxx:5', 'lowercase']);
    expect(ws(d)).toEqual([
      'warning: line 3: act.a: unknown constraint "maxx:5" for field q; kept as a hint',
      'warning: line 3: act.a: unknown constraint "lowercase" for field q; kept as a hint',
    ]);
  });
  it('when a default does not fit its type, then it warns (placeholders are not checked)', () => {
    const d = one('GET https://x.test/\n  n: number = "ten"\n  b: boolean = maybe\n  m: number = "$LIMIT"\n  ok: boolean = "Yes"\n  x: number = "-1.5e3"');
    expect(ws(d)).toEqual([
      'warning: line 3: act.a: default "ten" of field n is not a valid number',
      'warning: line 4: act.a: default "maybe" of field b is not a valid boolean',
    ]);
  });
  it('when a field repeats, then the later one is ignored with a warning', () => {
    const d = one('GET https://x.test/\n  q: string\n  q: number');
    expect(d.actions[0].fields.map((f) => f.type)).toEqual(['string']);
    expect(ws(d)).toEqual(['warning: line 4: act.a: duplicate field q; later declaration ignored']);
  });
  it('when an alias is reused, then the later alias is dropped with a warning and the field kept', () => {
    const d = one('GET https://x.test/\n  query, -q: string\n  quiet, -q: boolean');
    expect(d.actions[0].fields.map((f) => [f.name, f.alias])).toEqual([['query', 'q'], ['quiet', undefined]]);
    expect(ws(d)).toEqual(['warning: line 4: act.a: alias -q is already used; ignored']);
  });
  it('when unquoted text follows the type, then it is reported and the field kept', () => {
    const d = one('GET https://x.test/\n  q: string (required) Search terms');
    expect(d.actions[0].fields[0]).toMatchObject({ name: 'q', required: true });
    expect(ws(d)).toEqual(['warning: line 3: act.a: unrecognised text after field q ignored: Search terms']);
  });
  it('when the field is named body with a known type, then it is a parameter, not the body directive', () => {
    const a = one('POST https://x.test/\n  body: string (required) "Text"').actions[0];
    expect(a.fields.map((f) => f.name)).toEqual(['body']);
    expect(a.body).toBeUndefined();
  });
  it('when a line is not indented, then it is not a parameter but an unrecognised line', () => {
    const d = one('GET https://x.test/\nq: string');
    expect(d.actions[0].fields).toEqual([]);
    expect(ws(d)).toEqual(['warning: line 3: act.a: unrecognised line ignored: q: string']);
  });
  it('when an unrecognised line is long, then the warning shows its first 60 characters', () => {
    const long = 'x'.repeat(70);
    expect(ws(one(`GET https://x.test/\n  ${long}`))).toEqual([`warning: line 3: act.a: unrecognised line ignored: ${'x'.repeat(60)}`]);
  });
});

describe('parseDocument: body templates (behaviour.md §4.5)', () => {
  it('when body: has deeper lines, then they form the template (indent removed, inner blank lines kept)', () => {
    const a = one('POST https://x.test/\n  t: string\n  body:\n    {\n      "t": "{t}",\n\n      "n": 1\n    }\n\n  u: string').actions[0];
    expect(a.body).toBe('{\n  "t": "{t}",\n\n  "n": 1\n}');
    expect(a.fields.map((f) => f.name)).toEqual(['t', 'u']);
  });
  it('when body: has text on its line, then that is a one-line template', () => {
    expect(one('PUT https://x.test/\n  body: {"a": "{b}"}').actions[0].body).toBe('{"a": "{b}"}');
  });
  it('when a GET or DELETE carries a body, then it is ignored with its warning', () => {
    expect(ws(one('GET https://x.test/\n  body:\n    x'))).toEqual(['warning: line 3: act.a: body template ignored for GET']);
    const d = one(`DELETE https://x.test/ -d '{"a":1}'`);
    expect(d.actions[0].body).toBeUndefined();
    expect(ws(d)).toEqual(['warning: line 2: act.a: DELETE sends no body; body ignored']);
  });
  it('when both -d and body: are given, then body: is used with a warning', () => {
    const d = one(`PATCH https://x.test/ -d 'inline'\n  body:\n    block`);
    expect(d.actions[0].body).toBe('block');
    expect(ws(d)).toEqual(['warning: line 3: act.a: both -d and body: given; body: is used']);
  });
  it('when a modifier is unknown, then it warns on its line; known modifiers compose silently', () => {
    const d = one('POST https://x.test/\n  f: path\n  body:\n    {"a": "{f|base64file}", "b": "{f|file|base64}"}\n    {"c": "{f|gzip}", "d": "{{f|x}}"}');
    expect(ws(d)).toEqual(['warning: line 6: act.a: unknown body modifier "gzip"; {f|gzip} is left as is']);
  });
  it('when a second body: appears, then it is ignored with a warning', () => {
    const d = one('POST https://x.test/\n  body: one\n  body:\n    two');
    expect(d.actions[0].body).toBe('one');
    expect(ws(d)).toEqual(['warning: line 4: act.a: second body: template ignored']);
  });
});

describe('parseDocument: anchors (behaviour.md §3.5)', () => {
  it('when headings repeat, then slugs get -1, -2; explicit {#id} wins; code fences hold no headings', () => {
    const d = parseDocument(`# Hello, World!\n\n## Hello World\n\n## Hello World\n\n### Ünïcode & stuff_x {#custom}\n\n${F}\n# not a heading\n${F}\n`);
    expect(d.headings.map((h) => [h.id, h.startLine, h.endLine])).toEqual([['hello-world', 1, 12], ['hello-world-1', 3, 4], ['hello-world-2', 5, 12], ['custom', 7, 12]]);
  });
  it('when block markers wrap lines, then the block anchor holds the lines between them and markers are not rendered', () => {
    const d = parseDocument('a\n<!-- #intro -->\nb\nc\n<!-- /intro -->\nd\n<!-- #open -->\ne\n');
    expect(d.blocks).toEqual([{ id: 'intro', startLine: 3, endLine: 4 }, { id: 'open', startLine: 8, endLine: 9 }]);
    expect(d.rendered).toBe('a\nb\nc\nd\ne');
  });
});

describe('parseDocument: directives and shortcuts (behaviour.md §3.7, §3.8)', () => {
  it('when nav, menu and requirements directives stand on their own lines, then they are read and not rendered', () => {
    const d = parseDocument('[!nav:main](./nav/main.md)\n  [!menu:side](side.md)  \n[!requirements](./requirements.md)\n\n# T\n');
    expect(d.directives).toEqual([
      { name: 'nav', arg: 'main', path: './nav/main.md', line: 1 },
      { name: 'nav', arg: 'side', path: 'side.md', line: 2 },
      { name: 'requirements', path: './requirements.md', line: 3 },
    ]);
    expect(d.rendered).toBe('# T');
  });
  it('when a directive is unknown, then it is removed with a warning; inside code it is text', () => {
    const d = parseDocument(`[!widget:x](./w.md)\ntext\n${F}\n[!nav:x](y.md)\n${F}\n`);
    expect(ws(d)).toEqual(['warning: line 1: unsupported directive [!widget:x](./w.md); ignored']);
    expect(d.directives).toEqual([]);
    expect(d.rendered).toBe(`text\n${F}\n[!nav:x](y.md)\n${F}`);
  });
  it('when author shortcut links appear, then they register page shortcuts and render as [Label][@id]', () => {
    const d = parseDocument('See [@home Home page](./index.md) and [x](y.md).\n\n[@ref]: https://x.test/r\n');
    expect(d.shortcuts).toEqual([{ id: 'home', label: 'Home page', href: './index.md', line: 1 }, { id: 'ref', href: 'https://x.test/r', line: 3 }]);
    expect(d.rendered).toBe('See [Home page][@home] and [x](y.md).\n\n[@ref]: https://x.test/r');
  });
  it('when a shortcut id repeats, then the first is used with a warning', () => {
    const d = parseDocument('[@a One](1.md)\n\n[@a Two](2.md)\n');
    expect(d.shortcuts.map((s) => s.href)).toEqual(['1.md']);
    expect(ws(d)).toEqual(['warning: line 3: duplicate shortcut @a; the first one is used']);
  });
});

describe('parseDocument: rendering (behaviour.md §3.4)', () => {
  it('when removals leave blank runs, then they collapse to one; author blank lines elsewhere stay', () => {
    const d = parseDocument(`---\ntitle: T\n---\n\n# T\n\n${act('GET https://x.test/')}\n[!nav:m](m.md)\n\ntext\n\n\nmore\n`);
    expect(d.rendered).toBe('# T\n\ntext\n\n\nmore');
  });
  it('when a document is parsed, then renderLines map each source line (null = removed)', () => {
    const d = parseDocument(`a\n${act('GET https://x.test/')}b`);
    expect(d.renderLines).toEqual(['a', null, null, null, 'b']);
  });
  it('when the text uses CRLF, then lines and rendering are the same as with LF', () => {
    const d = parseDocument('# T\r\n\r\ntext\r\n');
    expect(d.rendered).toBe('# T\n\ntext');
    expect(d.source).toBe('# T\r\n\r\ntext\r\n');
  });
});
