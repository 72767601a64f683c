import { readdirSync, readFileSync } from 'node:fs';

/** True when the process exists and is not a zombie (a container's init may not reap orphans at once). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Poll `cond` every 20 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Processes whose environment has LOOM_AGENT_ID=<agentId>: every shell Loom started for that agent and whatever they started. */
export function loomProcesses(agentId: string): Array<{ pid: number; cmd: string }> {
  const marker = `\0LOOM_AGENT_ID=${agentId}\0`;
  const out: Array<{ pid: number; cmd: string }> = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    let environ: string;
    let cmd: string;
    try {
      environ = `\0${readFileSync(`/proc/${pid}/environ`, 'latin1')}`;
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    if (environ.includes(marker) && alive(pid)) out.push({ pid, cmd });
  }
  return out;
}
