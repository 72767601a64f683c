import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { startApp, type TestApp } from '../helpers/app.js';
import { addAgent, mint, send } from '../capabilities/helpers.js';

/**
 * Hostile paths against a token scoped to `data` with every verb (spec §4.1 "the verifier rejects
 * lexical escapes", behaviour.md §9.6). The workspace has data/ok.txt, data/sub/, data/file, a
 * sibling folder `database/` and symlinks from data/ to a folder outside the home.
 */

let app: TestApp;
let home: string;
let outside: string;
let secret: string;

beforeAll(async () => {
  app = await startApp();
  home = await addAgent(app.base, 'hostile');
  outside = join(dirname(home), 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret'), 'OUTSIDE');
  mkdirSync(join(home, 'data', 'sub'), { recursive: true });
  mkdirSync(join(home, 'database'));
  writeFileSync(join(home, 'data', 'ok.txt'), 'ok');
  writeFileSync(join(home, 'database', 'x'), 'sibling');
  writeFileSync(join(home, 'x'), 'root-x');
  symlinkSync(outside, join(home, 'data', 'link-out'));
  symlinkSync(join(home, 'data', 'ok.txt'), join(home, 'data', 'link-in'));
  symlinkSync('../database', join(home, 'data', 'link-rel'));
  secret = (await mint(app.base, { agent_id: 'hostile', verbs: ['PUT', 'GET', 'DELETE', 'STAT'], ttl_ms: 3_600_000, path_prefix: 'data' })).secret;
});
afterAll(async () => { await app.close(); });

const a = (n: number, c = 'a') => c.repeat(n);
const LONG_PATH = 'data/' + Array.from({ length: 21 }, () => a(200)).join('/');

/** [method, raw request target, expected status, note] */
const CASES: Array<[string, string, number, string]> = [
  ['GET', '/fs/data/../database/x', 400, 'dot-dot segment'],
  ['GET', '/fs/data/./ok.txt', 400, 'dot segment'],
  ['GET', '/fs/../x', 400, 'dot-dot at the root'],
  ['GET', '/fs/data/..', 400, 'trailing dot-dot'],
  ['GET', '/fs/data/%2e%2e/database/x', 400, 'encoded dot-dot'],
  ['GET', '/fs/data/%2E%2E/x', 400, 'upper-case encoded dot-dot'],
  ['GET', '/fs/data/.%2e/x', 400, 'half-encoded dot-dot'],
  ['GET', '/fs/data/%2e./x', 400, 'half-encoded dot-dot (other half)'],
  ['GET', '/fs/data/%2e/ok.txt', 400, 'encoded dot'],
  ['GET', '/fs/data/%2e%2e', 400, 'encoded trailing dot-dot'],
  ['GET', '/fs/data%2F..%2Fdatabase/x', 400, 'encoded slashes around dot-dot'],
  ['GET', '/fs/data%2fok.txt', 400, 'encoded slash inside a segment'],
  ['GET', '/fs/data/..%2Fdatabase', 400, 'dot-dot plus encoded slash'],
  ['GET', '/fs/data/%2e%2e%2fdatabase', 400, 'fully encoded traversal'],
  ['GET', '/fs/data/ok.txt%2f..%2f..%2fdatabase', 400, 'encoded traversal after a name'],
  ['GET', '/fs/data%2F', 400, 'encoded trailing slash'],
  ['GET', '/fs/%2Fdata/ok.txt', 400, 'encoded leading slash (absolute)'],
  ['GET', '/fs/data\\..\\database\\x', 400, 'raw backslashes'],
  ['GET', '/fs/data/%5c..%5cx', 400, 'encoded backslashes'],
  ['GET', '/fs/data/%5C', 400, 'encoded backslash alone'],
  ['GET', '/fs/C:%5Cx', 400, 'windows drive form'],
  ['GET', '/fs/data/ok.txt%00', 400, 'encoded NUL after a name'],
  ['GET', '/fs/data/%00', 400, 'encoded NUL segment'],
  ['GET', '/fs/data/%00/../x', 400, 'NUL then dot-dot'],
  ['GET', '/fs/data//ok.txt', 400, 'empty segment'],
  ['GET', '/fs//data/ok.txt', 400, 'double leading slash'],
  ['GET', '/fs//etc/passwd', 400, 'absolute path form'],
  ['GET', '/fs///', 400, 'only slashes'],
  ['GET', '/fs/data/ok.txt//', 400, 'two trailing slashes'],
  ['GET', '/fs/data/%', 400, 'lone percent'],
  ['GET', '/fs/data/%zz', 400, 'bad percent hex'],
  ['GET', '/fs/data/%2', 400, 'truncated percent'],
  ['GET', '/fs/data/%u002e%u002e/x', 400, '%u encoding'],
  ['GET', '/fs/data/%C0%AE%C0%AE/x', 400, 'overlong UTF-8 dots'],
  ['GET', '/fs/data/%C0%AF', 400, 'overlong UTF-8 slash'],
  ['GET', '/fs/data/%E0%80%AE', 400, 'three-byte overlong dot'],
  ['GET', '/fs/data/%ED%A0%80', 400, 'UTF-16 surrogate'],
  ['GET', '/fs/data/%FF', 400, 'invalid UTF-8 byte'],
  ['GET', `/fs/data/${a(256)}`, 400, 'segment over 255 bytes'],
  ['GET', `/fs/data/${'%C3%A9'.repeat(128)}`, 400, 'segment over 255 bytes in UTF-8'],
  ['GET', `/fs/${LONG_PATH}`, 400, 'path over 4095 bytes'],
  ['PUT', '/fs/data/../database/evil', 400, 'PUT traversal'],
  ['DELETE', '/fs/data/%2e%2e/database/x', 400, 'DELETE encoded traversal'],
  ['HEAD', '/fs/data/../x', 400, 'HEAD traversal'],
  ['GET', 'http://127.0.0.1/fs/data/../database/x', 400, 'absolute-form target with traversal'],
  ['GET', '/fs/database/x', 403, 'sibling prefix data vs database'],
  ['GET', '/fs/dat/x', 403, 'shorter sibling'],
  ['GET', '/fs/data.bak/x', 403, 'sibling with a suffix'],
  ['GET', '/fs/DATA/ok.txt', 403, 'case variant of the prefix'],
  ['GET', '/fs/x', 403, 'root file outside the prefix'],
  ['GET', '/fs/', 403, 'the root itself'],
  ['GET', '/fs', 403, 'the root without slash'],
  ['GET', '/fs/etc/passwd', 403, 'absolute-looking relative path'],
  ['GET', '/fs/~/x', 403, 'tilde is a literal name'],
  ['PUT', '/fs/database/evil', 403, 'PUT into a sibling'],
  ['GET', '/fs/data/link-out/secret', 403, 'symlink to outside on the path'],
  ['GET', '/fs/data/link-out', 403, 'final symlink to a folder outside'],
  ['GET', '/fs/data/link-in', 403, 'final symlink to a file inside'],
  ['GET', '/fs/data/link-rel/x', 403, 'relative symlink to the sibling'],
  ['PUT', '/fs/data/link-out/evil', 403, 'PUT through a symlink'],
  ['PUT', '/fs/data/link-out', 403, 'PUT over a symlink'],
  ['DELETE', '/fs/data/link-out/secret', 403, 'DELETE through a symlink'],
  ['DELETE', '/fs/data/link-in', 403, 'DELETE of a symlink'],
  ['HEAD', '/fs/data/link-out/secret', 403, 'HEAD through a symlink'],
  ['GET', '/fs/data/ok.txt/x', 409, 'file in a parent position'],
  ['GET', '/fs/data/sub', 409, 'a directory'],
  ['PUT', '/fs/data/sub', 409, 'PUT over a directory'],
  ['GET', '/fs/data/%252e%252e/x', 404, 'double-encoded dots decode once to a literal name'],
  ['GET', '/fs/data/%252F', 404, 'double-encoded slash is a literal name'],
  ['GET', '/fs/data/%EF%BC%8E%EF%BC%8E/x', 404, 'fullwidth dots look-alike'],
  ['GET', '/fs/data/%E2%80%A4%E2%80%A4/x', 404, 'one-dot leaders look-alike'],
  ['GET', '/fs/data/%E2%88%95etc', 404, 'division slash look-alike'],
  ['GET', '/fs/data/%EF%BC%8F', 404, 'fullwidth solidus look-alike'],
  ['GET', '/fs/data/...', 404, 'three dots is a name'],
  ['GET', '/fs/data/..;/x', 404, 'dot-dot-semicolon is a name'],
  ['GET', '/fs/data/~/x', 404, 'tilde inside the scope'],
  ['GET', '/fs/data/C:', 404, 'drive letter is a name'],
  ['GET', '/fs/data/ok.txt;.png', 404, 'semicolon suffix is part of the name'],
  ['GET', '/fs/data/ok.txt%3F', 404, 'encoded question mark is part of the name'],
  ['GET', `/fs/data/${a(255)}`, 404, 'segment of exactly 255 bytes is legal'],
  ['GET', '/fs/data/ok.txt/', 200, 'one trailing slash is dropped'],
  ['GET', '/fs/%64ata/ok.txt', 200, 'encoded letter decodes to the prefix'],
  ['GET', '/fs/data/ok%2Etxt', 200, 'encoded dot inside a name'],
  ['GET', 'http://127.0.0.1/fs/data/ok.txt', 200, 'absolute-form target'],
];

describe('/fs hostile paths (spec §4.1, §7; behaviour.md §9.6)', () => {
  it('when the table is counted, then it has at least 60 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(60);
  });

  it.each(CASES)('%s %s → %i (%s)', async (method, path, status) => {
    const r = await send(app.port, { method, path, headers: { Authorization: `Bearer ${secret}` }, body: method === 'PUT' ? 'EVIL' : undefined });
    expect(r.status).toBe(status);
    if (method === 'HEAD') {
      expect(r.body.length).toBe(0);
      return;
    }
    const reason = { 400: 'invalid_path', 403: undefined, 404: 'not_found', 409: undefined, 200: undefined }[status as 400];
    if (reason) expect(r.json.reason).toBe(reason);
    if (status === 400) expect(r.json.error).toBe(`Illegal path: ${path.replace(/^(http:\/\/[^/]+)?\/fs\/?/, '')}`);
    if (status === 200) expect(r.body.toString()).toBe('ok');
    expect(r.body.toString()).not.toContain('OUTSIDE');
    expect(r.body.toString()).not.toContain('sibling');
  });

  it.each([
    ['GET /fs/data/a b HTTP/1.1', 'space in the target'],
    ['GET /fs/data/\u0000x HTTP/1.1', 'raw NUL in the target'],
    ['GET /fs/data/\u007fx HTTP/1.1', 'raw DEL in the target'],
  ])('when the request line carries %j (%s), then the HTTP parser answers 400', async (line) => {
    const status = await new Promise<string>((resolve, reject) => {
      const s = connect(app.port, '127.0.0.1', () => s.write(`${line}\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${secret}\r\n\r\n`));
      let got = '';
      s.on('data', (c: Buffer) => { got += c.toString('latin1'); });
      s.on('close', () => resolve(got.split('\r\n')[0]));
      s.on('error', reject);
    });
    expect(status).toBe('HTTP/1.1 400 Bad Request');
  });

  it('when every hostile request has run, then the outside folder and the sibling are untouched', () => {
    expect(readdirSync(outside)).toEqual(['secret']);
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('OUTSIDE');
    expect(readdirSync(join(home, 'database'))).toEqual(['x']);
    expect(readFileSync(join(home, 'database', 'x'), 'utf8')).toBe('sibling');
    expect(statSync(join(home, 'data', 'sub')).isDirectory()).toBe(true);
    expect(readFileSync(join(home, 'data', 'ok.txt'), 'utf8')).toBe('ok');
  });
});
