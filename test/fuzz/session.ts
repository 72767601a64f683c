import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { inputs, secretAtoms } from './inputs.js';
import { fuzzFromInside, INSIDE_REQUESTS, type InsideReport } from './inside.js';
import { fuzz, type FuzzReport } from './run.js';

/** The agents the generated inputs act as (registered first; one more is auto-registered by /mcp). */
export const FUZZ_AGENTS = ['fz', 'fz2', 'constructor'];

/**
 * One fuzz session against the built daemon (a temp data directory): register the agents, send
 * `count` inputs generated from `seed`, judge every answer; then a confined agent calls the daemon's
 * port with other agents' ids (inside.ts). The daemon's stderr must show no stack trace.
 */
export async function fuzzSession(seed: number, count: number, onDaemon?: (d: RunningDaemon) => void): Promise<FuzzReport & { inside: InsideReport }> {
  const d = await startDaemon();
  onDaemon?.(d);
  try {
    for (const id of FUZZ_AGENTS) {
      // /dev is an allowed path: the generated paths reach devices through the workspace policy (behaviour.md §16).
      const r = await fetch(`${d.base}/agents`, { method: 'POST', body: JSON.stringify({ agent_id: id, webhook: true, allowed_paths: ['/dev'] }) });
      plantSpecialFiles(((await r.json()) as { home: string }).home);
    }
    const alive = async () => d.proc.exitCode === null && (await fetch(`${d.base}/health`).then((r) => r.status === 200, () => false));
    const report = await fuzz(d.base, inputs(seed, count, d.port, FUZZ_AGENTS), { alive });
    const inside = await fuzzFromInside(d, seed, INSIDE_REQUESTS, FUZZ_AGENTS);
    report.findings.push(...inside.findings);
    if (!(await alive())) report.findings.push('the daemon is not answering /health after the confined agent ran');
    if (/^\s+at /m.test(d.stderr())) report.findings.push(`stack trace on stderr:\n${d.stderr().slice(0, 2000)}`);
    // behaviour.md §13.4: whatever was typed, the inspector and the request log hold no secret.
    const state = await fetch(`${d.base}/inspect/state`).then((r) => r.text(), () => '');
    await d.stop();
    const log = readFileSync(join(d.dataDir, 'logs', 'requests.log'), 'utf8');
    const secretParts = secretAtoms(d.port).map((s) => s.slice(-24));
    for (const [where, text] of [['/inspect/state', state], ['requests.log', log]]) {
      for (const part of secretParts) if (text.includes(part)) report.findings.push(`${where} holds a secret ending ${part}`);
    }
    return { ...report, inside };
  } finally {
    await d.kill();
    rmSync(d.dataDir, { recursive: true, force: true });
  }
}

/** Files no command may read whole or block on: FIFOs (also as a package root) and a 2 GiB sparse file. */
function plantSpecialFiles(home: string): void {
  spawnSync('mkfifo', [join(home, 'fifo.md')]);
  spawnSync('mkdir', ['-p', join(home, 'pkg')]);
  spawnSync('mkfifo', [join(home, 'pkg', 'string.md')]);
  closeSync(openSync(join(home, 'huge.md'), 'w'));
  truncateSync(join(home, 'huge.md'), 2 ** 31);
}
