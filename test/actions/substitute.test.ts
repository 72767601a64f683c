import { describe, expect, it } from '@jest/globals';
import { substituteBody, type ModifierFileReader } from '../../src/sfmd/bodyTemplate.js';
import { DollarWarnings, substituteHeader, substitutePathTemplate, substituteUrl, substituteVars, type DefinitionNames, type FieldSlot } from '../../src/sfmd/substitute.js';
import type { FieldType } from '../../src/sfmd/types.js';

function names(fields: Record<string, [FieldType, string | string[] | undefined]>, vars: Record<string, string> = {}, dollars: Record<string, string> = {}): DefinitionNames {
  return {
    fields: new Map<string, FieldSlot>(Object.entries(fields).map(([k, [type, value]]) => [k, { type, value }])),
    vars: new Map(Object.entries(vars)),
    dollar: (n) => dollars[n],
  };
}

const noFiles: ModifierFileReader = (p) => ({ ok: false, forbidden: false, display: p, reason: 'no such file' });

describe('behaviour.md §4.6 URL substitution', () => {
  it('when a field fills a URL placeholder, then it is percent-encoded and consumed', () => {
    const w = new DollarWarnings();
    const r = substituteUrl('https://x.test/wiki/{q}?lang={lang}&s={s}', names({ q: ['string', 'a b/c?&'], lang: ['string', 'ko'], unused: ['string', 'u'] }, { s: 'é' }), w);
    expect(r.url).toBe('https://x.test/wiki/a%20b%2Fc%3F%26?lang=ko&s=%C3%A9');
    expect([...r.consumed].sort()).toEqual(['lang', 'q']);
  });

  it('when a name is both field and session variable, then the field wins in definitions', () => {
    expect(substituteUrl('https://x/{a}', names({ a: ['string', 'F'] }, { a: 'V' }), new DollarWarnings()).url).toBe('https://x/F');
  });

  it('when $NAME and ${NAME} appear, then they are inserted raw; unset ones stay with one warning each', () => {
    const w = new DollarWarnings();
    const r = substituteUrl('https://$HOST/${PATHX}/$MISSING/$MISSING/$lower', names({}, {}, { HOST: 'h.test', PATHX: 'a b' }), w);
    expect(r.url).toBe('https://h.test/a b/$MISSING/$MISSING/$lower');
    expect(w.lines()).toEqual(['warning: $MISSING is not set (sent literally); set it with /set $MISSING = "..."']);
  });

  it('when a tuple field is used, then {t} joins slots with , and {t[N]} picks one (out of range empty)', () => {
    const r = substituteUrl('https://x/{t}/{t[1]}/{t[5]}', names({ t: ['tuple', ['a', 'b']] }), new DollarWarnings());
    expect(r.url).toBe('https://x/a%2Cb/b/');
  });

  it('when a field has no value, then it substitutes as the empty string', () => {
    expect(substituteUrl('https://x/?c={cursor}', names({ cursor: ['string', undefined] }), new DollarWarnings()).url).toBe('https://x/?c=');
  });

  it('when braces are doubled or unknown, then they are left as written (single pass)', () => {
    const r = substituteUrl('https://x/{{a}}/{b}/{a}', names({ a: ['string', '{b}'] }), new DollarWarnings());
    expect(r.url).toBe('https://x/{{a}}/{b}/%7Bb%7D');
  });
});

describe('behaviour.md §4.6 header and variable substitution', () => {
  it('when a header value has fields, variables and $NAME, then they are inserted raw', () => {
    const w = new DollarWarnings();
    expect(substituteHeader('Bearer $TOKEN {id} {v}', names({ id: ['string', 'a b'] }, { v: 'V' }, { TOKEN: 't0k' }), w)).toBe('Bearer t0k a b V');
  });

  it('when a value is substituted, then text it inserts is never rescanned', () => {
    expect(substituteVars('{a} $B', new Map([['a', '$B {a}']]), (n) => (n === 'B' ? '{a}' : undefined))).toBe('$B {a} {a}');
  });

  it('when a to: path has a variable and a field of the same name, then the session variable wins (template priority)', () => {
    const fields = new Map<string, FieldSlot>([['f', { type: 'string', value: 'field.png' }], ['g', { type: 'string', value: 'g' }]]);
    expect(substitutePathTemplate('out/{f}-{g}-$HOME', fields, new Map([['f', 'var.png']]))).toBe('out/var.png-g-$HOME');
  });
});

