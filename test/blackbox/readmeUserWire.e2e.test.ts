import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, freePort, tempDir } from '../helpers/daemon.js';

/*
 * The README's user-wire example (section "The earlier user wire"), run as written: the first
 * block starts the daemon, the others are run line by line with bash and each answer must equal its
 * `# ->` lines. Only three things are swapped so the test can run beside anything else: the port
 * (3100 → a free one, through SVC_PORT for the daemon and the CLI), the homes (/tmp/ann, /tmp/bea → a temp folder) and
 * `loom` (→ the built CLI).
 */

interface Step {
  command: string;
  expected: string[];
}

/** The `sh` blocks from the example marker to the next section, as steps (a command with its `# ->` lines). */
function readmeSteps(): Step[][] {
  const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
  const start = readme.indexOf('<!-- example: user wire');
  expect(start).toBeGreaterThan(0);
  const end = readme.indexOf('<!-- section:', start);
  const blocks = [...readme.slice(start, end).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
  return blocks.map((block) => {
    const steps: Step[] = [];
    let pending = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('# ->')) {
        steps[steps.length - 1].expected.push(line.slice(5));
      } else if (line.trim() !== '' && !line.startsWith('#')) {
        pending += line.endsWith('\\') ? line.slice(0, -1) : line;
        if (!line.endsWith('\\')) {
          steps.push({ command: pending, expected: [] });
          pending = '';
        }
      }
    }
    return steps;
  });
}

let daemon: ChildProcess | undefined;
afterAll(async () => {
  if (daemon && daemon.exitCode === null) {
    const gone = new Promise((r) => daemon?.once('exit', r));
    daemon.kill('SIGKILL');
    await gone;
  }
});

describe('README: the user-wire example', () => {
  it('runs as written and every answer is the one shown', async () => {
    const [start, ...rest] = readmeSteps();
    const steps = rest.flat();
    expect(start).toHaveLength(1);
    expect(steps.length).toBeGreaterThanOrEqual(6);
    const port = await freePort();
    const tmp = tempDir();
    const swap = (s: string) => s.replaceAll('3100', String(port)).replace(/\/tmp\/(ann|bea)\b/g, (_m, name: string) => join(tmp, name));
    const command = (s: string) => swap(s).replace(/^loom /, `${process.execPath} ${CLI} `);
    const env: NodeJS.ProcessEnv = { ...process.env, SVC_DATA_DIR: tempDir(), SVC_PORT: String(port) };
    delete env.SVC_WIRE;
    delete env.LOOM_AGENT_ID;

    daemon = spawn('bash', ['-c', `exec ${command(start[0].command)}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    daemon.stdout?.on('data', (c: Buffer) => { out += c.toString(); });
    const t0 = Date.now();
    while (!out.includes('\n') && daemon.exitCode === null && Date.now() - t0 < 15000) await new Promise((r) => setTimeout(r, 20));
    expect(out).toBe(start[0].expected.map(swap).join('\n') + '\n');

    for (const step of steps) {
      const stdout = await new Promise<string>((resolve, reject) => {
        execFile('bash', ['-c', command(step.command)], { env }, (err, so) => (err ? reject(err) : resolve(so)));
      });
      expect({ command: step.command, answer: stdout.replace(/\n+$/, '') }).toEqual({ command: step.command, answer: step.expected.map(swap).join('\n') });
    }
    // The last step was /shutdown: the daemon exits 0.
    const code = await new Promise((r) => (daemon?.exitCode !== null ? r(daemon?.exitCode) : daemon?.once('exit', r)));
    expect(code).toBe(0);
  });
});
