// bench/proxy: the egress proxy's cost (behaviour.md §15.2). Processes of their own, as in use: a loopback
// HTTP server (bench/proxy-server.mjs), the proxy built in dist/ (bench/proxy-host.mjs, its only
// agent allowed to the server) and this client.
// (1) A 10 MiB GET, each on a new connection: direct, through the proxy in absolute form, and through
//     a CONNECT tunnel (its setup included). The modes alternate round by round, the order rotated,
//     so they see the same machine load. Target: each proxied median at most 1.25x the direct one.
// (2) Connect setup: a TCP connect to the server vs a CONNECT through the proxy until its `200`,
//     rotating. Target: p50 difference at most 1 ms.
// BENCH_PROXY_ROUNDS and BENCH_PROXY_CONNECTS change the counts.
// Both also run through bench/proxy-bare.mjs, a Node proxy with no credential and no policy: the
// floor any proxy in a process of its own pays on this machine, so the egress proxy's own share shows.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { cpuMs, median, percentile, root, startServer, writeResult } from './common.mjs';

const ROUNDS = Number(process.env.BENCH_PROXY_ROUNDS ?? 40);
const CONNECTS = Number(process.env.BENCH_PROXY_CONNECTS ?? 400);
const WARM = 5;
const BIG = 10 * 1024 * 1024;

/** Start bench/proxy-host.mjs for `serverPort`; resolves with its port, the agent's credential header and a stop function. */
async function startProxyHost(serverPort) {
  const proc = spawn(process.execPath, [join(root, 'bench', 'proxy-host.mjs'), String(serverPort)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const { port, secret } = await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (c) => {
      out += c;
      const m = /secret (\S+)\nlistening (\d+)/.exec(out);
      if (m) resolve({ secret: m[1], port: Number(m[2]) });
    });
    proc.once('exit', (c) => reject(new Error(`proxy-host exited ${c}`)));
  });
  const auth = `Basic ${Buffer.from(`bench:${secret}`).toString('base64')}`;
  return { port, auth, pid: proc.pid, stop: () => new Promise((r) => { proc.once('exit', r); proc.kill('SIGTERM'); }) };
}

/** Open a CONNECT tunnel to 127.0.0.1:<to>; resolves with the socket once the proxy said 200. */
function tunnel(proxyPort, auth, to) {
  const credential = auth ? `Proxy-Authorization: ${auth}\r\n` : '';
  return new Promise((resolve, reject) => {
    const s = connect(proxyPort, '127.0.0.1');
    s.setNoDelay(true);
    let head = '';
    const onData = (c) => {
      head += c.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      s.off('data', onData);
      if (!head.startsWith('HTTP/1.1 200 ')) reject(new Error(`CONNECT answered ${head.split('\r\n')[0]}`));
      else resolve(s);
    };
    s.on('data', onData);
    s.once('error', reject);
    s.once('connect', () => s.write(`CONNECT 127.0.0.1:${to} HTTP/1.1\r\nHost: 127.0.0.1:${to}\r\n${credential}\r\n`));
  });
}

/**
 * One GET read to the end; resolves with the ms it took. A new connection each time: `agent: false`,
 * or (for a tunnel) no agent at all, since an agent would ignore `createConnection` and dial itself.
 */
function download(options) {
  const t = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const r = request(options.createConnection ? options : { agent: false, ...options }, (res) => {
      let n = 0;
      res.on('data', (c) => { n += c.length; });
      res.on('end', () => (n === BIG && res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - t) / 1e6) : reject(new Error(`got ${res.statusCode}, ${n} bytes`))));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end();
  });
}