describe('behaviour.md §4.5 body templates', () => {
  const body = (tpl: string, n: DefinitionNames, files: ModifierFileReader = noFiles) => {
    const r = substituteBody(tpl, n, new DollarWarnings(), files);
    if (!r.ok) throw new Error(r.failure.message);
    return r.body;
  };

  it('when a placeholder is inside a JSON string literal, then the value is JSON-escaped', () => {
    const out = body('{"t":"{t}","n":"{n}"}', names({ t: ['string', 'say "hi"\n\\ end'], n: ['number', '007'] }));
    expect(JSON.parse(out)).toEqual({ t: 'say "hi"\n\\ end', n: '007' });
  });

  it('when a placeholder is outside string literals, then it is inserted raw (numbers in JSON normal form)', () => {
    expect(body('{"n": {n}, "b": {b}, "raw": {r}}', names({ n: ['number', '007'], b: ['boolean', 'true'], r: ['string', '[1,2]'] }))).toBe('{"n": 7, "b": true, "raw": [1,2]}');
  });

  it('when a string literal contains an escaped quote, then tracking continues correctly', () => {
    expect(body('{"a":"x\\"{v}\\"", "b": {v}}', names({ v: ['string', 'q"'] }))).toBe('{"a":"x\\"q\\"\\"", "b": q"}');
  });

  it('when $NAME is in a string literal, then its value is JSON-escaped too', () => {
    expect(body('{"k":"$KEY"}', names({}, {}, { KEY: 'a"b' }))).toBe('{"k":"a\\"b"}');
  });

  it('when session variables are used, then they are substituted JSON-aware; fields win', () => {
    expect(body('{"a":"{a}","v":"{v}"}', names({ a: ['string', 'F'] }, { a: 'V', v: 'x"y' }))).toBe('{"a":"F","v":"x\\"y"}');
  });

  it('when modifier base64 is used, then the UTF-8 bytes are encoded', () => {
    expect(body('"{t|base64}"', names({ t: ['string', 'héllo'] }))).toBe(`"${Buffer.from('héllo').toString('base64')}"`);
  });

  it('when modifiers base64file and file are used, then the file is read through the reader', () => {
    const files: ModifierFileReader = (p) => (p === 'img.png' ? { ok: true, data: Buffer.from([0, 1, 2, 255]) } : { ok: true, data: Buffer.from('text "q"\n') });
    expect(body('{"d":"{i|base64file}","t":"{f|file}"}', names({ i: ['string', 'img.png'], f: ['string', 'note.txt'] }), files)).toBe('{"d":"AAEC/w==","t":"text \\"q\\"\\n"}');
  });

  it('when modifiers compose, then they apply left to right', () => {
    const files: ModifierFileReader = () => ({ ok: true, data: Buffer.from('abc') });
    expect(body('{f|file|base64}|{t|base64|base64}', names({ f: ['string', 'x'], t: ['string', 'hi'] }), files)).toBe(`${Buffer.from('abc').toString('base64')}|${Buffer.from(Buffer.from('hi').toString('base64')).toString('base64')}`);
  });

  it('when a modifier file cannot be read, then the action stops with INVALID_ARGS naming the placeholder', () => {
    const r = substituteBody('{"d":"{img|base64file}"}', names({ img: ['string', 'missing.png'] }), new DollarWarnings(), noFiles);
    expect(r).toEqual({ ok: false, failure: { code: 'INVALID_ARGS', message: 'Cannot read missing.png for {img|base64file}: no such file' } });
  });

  it('when a modifier file is outside the workspace, then FORBIDDEN', () => {
    const r = substituteBody('{img|file}', names({ img: ['string', '/etc/shadow'] }), new DollarWarnings(), (p) => ({ ok: false, forbidden: true, display: p, reason: '' }));
    expect(r).toEqual({ ok: false, failure: { code: 'FORBIDDEN', message: 'Path outside the workspace: /etc/shadow' } });
  });

  it('when a modifier is unknown, then the placeholder is left as is', () => {
    expect(body('{t|upper}', names({ t: ['string', 'x'] }))).toBe('{t|upper}');
  });

  it('when a tuple slot is used with a modifier, then the slot is the input', () => {
    expect(body('{t[1]|base64}', names({ t: ['tuple', ['a', 'b']] }))).toBe(Buffer.from('b').toString('base64'));
  });
});
