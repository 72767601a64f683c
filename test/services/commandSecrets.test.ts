import { utimesSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { CommandSecrets, ENV_RECHECK_MS } from '../../src/services/commandSecrets.js';
import { compileMasks, envMask, maskValues, redactCommand, type MaskedValue } from '../../src/domain/redact.js';
import { applySessionChange, newSession } from '../../src/domain/session.js';
import { FileEnvStore } from '../../src/stores/envStore.js';
import { tempDir } from '../helpers/temp.js';

const env = (pairs: Record<string, string>): MaskedValue[] => Object.entries(pairs).map(([n, v]) => [v, envMask(n)]);
const masked = (cmd: string, pairs: Record<string, string>) => redactCommand(cmd, compileMasks(env(pairs)));

describe('masking env-store and session values in a shown cmd (behaviour.md §13.4)', () => {
  it('replaces every occurrence of a value by its name, the body still never shown', () => {
    expect(masked('/exec echo s3cret-value-123 && echo s3cret-value-123\ns3cret-value-123 body', { TOKEN: 's3cret-value-123' }))
      .toBe('/exec echo ${env:TOKEN} && echo ${env:TOKEN}');
  });

  it('takes values as text, never as patterns: regex metacharacters match only themselves', () => {
    const value = 'a.b*c+(d)?[e]{2}$^|\\x/';
    expect(masked(`/exec printf '${value}' aXb*c`, { RE: value })).toBe("/exec printf '${env:RE}' aXb*c");
    // `.` and `*` are not wildcards: a text the pattern would match is left alone.
    expect(masked('/exec echo aXbbbbc+(d)?[e]{2}$^|\\x/', { RE: value })).toBe('/exec echo aXbbbbc+(d)?[e]{2}$^|\\x/');
  });

  it('masks a value that is a prefix of another as itself, and the longer one whole (longest first)', () => {
    const vals = { SHORT: 's3cret', LONG: 's3cret-value-123' };
    expect(masked('/exec echo s3cret-value-123 s3cret s3cret-value-12', vals)).toBe('/exec echo ${env:LONG} ${env:SHORT} ${env:SHORT}-value-12');
    // Listed the other way round: the same.
    expect(masked('/exec echo s3cret-value-123', { LONG: 's3cret-value-123', SHORT: 's3cret' })).toBe('/exec echo ${env:LONG}');
  });

  it('leaves no character of values that overlap one another', () => {
    const out = masked('/exec echo xxabcd-1234-wxyz', { A: 'abcd-1234', B: '1234-wxyz' });
    expect(out).toBe('/exec echo xx${env:A}');
    for (const piece of ['abcd', '1234', 'wxyz']) expect(out).not.toContain(piece);
  });

  it('names like __proto__, constructor and toString are plain names (env store and session)', async () => {
    const store = new FileEnvStore(tempDir());
    await store.set('leo', {}, Object.fromEntries([['__proto__', 'proto-secret-1'], ['constructor', 'ctor-secret-2']]));
    await store.set('leo', { app: 'toString' }, Object.fromEntries([['hasOwnProperty', 'app-secret-3']]));
    const vars = new Map([['__proto__', 'sess-proto-4'], ['valueOf', 'sess-value-5']]);
    const masks = new CommandSecrets(store).masks('leo', vars);
    expect(redactCommand('/exec echo proto-secret-1 ctor-secret-2 app-secret-3 sess-proto-4 sess-value-5', masks))
      .toBe('/exec echo ${env:__proto__} ${env:constructor} ${env:hasOwnProperty} {__proto__} {valueOf}');
  });

  it('keeps values shorter than the trace recorder minimum, and values spanning lines, out of the list', () => {
    expect(masked('/exec echo abc abcd', { S: 'abc', T: 'abcd' })).toBe('/exec echo abc ${env:T}');
    expect(compileMasks(env({ S: 'abc', M: 'line one\nline two' }))).toBeNull();
  });

  it('masks before cutting to 200 characters: a value across the cut shows none of its characters', () => {
    const cmd = `/exec echo ${'x'.repeat(183)} straddling-secret-99`;
    const out = masked(cmd, { S: 'straddling-secret-99' });
    expect([...out]).toHaveLength(200);
    expect(out).not.toContain('stra');
    expect(out.endsWith('…')).toBe(true);
  });

  it('reads only the start of a huge first line, and still masks every value it shows', () => {
    const values = { A: 'alpha-secret-1', B: 'beta-secret-22' };
    const cmd = `/exec echo ${'alpha-secret-1 '.repeat(60)}${'y'.repeat(5_000_000)} beta-secret-22`;
    const out = masked(cmd, values);
    expect([...out]).toHaveLength(200);
    expect(out).not.toMatch(/alpha|beta|secret/);
    expect(out.startsWith('/exec echo ${env:A} ${env:A} ')).toBe(true);
  });

  it('keeps /set values masked as /set listings do, and a mask never shows a value', () => {
    expect(masked('/set $TOKEN = "s3cret-value-123"', { TOKEN: 's3cret-value-123' })).toBe('/set $TOKEN = "s3…"');
    // A variable named after another's value: its name would show that value, so it shows `…`.
    expect(masked('/exec echo ADMIN-ROOT hunter22', { USER: 'ADMIN', ADMIN_PASSWORD: 'hunter22', X: 'ADMIN-ROOT' })).toBe('/exec echo ${env:X} …');
  });

  it('marks a text cut before its end', () => {
    const m = compileMasks(env({ K: 'key-1234' }))!;
    expect(maskValues('ab key-1234 cd key-12', m, 12)).toBe('ab ${env:K} …');
    expect(maskValues('nothing here', m)).toBe('nothing here');
  });
});

describe('the cached value lists (CommandSecrets)', () => {
  it('reads the env store once, again only after it changed, and skips at once when there is nothing', async () => {
    const dir = tempDir();
    const store = new FileEnvStore(dir);
    let reads = 0;
    let now = 1000;
    const counted = { values: (a: string) => { reads++; return store.values(a); }, revision: store.revision.bind(store) };
    const s = new CommandSecrets(counted, () => now);
    expect(s.masks('leo')).toBeNull();
    expect(s.masks('leo', new Map())).toBeNull();
    expect(reads).toBe(1);
    await store.set('leo', { app: 'weather', config: 'seoul' }, { CITY: 'seoul-secret' });
    const first = s.masks('leo');
    expect(first?.list.map(([v, m]) => [v, m])).toEqual([['seoul-secret', '${env:CITY}']]);
    expect(s.masks('leo')).toBe(first);
    expect(reads).toBe(2);
    // A session's variables join the list; a change of one (a new map, as the topic applies it) rebuilds it.
    const session = applySessionChange(newSession('leo', { topic: 'main', type: 'main' } as never, 0), { type: 'session.set', scope: 'session', values: [['city', 'sess-city-1']] });
    const both = s.masks('leo', session.vars);
    expect(redactCommand('/open sess-city-1 seoul-secret', both)).toBe('/open {city} ${env:CITY}');
    expect(s.masks('leo', session.vars)).toBe(both);
    const changed = applySessionChange(session, { type: 'session.set', scope: 'session', values: [['city', 'sess-city-2']] });
    expect(redactCommand('/open sess-city-2', s.masks('leo', changed.vars))).toBe('/open {city}');
    // A hand edit of the file: seen by a recheck, or once ENV_RECHECK_MS has passed.
    writeFileSync(store.file('leo'), JSON.stringify({ version: 1, global: { HAND: 'hand-edited-1' } }));
    const later = Date.now() + 5000;
    touch(store.file('leo'), later);
    expect(redactCommand('/x hand-edited-1', s.masks('leo', undefined, { recheck: true }))).toBe('/x ${env:HAND}');
    writeFileSync(store.file('leo'), JSON.stringify({ version: 1, global: { HAND: 'hand-edited-2' } }));
    touch(store.file('leo'), later + 5000);
    expect(redactCommand('/x hand-edited-2', s.masks('leo'))).toBe('/x hand-edited-2');
    now += ENV_RECHECK_MS;
    expect(redactCommand('/x hand-edited-2', s.masks('leo'))).toBe('/x ${env:HAND}');
  });
});

/** Give a file a distinct mtime (two writes within one timestamp tick look unchanged). */
function touch(path: string, ms: number): void {
  utimesSync(path, ms / 1000, ms / 1000);
}
