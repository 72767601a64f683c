// bench/sandbox: the cost of the workspace sandbox (behaviour.md §15). One daemon, two agents (one
// `none`, one `workspace`), one sequential client: POST /exec `/exec true`, alternating the two agents
// request by request so both see the same machine load. Reports p50/p90 of each and the p50
// difference (target: within 1 ms). Skips with a note where the kernel has no Landlock.
import { Agent, request } from 'node:http';
import { rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { median, percentile, startDaemon, writeResult } from './common.mjs';

const N = Number(process.env.BENCH_SANDBOX_N ?? 400);
const WARM = 30;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function post(port, path, headers, body) {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers } }, (res) => {
      let out = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { out += c; });
      res.on('end', () => resolve(out));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(text);
  });
}

const d = await startDaemon();
try {
  const describe = JSON.parse(await new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port: d.port, path: '/describe', agent }, (res) => { let t = ''; res.on('data', (c) => { t += c; }); res.on('end', () => resolve(t)); }).on('error', reject).end();
  }));
  if (!describe.sandbox?.available) {
    writeResult('sandbox', 'Sandbox: /exec true, sandboxed vs unsandboxed', `Skipped: this kernel has no Landlock (/describe: ${JSON.stringify(describe.sandbox)}).`);
  } else {
    for (const mode of ['none', 'workspace']) await post(d.port, '/agents', {}, { agent_id: `b-${mode}`, sandbox: mode });
    const times = { none: [], workspace: [] };
    for (let i = 0; i < WARM + N; i++) {
      for (const mode of i % 2 ? ['none', 'workspace'] : ['workspace', 'none']) {
        const t = process.hrtime.bigint();
        const out = await post(d.port, '/exec', { 'X-Agent-Id': `b-${mode}` }, { cmd: '/exec true', topic: 'main' });
        const ms = Number(process.hrtime.bigint() - t) / 1e6;
        if (!out.includes('exit: 0')) throw new Error(`unexpected answer for ${mode}: ${out}`);
        if (i >= WARM) times[mode].push(ms);
      }
    }
    const row = (mode) => `| ${mode} | ${median(times[mode]).toFixed(2)} | ${percentile(times[mode], 90).toFixed(2)} |`;
    const diff = median(times.workspace) - median(times.none);
    writeResult('sandbox', 'Sandbox: /exec true, sandboxed vs unsandboxed', [
      `${N} sequential POST /exec \`/exec true\` per agent, the two agents alternating; Landlock ABI ${describe.sandbox.abi}.`, '',
      '| agent sandbox | p50 ms | p90 ms |', '| --- | --- | --- |', row('none'), row('workspace'), '',
      `p50 difference (workspace − none): **${diff.toFixed(2)} ms** (target: within 1 ms).`,
    ].join('\n'));
  }
} finally {
  await d.stop();
  rmSync(d.dataDir, { recursive: true, force: true });
}

// The network side of the sandbox's cost (behaviour.md §15.2): the egress proxy, measured by its own
// bench (download ratio, connect setup) so `npm run bench -- sandbox` reports both.
const proxy = spawnSync(process.execPath, [new URL('./proxy.bench.mjs', import.meta.url).pathname], { stdio: 'inherit' });
if (proxy.status !== 0) process.exit(proxy.status ?? 1);
