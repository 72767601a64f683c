import type { GlobalOpts } from './common.js';
import { client, cliAgent } from './common.js';

/**
 * `loom [--agent id] <topic> '<cmd>'`: one /exec call; prints the content without the `re:` line;
 * exit 0 when ok, 1 when not (behaviour.md §2.13). An unknown agent is registered first (never
 * sending a home, so nothing is clobbered), as the MCP bridge does.
 */
export async function execOnce(opts: GlobalOpts, topic: string, cmd: string): Promise<number> {
  const c = client(opts);
  let out = await c.exec(topic, cmd);
  if (out.status === 401 && out.error?.error === `Unknown agent: ${cliAgent(opts)}`) {
    await c.registerAgent({ agent_id: cliAgent(opts) });
    out = await c.exec(topic, cmd);
  }
  if (out.status !== 200) {
    if (opts.json) process.stdout.write(JSON.stringify(out, null, 2) + '\n');
    else process.stdout.write(`ERROR(HTTP_${out.status}): ${out.error?.error}${out.error?.message ? ` — ${out.error.message}` : ''}\n`);
    return 1;
  }
  if (opts.json) process.stdout.write(JSON.stringify({ head: out.head, content: out.content, done: out.done }, null, 2) + '\n');
  else if (out.incomplete) process.stdout.write(`ERROR(STREAM_INCOMPLETE): the daemon's answer was cut off\n`);
  else process.stdout.write((out.body ?? '') + '\n');
  return out.head?.ok && !out.incomplete ? 0 : 1;
}
