import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { tempDir, type RunningDaemon } from '../helpers/daemon.js';
import { alive, Daemons, exec, json } from './support.js';

/**
 * The evaluation rule end to end: `CLI echo $(( {n} + 1 ))` called with `--n 'a[$(touch …)]'` would
 * run the command. Through the daemon, a hostile value is refused before anything runs — typed by the
 * caller, or stored as a value shortcut by a web page's response template — and numbers still work.
 */

const daemons = new Daemons();
let d: RunningDaemon;
let web: Server;
let port = 0;
const marker = join(tempDir('loom-pwn-'), 'pwned');
const HOSTILE = `a[$(touch ${marker})]`;

const CALC = `# calc

\`\`\`act.calc
CLI echo $(( {n} + 1 ))
  n: string (required) "a number"
\`\`\`

\`\`\`act.count
CLI n={n}; [[ $n -gt 3 ]] && echo big || echo small
  n: string (required)
\`\`\`

\`\`\`act.echo
CLI printf '%s' {n} "{n}" '{n}'
  n: string (required)
\`\`\`
`;

const PAGE = (p: number) => `# items

\`\`\`act.items
GET http://127.0.0.1:${p}/items.json
\`\`\`

\`\`\`act.items.response
for: x in items
{@item} = {x.n}
- [{@item}] {x.n}
end:
\`\`\`
`;

beforeAll(async () => {
  web = createServer((req, res) => {
    if (req.url === '/app.md') { res.setHeader('Content-Type', 'text/markdown'); res.end(PAGE(port)); return; }
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ items: [{ n: HOSTILE }, { n: '41' }] }));
  });
  await new Promise<void>((r) => web.listen(0, '127.0.0.1', () => r()));
  port = (web.address() as { port: number }).port;
  d = await daemons.start();
  const home = String((await json(d.base, 'POST', '/agents', { agent_id: 'eve' })).body.home);
  writeFileSync(join(home, 'calc.md'), CALC);
});
afterAll(async () => {
  await daemons.killAll();
  await new Promise<void>((r) => (web ? web.close(() => r()) : r()));
});

describe('a CLI action never runs text a value smuggles into an arithmetic context', () => {
  it('when --n is a[$(touch …)] in $(( {n} + 1 )), then INVALID_ARGS and nothing runs', async () => {
    await exec(d.base, 'eve', 'main', '/open ~/calc.md');
    const r = await exec(d.base, 'eve', 'main', `/act.calc --n '${HOSTILE}'`);
    expect(r.head?.code).toBe('INVALID_ARGS');
    expect(r.body).toBe('ERROR(INVALID_ARGS): Value for --n is not a number; the command uses it in arithmetic\nRecovery: /act.calc --help');
    expect(existsSync(marker)).toBe(false);
    expect((await exec(d.base, 'eve', 'main', '/act.calc --n 41')).body).toBe('42');
  });

  it('when the value reaches [[ -gt ]] through a variable, then INVALID_ARGS too', async () => {
    await exec(d.base, 'eve', 'main', '/open ~/calc.md');
    expect((await exec(d.base, 'eve', 'main', `/act.count --n '${HOSTILE}'`)).body?.split('\n')[0]).toBe('ERROR(INVALID_ARGS): Value for --n is not a number; the command uses it in arithmetic');
    expect((await exec(d.base, 'eve', 'main', '/act.count --n 7')).body).toBe('big');
    expect(existsSync(marker)).toBe(false);
  });

  it('when a web page stored the value as @item-1, then the local CLI action refuses it and @item-2 (41) works', async () => {
    expect((await exec(d.base, 'eve', 'web', `/open http://127.0.0.1:${port}/app.md`)).head?.ok).toBe(true);
    const listed = await exec(d.base, 'eve', 'web', '/act.items');
    expect(listed.body).toContain('[@item-1]');
    await exec(d.base, 'eve', 'web', '/open ~/calc.md');
    const r = await exec(d.base, 'eve', 'web', '/act.calc @item-1');
    expect(r.body?.split('\n')[0]).toBe('ERROR(INVALID_ARGS): Value for --n is not a number; the command uses it in arithmetic');
    expect((await exec(d.base, 'eve', 'web', '/act.calc @item-2')).body).toBe('42');
    expect(existsSync(marker)).toBe(false);
  });

  it('when the value sits in plain quoting contexts, then it is printed exactly, three times', async () => {
    await exec(d.base, 'eve', 'main', '/open ~/calc.md');
    expect((await exec(d.base, 'eve', 'main', `/act.echo --n '${HOSTILE}'`)).body).toBe(HOSTILE.repeat(3));
    expect(existsSync(marker)).toBe(false);
    expect(await alive(d)).toBe(true);
  });
});
