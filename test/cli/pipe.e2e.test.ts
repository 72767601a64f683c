import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { CLI } from '../helpers/daemon.js';

/** Run the CLI with the reading end of its stdout closed at once (as `| head -1` does once it has its line). */
function closedReader(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout.destroy();
    let stderr = '';
    p.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    p.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('loom output into a reader that stops early', () => {
  it('when the reader of stdout has gone (`loom --help | head -1`), then the CLI ends with 0 and no EPIPE trace', async () => {
    const r = await closedReader(['--help']);
    expect(r.stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(r.code).toBe(0);
  });
});
