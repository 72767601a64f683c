import { describe, expect, it } from '@jest/globals';
import { applySpans, decodedSpans } from '../../src/domain/percentView.js';
import { compileMasks, envMask, redactCommand, redactText, sessionMask, shown } from '../../src/domain/redact.js';
import { maskShapes } from '../../src/domain/secretShapes.js';

/**
 * behaviour.md §13.4: the shapes added for document addresses, install sources and the request log
 * (URL user-info, credential query values), shapes that do not need a word boundary before them,
 * and every shape and known value read through percent-encoding.
 */
const CAPS = `caps_${'F7z'.repeat(14)}q`;
const GHP = `ghp_${'A1b2C3d4E5'.repeat(3)}xYz123`;
const pct = (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

describe('secret shapes', () => {
  it('mask a secret glued to what precedes it (no word boundary needed)', () => {
    expect(maskShapes(`GET /nothing.md%20%20${CAPS}`)).toBe('GET /nothing.md%20%20caps_<secret>');
    expect(maskShapes(`x${GHP}`)).toBe('xghp_<secret>');
    expect(maskShapes(`0wh_${'k'.repeat(20)}`)).toBe('0wh_<token>');
    expect(maskShapes('-HAuthorization: Bearer abc.def')).toBe('-HAuthorization: Bearer <secret>');
  });

  it('mask URL user-info whole, and the value of credential query parameters', () => {
    expect(maskShapes(`git clone https://x-access-token:${GHP}@github.com/o/r`)).toBe('git clone https://<secret>@github.com/o/r');
    expect(maskShapes('ssh://deploy@host/x')).toBe('ssh://<secret>@host/x');
    expect(maskShapes('https://h/p?a=1&access_token=abc.def&token=zz&key=k1&secret=s&password=hunter2&api_key=k2#f'))
      .toBe('https://h/p?a=1&access_token=<secret>&token=<secret>&key=<secret>&secret=<secret>&password=<secret>&api_key=<secret>#f');
    expect(maskShapes('https://h/p;TOKEN=abc')).toBe('https://h/p;TOKEN=<secret>');
  });

  it('read through percent-encoding, one level or more, and mask the encoded characters where they stand', () => {
    expect(maskShapes(`a%20${pct(CAPS)}%20b`)).toBe(`a%20${pct('caps_')}<secret>%20b`);
    expect(maskShapes(`%2563aps_${'F7z'.repeat(14)}q`)).toBe('%2563aps_<secret>');
    expect(maskShapes('Authorization%3A%20Bearer%20eyJabc.def')).toBe('Authorization%3A%20Bearer%20<secret>');
    expect(maskShapes('q=Authorization:+Bearer+eyJabc.def')).toBe('q=Authorization:+Bearer+<secret>');
    expect(maskShapes('https%3A%2F%2Fuser%3Apa55word%40example.test%2F')).toBe('https%3A%2F%2F<secret>%40example.test%2F');
    expect(maskShapes('/r%3Fnext%3D%2Fx%3Ftoken%3Dabc123')).toBe('/r%3Fnext%3D%2Fx%3Ftoken%3D<secret>');
    expect(maskShapes('/a%2Fwebhook%2Fsome-credential%3Fx')).toBe('/a%2Fwebhook%2F<token>%3Fx');
  });

  it('leave ordinary text alone, and masking twice changes nothing', () => {
    for (const t of ['/open ~/a%20b.md', 'mail me: a@b.c', 'https://example.test/a?q=1&page=2', 'the key is here', '100% sure', '%zz', '%E2%82%AC']) expect(maskShapes(t)).toBe(t);
    const once = maskShapes(`https://u:p@h/?token=t ${pct(CAPS)} Authorization: Bearer x ${GHP}`);
    expect(maskShapes(once)).toBe(once);
  });
});

describe('known values through percent-encoding', () => {
  const masks = compileMasks([['s3cret value!', envMask('API')], ['session-val-77', sessionMask('v')]]);

  it('redactText masks a value as written and percent-encoded', () => {
    expect(redactText('https://h/?q=s3cret%20value%21&r=session-val-77', masks)).toBe('https://h/?q=${env:API}&r={v}');
    expect(redactText(`x${pct('session-val-77')}y`, masks)).toBe('x{v}y');
  });

  it('redactCommand masks an encoded value across the display cut, leaving none of it', () => {
    const out = redactCommand(`/open https://h/?q=${'p'.repeat(180)}${pct('s3cret value!')}`, masks);
    expect(out).not.toMatch(/%73%33|s3cret/);
    expect(redactCommand(`/open https://h/${'y'.repeat(3_000_000)}${pct('s3cret value!')}`, masks)).not.toContain('%73%33');
  });

  it('shown masks every string of a JSON value but the keys it keeps', () => {
    const value = { agent_id: `a${CAPS}`, doc: { uri: `https://h/${pct(CAPS)}`, title: 'see s3cret value!' }, n: 3, list: [GHP, null] };
    expect(shown(value, masks, new Set(['agent_id']))).toEqual({ agent_id: `a${CAPS}`, doc: { uri: `https://h/${pct('caps_')}<secret>`, title: 'see ${env:API}' }, n: 3, list: ['ghp_<secret>', null] });
    const proto = shown(JSON.parse(`{"__proto__":{"t":"${GHP}"}}`) as Record<string, unknown>, null);
    expect(Object.keys(proto)).toEqual(['__proto__']);
    expect(JSON.stringify(proto)).toBe('{"__proto__":{"t":"ghp_<secret>"}}');
  });
});

describe('percent view', () => {
  it('maps decoded spans back onto the text, escapes whole', () => {
    const find = (d: string) => { const i = d.indexOf('bc'); return i < 0 ? [] : [[i, i + 2, '#'] as const]; };
    expect(applySpans('a%62%63d', decodedSpans('a%62%63d', find, 1))).toBe('a#d');
    expect(applySpans('a%2562cd', decodedSpans('a%2562cd', find, 2))).toBe('a#d');
    expect(decodedSpans('a%2562cd', find, 1)).toEqual([]);
    expect(decodedSpans('no escape', find, 3)).toEqual([]);
  });
});
