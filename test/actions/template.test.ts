import { describe, expect, it } from '@jest/globals';
import type { ShortcutValue } from '../../src/domain/session.js';
import { tryParseJson } from '../../src/sfmd/jsonPath.js';
import type { FieldSlot } from '../../src/sfmd/substitute.js';
import { assembleOutput, decodeBase64, renderTemplate, type TemplateEnv, type TemplateResponse } from '../../src/sfmd/template.js';

interface Env extends TemplateEnv {
  writes: Array<{ path: string; bytes: Buffer }>;
}

function env(opts: { fields?: Record<string, string | string[]>; vars?: Record<string, string>; shortcuts?: Record<string, ShortcutValue>; writeResult?: string | null } = {}): Env {
  const writes: Env['writes'] = [];
  return {
    vars: new Map(Object.entries(opts.vars ?? {})),
    fields: new Map<string, FieldSlot>(Object.entries(opts.fields ?? {}).map(([k, v]) => [k, { type: Array.isArray(v) ? 'tuple' : 'string', value: v }])),
    shortcuts: new Map(Object.entries(opts.shortcuts ?? {})),
    writeTo: (path, bytes) => { writes.push({ path, bytes }); return opts.writeResult ?? null; },
    firstLine: 20,
    writes,
  };
}

function httpResp(body: unknown, status = 200): TemplateResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return { kind: 'http', status, body: text, json: tryParseJson(text) };
}

function cliResp(stdout: string, stderr = '', exitCode = 0): TemplateResponse {
  return { kind: 'cli', status: exitCode, body: [stdout, stderr].filter(Boolean).join('\n'), json: tryParseJson(stdout), stdout, stderr, exitCode };
}

/** Render and assemble. */
function render(lines: string[], resp: TemplateResponse, e: Env = env()): string {
  const t = renderTemplate(lines, resp, e);
  return assembleOutput(t.output, t.warnings, t.next);
}

describe('spec §4.11 output lines and Response references', () => {
  const body = { a: { b: [10, { c: 'deep' }] }, n: null, t: true, list: [], obj: { x: 1 }, s: 'str' };

  it('when Response references name existing paths, then they render (dots, [N] and .N)', () => {
    expect(render(['{Response.status} {Response.body.a.b[0]} {Response.body.a.b.1.c} {Response.body.t} {Response.body.obj}'], httpResp(body)))
      .toBe('200 10 deep true {"x":1}');
  });

  it('when a Response path is explicit null, then it renders empty without warning', () => {
    expect(render(['[{Response.body.n}]'], httpResp(body))).toBe('[]');
  });

  it('when {Response.body} is used, then it is the body text as received', () => {
    expect(render(['{Response.body}'], httpResp('plain text'))).toBe('plain text');
  });

  it.each([
    ['{Response.body.list.0.name}', 'Response.body.list is an array of 0 items'],
    ['{Response.body.obj.y}', 'Response.body.obj has keys: x'],
    ['{Response.body.s.len}', 'Response.body.s is a string'],
    ['{Response.body.missing}', 'Response.body has keys: a, n, t, list, obj, s'],
    ['{Response.status.code}', 'Response.status is a number'],
  ])('when %s is missing, then it stays literal and the warning names the deepest prefix', (ref, tail) => {
    expect(render([`x ${ref} y`, `again ${ref}`], httpResp(body))).toBe(`x ${ref} y\nagain ${ref}\nwarning: unresolved template reference ${ref}; ${tail}`);
  });

  it('when the body is not JSON and a path is used, then the warning says so', () => {
    expect(render(['{Response.body.x}'], httpResp('hello'))).toBe('{Response.body.x}\nwarning: unresolved template reference {Response.body.x}; Response.body is text, not JSON');
  });

  it('when a top-level Response reference is unknown, then the warning lists what exists (HTTP and CLI)', () => {
    expect(render(['{Response.stdout}'], httpResp({}))).toBe('{Response.stdout}\nwarning: unresolved template reference {Response.stdout}; available: Response.status, Response.body');
    expect(render(['{Response.headers}'], cliResp('x'))).toContain('available: Response.status, Response.body, Response.stdout, Response.stderr, Response.exit_code');
  });

  it('when a CLI response is rendered, then stdout, stderr, exit_code and status are available and body paths read stdout JSON', () => {
    expect(render(['{Response.stdout}|{Response.stderr}|{Response.exit_code}|{Response.status}|{Response.body.k}'], cliResp('{"k":"v"}', 'warn', 3)))
      .toBe('{"k":"v"}|warn|3|3|v');
  });

  it('when a name is a session variable and a field, then the session variable wins; fields fill the rest (§12 item 5)', () => {
    expect(render(['{city} {q} {t[1]} {t} {unknown}'], httpResp({}), env({ fields: { city: 'field', q: 'Q', t: ['a', 'b'] }, vars: { city: 'var' } })))
      .toBe('var Q b a,b {unknown}');
  });

  it('when a response reference and a session variable could both apply, then the response reference comes first', () => {
    expect(render(['{Response.body.x}'], httpResp({ x: 'resp' }), env({ vars: { Response: 'var' } }))).toBe('resp');
  });

  it('when doubled braces appear, then they are never substituted', () => {
    expect(render(['{{Response.status}} {{q}}'], httpResp({}), env({ fields: { q: 'Q' } }))).toBe('{{Response.status}} {{q}}');
  });

  it('when inserted text contains braces, then it is not rescanned', () => {
    expect(render(['{Response.body.s}'], httpResp({ s: '{q} {Response.status}' }), env({ fields: { q: 'Q' } }))).toBe('{q} {Response.status}');
  });
});

