import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, startDaemon, type RunningDaemon } from '../helpers/daemon.js';
import { skipReason } from './support.js';

/*
 * The README's sandbox example (section "Sandbox"), run as written against the built daemon: each
 * command runs with bash, `loom` being the built CLI, and what it prints (stdout and stderr: a failed
 * command's answer goes to stderr) must equal its `# ->` lines, where `<data>` stands for the data
 * directory's real path.
 */

const reason = skipReason();
if (reason) process.stderr.write(`test/sandbox/readme: skipped: ${reason}\n`);
const suite = reason ? describe.skip : describe;

interface Step {
  command: string;
  expected: string[];
}

/** The `sh` blocks from the sandbox example marker to the next heading, as steps. */
function readmeSteps(): Step[] {
  const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
  const start = readme.indexOf('<!-- example: sandbox');
  expect(start).toBeGreaterThan(0);
  const end = readme.indexOf('\n## ', start);
  const steps: Step[] = [];
  for (const m of readme.slice(start, end).matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of m[1].split('\n')) {
      if (line.startsWith('# ->')) steps[steps.length - 1].expected.push(line.slice(5));
      else if (line.trim() !== '' && !line.startsWith('#')) steps.push({ command: line, expected: [] });
    }
  }
  return steps;
}

let d: RunningDaemon | undefined;
beforeAll(async () => {
  if (reason) return;
  d = await startDaemon();
});
afterAll(async () => {
  await d?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

suite('README: the sandbox example', () => {
  it('runs as written and every answer is the one shown', async () => {
    const steps = readmeSteps();
    expect(steps.length).toBeGreaterThanOrEqual(3);
    const data = realpathSync(d!.dataDir);
    const env: NodeJS.ProcessEnv = { ...process.env, SVC_DATA_DIR: d!.dataDir, SVC_PORT: String(d!.port) };
    delete env.LOOM_AGENT_ID;
    for (const step of steps) {
      const command = step.command.replace(/^loom /, `${process.execPath} ${CLI} `);
      const out = await new Promise<string>((resolve) => {
        execFile('bash', ['-c', `${command} 2>&1`], { env }, (_err, so) => resolve(so));
      });
      const shown = step.expected.map((l) => l.replaceAll('<data>', data)).join('\n');
      const answer = step.expected.length ? out.replace(/\n+$/, '') : shown;
      expect({ command: step.command, answer }).toEqual({ command: step.command, answer: shown });
    }
  });
});