const server = await startServer('proxy-server.mjs', []);
const proxy = await startProxyHost(server.port);
const bare = await startServer('proxy-bare.mjs', []);
const loadBefore = loadavg()[0];
const big = `http://127.0.0.1:${server.port}/big`;
/** A download through a tunnel of `port`, its setup included. */
async function viaTunnel(port, auth) {
  const t = process.hrtime.bigint();
  const s = await tunnel(port, auth, server.port);
  await download({ host: '127.0.0.1', port: server.port, path: '/big', createConnection: () => s });
  return Number(process.hrtime.bigint() - t) / 1e6;
}
const modes = {
  direct: () => download({ host: '127.0.0.1', port: server.port, path: '/big' }),
  absolute: () => download({ host: '127.0.0.1', port: proxy.port, path: big, headers: { 'Proxy-Authorization': proxy.auth } }),
  connect: () => viaTunnel(proxy.port, proxy.auth),
  bareAbsolute: () => download({ host: '127.0.0.1', port: bare.port, path: big }),
  bareConnect: () => viaTunnel(bare.port, null),
};
/** One TCP connect to the server, or a CONNECT through `port` until its 200; resolves with the ms. */
async function setupOnce(port, auth) {
  const t = process.hrtime.bigint();
  const s = port === null
    ? await new Promise((resolve, reject) => { const c = connect(server.port, '127.0.0.1'); c.once('connect', () => resolve(c)); c.once('error', reject); })
    : await tunnel(port, auth, server.port);
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  s.destroy();
  return ms;
}
const setups = { direct: () => setupOnce(null), proxy: () => setupOnce(proxy.port, proxy.auth), bare: () => setupOnce(bare.port, null) };
/** The proxy process each mode goes through (its CPU time is summed per mode). */
const proxyPid = { absolute: proxy.pid, connect: proxy.pid, bareAbsolute: bare.pid, bareConnect: bare.pid };
const names = Object.keys(modes);
const times = Object.fromEntries(names.map((n) => [n, []]));
const cpu = Object.fromEntries(names.map((n) => [n, 0]));
const setup = Object.fromEntries(Object.keys(setups).map((n) => [n, []]));
try {
  for (let i = 0; i < WARM + ROUNDS; i++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length];
      const before = proxyPid[name] ? cpuMs(proxyPid[name]) : 0;
      const ms = await modes[name]();
      if (i < WARM) continue;
      times[name].push(ms);
      if (proxyPid[name]) cpu[name] += cpuMs(proxyPid[name]) - before;
    }
  }
  const setupNames = Object.keys(setups);
  for (let i = 0; i < WARM + CONNECTS; i++) {
    for (let k = 0; k < setupNames.length; k++) {
      const name = setupNames[(i + k) % setupNames.length];
      const ms = await setups[name]();
      if (i >= WARM) setup[name].push(ms);
    }
  }
  const loadAfter = loadavg()[0];
  const base = median(times.direct);
  const ratio = (name) => median(times[name]) / base;
  const proxyCpu = (name) => (proxyPid[name] ? (cpu[name] / ROUNDS).toFixed(1) : '–');
  const row = (name, label) => `| ${label} | ${median(times[name]).toFixed(1)} | ${percentile(times[name], 90).toFixed(1)} | ${ratio(name).toFixed(2)}x | ${proxyCpu(name)} |`;
  const setupDiff = median(setup.proxy) - median(setup.direct);
  const verdict = (ok) => (ok ? 'within target' : 'OVER TARGET');
  writeResult('proxy', 'Egress proxy: 10 MiB download and connect setup, direct vs through the proxy', [
    `Processes of their own: a loopback HTTP server, the egress proxy (dist/effects/egressProxy.js under bench/proxy-host.mjs, policy \`allow 127.0.0.1:<server>\`), the bare Node proxy (bench/proxy-bare.mjs) and the client (node:http). Load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after (the machine's 2 cores are shared).`, '',
    `10 MiB GET on a new connection each time, ${ROUNDS} rounds after ${WARM} warm-up, the modes alternating (order rotated each round):`, '',
    '| mode | median ms | p90 ms | median / direct | proxy CPU ms per download |', '| --- | --- | --- | --- | --- |',
    row('direct', 'direct'), row('absolute', 'egress proxy, absolute-form'), row('connect', 'egress proxy, CONNECT tunnel (setup included)'),
    row('bareAbsolute', 'floor: bare Node proxy, absolute-form'), row('bareConnect', 'floor: bare Node proxy, CONNECT'), '',
    'Proxy CPU: user + system time of the proxy process over the rounds, divided by the rounds (/proc, 10 ms ticks): on shared cores this is the time the extra hop takes from the others.', '',
    `Download ratio: absolute-form **${ratio('absolute').toFixed(2)}x**, CONNECT **${ratio('connect').toFixed(2)}x** (target: at most 1.25x; ${verdict(ratio('absolute') <= 1.25 && ratio('connect') <= 1.25)}).`, '',
    `Connect setup, ${CONNECTS} each, rotating: TCP connect to the server p50 ${median(setup.direct).toFixed(3)} ms (p90 ${percentile(setup.direct, 90).toFixed(3)}); CONNECT through the egress proxy until its 200 p50 ${median(setup.proxy).toFixed(3)} ms (p90 ${percentile(setup.proxy, 90).toFixed(3)}); through the bare Node proxy p50 ${median(setup.bare).toFixed(3)} ms (p90 ${percentile(setup.bare, 90).toFixed(3)}).`, '',
    `Connect setup added by the proxy (p50 difference): **${setupDiff.toFixed(3)} ms** (target: at most 1 ms; ${verdict(setupDiff <= 1)}).`,
  ].join('\n'));
} finally {
  await proxy.stop();
  await bare.stop();
  await server.stop();
}
