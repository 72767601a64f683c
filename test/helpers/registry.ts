import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A stub npm registry on 127.0.0.1 that serves the packages already installed under a
 * node_modules folder: a packument per name (every installed version) and a tarball per version,
 * made from the installed folder. It lets a test run a real `npm install` of Loom's tarball with
 * no network: npm resolves every dependency range against what `npm ci` put here.
 */
export interface StubRegistry {
  url: string;
  /** Names npm asked for that are not installed here (answered 404). */
  missing: Set<string>;
  close(): Promise<void>;
}

interface Found { dir: string; manifest: Record<string, unknown> }

/** Every package folder under `root` (nested node_modules included), by name, then by version. */
function scan(root: string, into = new Map<string, Map<string, Found>>()): Map<string, Map<string, Found>> {
  if (!existsSync(root)) return into;
  for (const entry of readdirSync(root)) {
    if (entry.startsWith('.')) continue;
    const dirs = entry.startsWith('@') ? readdirSync(join(root, entry)).map((n) => join(root, entry, n)) : [join(root, entry)];
    for (const dir of dirs) {
      const file = join(dir, 'package.json');
      if (!existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      if (typeof manifest.name !== 'string' || typeof manifest.version !== 'string') continue;
      const versions = into.get(manifest.name) ?? new Map<string, Found>();
      versions.set(manifest.version, { dir, manifest });
      into.set(manifest.name, versions);
      scan(join(dir, 'node_modules'), into);
    }
  }
  return into;
}

/** A tarball of an installed package, as `npm pack` lays it out (`package/…`), without its own node_modules or native build output. */
function tarball(found: Found, scratch: string): Buffer {
  const out = join(scratch, `${createHash('sha1').update(found.dir).digest('hex')}.tgz`);
  const native = existsSync(join(found.dir, 'binding.gyp'));
  const args = ['-czf', out, '--exclude=./node_modules', ...(native ? ['--exclude=./build'] : []), '--transform', 's,^\\.,package,', '-C', found.dir, '.'];
  const r = spawnSync('tar', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tar failed for ${found.dir}: ${r.stderr}`);
  const bytes = readFileSync(out);
  rmSync(out);
  return bytes;
}

/** Start the registry over `nodeModules` (default: the project's). */
export async function startStubRegistry(nodeModules = join(process.cwd(), 'node_modules')): Promise<StubRegistry> {
  const packages = scan(nodeModules);
  const scratch = mkdtempSync(join(tmpdir(), 'loom-registry-'));
  const tarballs = new Map<string, Buffer>();
  const missing = new Set<string>();
  let base = '';
  const tarballOf = (name: string, version: string): Buffer | undefined => {
    const key = `${name}@${version}`;
    const found = packages.get(name)?.get(version);
    if (!found) return undefined;
    if (!tarballs.has(key)) tarballs.set(key, tarball(found, scratch));
    return tarballs.get(key);
  };
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]).slice(1);
    const tgz = /^(.+)\/-\/([^/]+)\.tgz$/.exec(path);
    if (tgz) {
      const short = tgz[1].split('/').pop() as string;
      const bytes = tgz[2].startsWith(`${short}-`) ? tarballOf(tgz[1], tgz[2].slice(short.length + 1)) : undefined;
      if (!bytes) { res.writeHead(404).end(); return; }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length }).end(bytes);
      return;
    }
    const versions = packages.get(path);
    if (!versions) {
      missing.add(path);
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
      return;
    }
    const doc: Record<string, unknown> = { name: path, versions: {}, 'dist-tags': {} };
    let latest = '';
    for (const [version, found] of versions) {
      const bytes = tarballOf(path, version) as Buffer;
      const base64 = createHash('sha512').update(bytes).digest('base64');
      const short = path.split('/').pop();
      (doc.versions as Record<string, unknown>)[version] = {
        ...found.manifest,
        dist: { tarball: `${base}/${path}/-/${short}-${version}.tgz`, integrity: `sha512-${base64}`, shasum: createHash('sha1').update(bytes).digest('hex') },
      };
      if (latest === '' || compareVersions(version, latest) > 0) latest = version;
    }
    doc['dist-tags'] = { latest };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url: `${base}/`,
    missing,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => { rmSync(scratch, { recursive: true, force: true }); resolve(); });
    }),
  };
}

/** Numeric order of x.y.z (prerelease tags sort before the release). */
function compareVersions(a: string, b: string): number {
  const parse = (v: string) => { const [core, pre] = v.split('-', 2); return { nums: core.split('.').map(Number), pre }; };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) if (x.nums[i] !== y.nums[i]) return (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
  if (x.pre === y.pre) return 0;
  return x.pre === undefined ? 1 : y.pre === undefined ? -1 : x.pre < y.pre ? -1 : 1;
}