describe('behaviour.md §4.10 assignments', () => {
  it('when {var} = expr is assigned, then it is stored, produces no output and applies to later lines', () => {
    const e = env();
    expect(render(['{area} = {Response.body.area}', '**{area}**'], httpResp({ area: 'Springfield' }), e)).toBe('**Springfield**');
    expect(e.vars.get('area')).toBe('Springfield');
  });

  it('when the expression is wrapped in quotes, then the quotes are removed before substitution', () => {
    const e = env({ fields: { n: 'Ann' } });
    render(['{a} = "Hi {n}"', "{b} = 'x'"], httpResp({}), e);
    expect([e.vars.get('a'), e.vars.get('b')]).toEqual(['Hi Ann', 'x']);
  });

  it('when the expression is exactly one object or array reference, then its compact JSON is stored', () => {
    const e = env();
    render(['{o} = {Response.body.o}', '{l} = {Response.body.l}'], httpResp({ o: { a: 1 }, l: [1, 'x'] }), e);
    expect([e.vars.get('o'), e.vars.get('l')]).toEqual(['{"a":1}', '[1,"x"]']);
  });

  it('when the single reference is missing, then "" is stored and it warns', () => {
    const e = env();
    expect(render(['{m} = {Response.body.nope}', '[{m}]'], httpResp({ a: 1 }), e)).toBe('[]\nwarning: unresolved template reference {Response.body.nope}; Response.body has keys: a');
    expect(e.vars.get('m')).toBe('');
  });

  it('when $NAME = … appears, then it is dropped with a warning', () => {
    expect(render(['$CITY = x', 'ok'], httpResp({}))).toBe('ok\nwarning: cannot assign $CITY in a response template');
  });

  it('when an assigned value is a JSON object, then {var.path} reads into it', () => {
    expect(render(['{o} = {Response.body.o}', '{o.a}'], httpResp({ o: { a: 'A' } }))).toBe('A');
  });
});

