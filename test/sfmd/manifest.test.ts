import { describe, expect, it } from '@jest/globals';
import { badPathReason, isManifest, validateManifest } from '../../src/sfmd/manifest.js';

const URL = 'https://apps.test/m.json';
const check = (v: Record<string, unknown>) => validateManifest(v as { files: unknown[] }, URL);

describe('validateManifest (behaviour.md §7.4 steps 2–4)', () => {
  it('when the manifest is valid, then it keeps files, delivery and the install hint', () => {
    const r = check({ files: [{ path: 'string.md', content: '# x' }, { path: 'a/b.md', url: 'https://cdn.test/b.md' }], delivery: 'any', install_hint: 'hi' });
    expect(r).toEqual({ ok: true, manifest: { files: [{ path: 'string.md', content: '# x' }, { path: 'a/b.md', url: 'https://cdn.test/b.md' }], delivery: 'local', installHint: 'hi' } });
  });
  it('when only a JSON object with a files array is a manifest, then others are not', () => {
    expect([isManifest({ files: [] }), isManifest({ files: 'x' }), isManifest([]), isManifest(null)]).toEqual([true, false, false, false]);
  });
  it.each([
    [{ files: [] }, 'Manifest files[] must be a non-empty array'],
    [{ files: [{ path: 'a.md', content: '' }, { path: 'b.md', content: '' }] }, `Manifest at ${URL} has no "string.md" entry in files[] (declared: a.md, b.md)`],
    [{ files: [{ path: 'string.md', content: '' }, { path: 'x/../y', content: '' }] }, 'Invalid manifest entry 1: path "x/../y" contains ".."'],
    [{ files: [{ path: 'string.md', content: '' }, { path: 'string.md', content: '' }] }, 'Invalid manifest entry 1: path "string.md" is duplicated'],
    [{ files: [{ path: 'string.md' }] }, 'Invalid manifest entry 0 (string.md): needs a "url" or "content" string'],
    [{ files: [{ path: 'string.md', url: 'http://cdn.test/s.md' }] }, 'Invalid manifest entry 0 (string.md): url must be https://'],
    [{ files: [{ path: 'string.md', content: '' }], delivery: 'ftp' }, 'Unknown delivery "ftp" (use local, link or any)'],
  ])('when the manifest is %j, then it is refused: %s', (m, reason) => {
    expect(check(m)).toEqual({ ok: false, reason });
  });
  it('when a file URL is plain http to a loopback host, then it is allowed', () => {
    expect(check({ files: [{ path: 'string.md', url: 'http://127.0.0.1:9/s.md' }], delivery: 'link' })).toMatchObject({ ok: true, manifest: { delivery: 'link' } });
  });
  it.each([
    ['/abs', 'starts with "/"'], ['\\x', 'starts with a backslash'], ['a\u0000b', 'contains a NUL character'], ['a\\b', 'contains a backslash'],
    ['a//b', 'has an empty or "." segment'], ['./a', 'has an empty or "." segment'], ['x'.repeat(256), 'is longer than 255 characters'], ['ok/fine.md', null],
  ])('when a path is %p, then the reason is %p', (p, r) => {
    expect(badPathReason(p)).toBe(r);
  });
});