describe('behaviour.md §4.11 loops and shortcuts', () => {
  const items = { items: [{ id: 'p1', t: 'One', repo: 'o/r' }, { id: 'p2', t: 'Two', repo: 'o/s' }] };

  it('when for: iterates objects, then {var} and {var.field} are available and missing fields are empty', () => {
    expect(render(['for: it in Response.body.items', '- {it.t} ({it.id}) [{it.none}]', 'end:'], httpResp(items))).toBe('- One (p1) []\n- Two (p2) []');
  });

  it('when for: iterates primitives, then {var} is the element', () => {
    expect(render(['for: t in what', '- {t}', 'end:'], httpResp({ what: ['a', 2, null] }))).toBe('- a\n- 2\n- ');
  });

  it.each(['$.items', 'items', 'Response.body.items'])('when the loop path is written %s, then it finds the array', (p) => {
    expect(render([`for: it in ${p}`, '{it.id}', 'end:'], httpResp(items))).toBe('p1\np2');
  });

  it('when the loop path is Response.body, then the body itself is iterated', () => {
    expect(render(['for: x in Response.body', '{x.n}', 'end:'], httpResp([{ n: 1 }, { n: 2 }]))).toBe('1\n2');
  });

  it('when the array is empty, then no output and no warning', () => {
    expect(render(['before', 'for: x in list', '- {x}', 'end:', 'after'], httpResp({ list: [] }))).toBe('before\nafter');
  });

  it('when the path is not an array, then a warning and no output', () => {
    expect(render(['for: x in o', '- {x}', 'end:'], httpResp({ o: { a: 1 } }))).toBe('warning: for: o is not an array (object); loop skipped');
  });

  it('when the path is missing, then a warning and no output', () => {
    expect(render(['for: x in nope', '- {x}', 'end:'], httpResp({}))).toBe('warning: for: nope not found; loop skipped');
  });

  it('when for: is nested, then the inner for: line is dropped with its line number', () => {
    expect(render(['for: x in l', 'for: y in l', '{x}', 'end:'], httpResp({ l: [1] }))).toBe('1\nwarning: nested for: is not supported (line 21)');
  });

  it('when end: stands alone or for: cannot be read, then the line is ignored with a warning', () => {
    expect(render(['a', 'end:', 'for: x', 'skipped {x}', 'end:', 'b'], httpResp({}))).toBe('a\nb\nwarning: line 21: end: without for:; ignored\nwarning: line 22: cannot read "for: x" (use for: <var> in <path>); loop skipped');
  });

  it('when end: is missing, then the loop runs to the end with a warning', () => {
    expect(render(['for: x in l', '{x}'], httpResp({ l: [1, 2] }))).toBe('1\n2\nwarning: for: without end:');
  });

  it('when {@name} = expr is inside a loop, then @name-N is registered and {@name} prints the label even before the line', () => {
    const e = env({ shortcuts: { 'post-9': 'old', post: 'old', postal: 'keep' } });
    expect(render(['for: p in items', '- {@post}: {p.t}', '{@post} = {p.id}', 'end:'], httpResp(items), e)).toBe('- @post-1: One\n- @post-2: Two');
    expect(Object.fromEntries(e.shortcuts)).toEqual({ postal: 'keep', 'post-1': 'p1', 'post-2': 'p2' });
  });

  it('when a shortcut name holds a reference, then each item registers the name it reads as (not its position), and the family is cleared first', () => {
    const e = env({ shortcuts: { 'note-9': 'old', note: 'old', 'note-x': 'old', notes: 'keep' } });
    const notes = { notes: [{ id: 2, text: 'Call Ann' }, { id: 1, text: 'Buy milk' }] };
    expect(render(['for: n in notes', '{@note-{n.id}} = {n.id}', '- @note-{n.id}: {n.text}', 'end:'], httpResp(notes), e)).toBe('- @note-2: Call Ann\n- @note-1: Buy milk');
    expect(Object.fromEntries(e.shortcuts)).toEqual({ notes: 'keep', 'note-2': '2', 'note-1': '1' });
  });

  it('when a keyed shortcut name comes out invalid, then it is not registered and a warning says why', () => {
    const e = env();
    expect(render(['for: n in notes', '{@note-{n.id}} = {n.id}', 'end:'], httpResp({ notes: [{ id: 'a b' }] }), e)).toBe('warning: shortcut name @note-a b is not valid (letters, digits, ".", "_" and "-"); not registered');
    expect(e.shortcuts.size).toBe(0);
  });

  it('when the array is empty, then the loop\'s empty: line is printed once; otherwise never', () => {
    const lines = ['Notes:', 'for: n in notes', '- {n.text}', 'empty:   (none)', 'end:'];
    expect(render(lines, httpResp({ notes: [] }))).toBe('Notes:\n  (none)');
    expect(render(lines, httpResp({ notes: [{ text: 'a' }, { text: 'b' }] }))).toBe('Notes:\n- a\n- b');
  });

  it('when {@name} = ({a}, {b}) is used, then a tuple shortcut is stored', () => {
    const e = env();
    render(['for: i in items', '{@issue} = ({i.repo}, {i.id})', 'end:'], httpResp(items), e);
    expect(e.shortcuts.get('issue-2')).toEqual(['o/s', 'p2']);
  });

  it('when a tuple item value contains a comma, then it stays one slot', () => {
    const e = env();
    render(['{@c} = ({Response.body.a}, "x")'], httpResp({ a: '1,2' }), e);
    expect(e.shortcuts.get('c')).toEqual(['1,2', 'x']);
  });

  it('when {@name} = expr is outside a loop, then @name is registered and prints as @name', () => {
    const e = env({ fields: { filename: 'out.png' } });
    expect(render(['{@image} = {filename}', 'Saved {filename} as {@image}'], httpResp({}), e)).toBe('Saved out.png as @image');
    expect(e.shortcuts.get('image')).toBe('out.png');
  });

  it('when more than 500 value shortcuts exist, then the oldest are dropped', () => {
    const e = env();
    render(['for: x in l', '{@s} = {x}', 'end:'], httpResp({ l: Array.from({ length: 510 }, (_, i) => i) }), e);
    expect(e.shortcuts.size).toBe(500);
    expect(e.shortcuts.has('s-1')).toBe(false);
    expect(e.shortcuts.get('s-510')).toBe('509');
  });

  it('when an output line holds an author shortcut link, then it becomes [Label][@id] and registers @id', () => {
    const e = env();
    expect(render(['See [@doc The docs](https://x.test/d)'], httpResp({}), e)).toBe('See [The docs][@doc]');
    expect(e.shortcuts.get('doc')).toBe('https://x.test/d');
  });
});

describe('behaviour.md §4.12 save, decode, to', () => {
  const png = Buffer.from([137, 80, 78, 71, 0, 255]);
  const b64 = { c: [{ d: png.toString('base64') }], u: png.toString('base64url'), txt: 'hello', o: { k: 1 } };

  it('when save: $.path, decode: base64 and to: run, then the bytes are written to the substituted path with no output', () => {
    const e = env({ fields: { filename: 'img.png' } });
    expect(render(['save: $.c[0].d', 'decode: base64', 'to: out/{filename}', 'done'], httpResp(b64), e)).toBe('done');
    expect(e.writes).toEqual([{ path: 'out/img.png', bytes: png }]);
  });

  it('when save: reads a string without decode, then to: writes it as UTF-8 text; objects as compact JSON', () => {
    const e = env();
    render(['save: txt', 'to: a.txt', 'save: o', 'decode: none', 'to: b.json'], httpResp(b64), e);
    expect(e.writes.map((w) => w.bytes.toString())).toEqual(['hello', '{"k":1}']);
  });

  it('when the base64 is URL-safe, unpadded or spread over lines, then it decodes', () => {
    expect(decodeBase64(b64.u)).toEqual(png);
    expect(decodeBase64('aGVs\nbG8')).toEqual(Buffer.from('hello'));
    expect(decodeBase64('not base64!')).toBeNull();
  });

  it('when save: finds no value, then it warns and the next to: is skipped silently', () => {
    const e = env();
    expect(render(['save: c[5].d', 'decode: base64', 'to: x.png'], httpResp(b64), e)).toBe('warning: save: no value at c[5].d');
    expect(e.writes).toEqual([]);
  });

  it('when decode: base64 fails, then it warns and to: writes nothing', () => {
    const e = env();
    expect(render(['save: txt', 'decode: base64', 'to: x'], httpResp({ txt: '@@@' }), e)).toBe('warning: decode: base64 failed: input is not valid base64');
    expect(e.writes).toEqual([]);
  });

  it('when decode: has nothing, or an unknown encoding, then the exact warnings appear', () => {
    expect(render(['decode: base64', 'decode: hex'], httpResp({}))).toBe('warning: decode: nothing to decode (no save: before it)\nwarning: decode: unknown encoding "hex" (use base64 or none)');
  });

  it('when to: has nothing to write, then it warns', () => {
    expect(render(['to: x'], httpResp({}))).toBe('warning: to: nothing to write (no save: before it)');
  });

  it('when the writer refuses, then its warning line is shown', () => {
    const e = env({ writeResult: 'warning: to: refused: /etc/x is outside the workspace' });
    expect(render(['save: txt', 'to: /etc/x'], httpResp(b64), e)).toBe('warning: to: refused: /etc/x is outside the workspace');
  });

  it('when a CLI response is saved, then save: reads stdout alone as JSON', () => {
    const e = env();
    render(['save: k', 'to: k.txt'], cliResp('{"k":"v"}', 'noise'), e);
    expect(e.writes[0].bytes.toString()).toBe('v');
  });
});

describe('behaviour.md §4.10 next: lines and assembly', () => {
  it('when next: lines appear, then they move to the end after warnings, substituted and de-duplicated', () => {
    const lines = ['next: /act.read {id}', 'body', 'for: x in l', 'next: /act.read {id}', 'next: /act.x {x}', 'end:', '{Response.body.nope}'];
    expect(render(lines, httpResp({ l: [1, 1] }), env({ fields: { id: '7' } }))).toBe([
      'body', '{Response.body.nope}', 'warning: unresolved template reference {Response.body.nope}; Response.body has keys: l', 'next: /act.read 7', 'next: /act.x 1',
    ].join('\n'));
  });

  it('when output has blank runs and edges, then runs collapse and edges are dropped', () => {
    expect(assembleOutput(['', '', 'a', '', '', '', 'b', '  ', ''], [], [])).toBe('a\n\nb');
  });
});
