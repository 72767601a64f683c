import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { launchdPlist, systemdUnit, unsafeValue, type ServiceSpec } from '../../src/domain/serviceUnit.js';
import { CLI, freePort, runCli, startDaemon, tempDir, type RunningDaemon } from '../helpers/daemon.js';

/**
 * behaviour.md §17 `loom service`: the CLI writes the systemd user unit under $XDG_CONFIG_HOME and
 * drives systemctl; here LOOM_SYSTEMCTL points at a stand-in script that logs its arguments (a test
 * must not install a real service for the user running it).
 */
describe('loom service (systemd user unit)', () => {
  const dir = tempDir('loom-service-');
  const config = join(dir, 'config');
  const data = join(dir, 'data 100% "$HOME"');
  const unitFile = join(config, 'systemd', 'user', 'loom.service');
  const calls = join(dir, 'calls.log');
  const systemctl = join(dir, 'systemctl');
  let port: number;
  let env: Record<string, string>;
  const logged = () => (existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : []);

  beforeAll(async () => {
    port = await freePort();
    writeFileSync(systemctl, `#!/bin/sh\necho "$*" >> '${calls}'\nif [ "$2" = is-active ]; then echo active; fi\nif [ -n "$FAIL_WITH" ]; then echo "$FAIL_WITH" >&2; exit 1; fi\n`);
    chmodSync(systemctl, 0o755);
    env = { XDG_CONFIG_HOME: config, LOOM_SYSTEMCTL: systemctl, SVC_DATA_DIR: data, SVC_PORT: String(port), PATH: SAFE_PATH };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const q = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%')}"`;
  /** Folders that exist and only their owner writes: the service keeps them as they are. */
  const SAFE_PATH = [...new Set([dirname(process.execPath), '/usr/bin'])].join(':');
  const mode = (f: string) => statSync(f).mode & 0o777;
  const analyze = spawnSync('systemd-analyze', ['--version']).status === 0;

  it('install writes the unit (absolute node and CLI, data dir and port of this environment, Restart=on-failure), reloads, enables and starts it', async () => {
    const r = await runCli(['service', 'install'], env);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(`Installed the systemd user unit ${unitFile}\n  runs: ${process.execPath} ${CLI} daemon --quiet\n  data: ${data} · port ${port}\n  started; it restarts when it fails and starts at login (systemctl --user status loom.service)\n`);
    const unit = readFileSync(unitFile, 'utf8');
    expect(unit).toBe([
      '[Unit]',
      'Description=Loom daemon (local workspaces for AI agents)',
      '',
      '[Service]',
      'Type=simple',
      `ExecStart=${[process.execPath, CLI, 'daemon', '--quiet'].map(q).join(' ').replace(/\$/g, '$$$$')}`,
      `Environment=${q(`SVC_DATA_DIR=${data}`)}`,
      `Environment=${q(`SVC_PORT=${port}`)}`,
      `Environment=${q(`PATH=${SAFE_PATH}`)}`,
      'Restart=on-failure',
      'RestartSec=2',
      '',
      '[Install]',
      'WantedBy=default.target',
      '',
    ].join('\n'));
    expect(logged()).toEqual(['--user daemon-reload', '--user enable --now loom.service']);
    expect(mode(unitFile)).toBe(0o600);
    expect(existsSync(join(dirname(unitFile), 'loom.env'))).toBe(false);
  });

  (analyze ? it : it.skip)('systemd-analyze verify accepts the unit (skipped where systemd-analyze is not installed)', () => {
    const r = spawnSync('systemd-analyze', ['verify', unitFile], { encoding: 'utf8' });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  });

  it('status says active and exits 0; install again says Replaced', async () => {
    expect(await runCli(['service', 'status'], env)).toEqual({ code: 0, stdout: `loom service (systemd): active\n  file: ${unitFile}\n`, stderr: '' });
    const again = await runCli(['service', 'install'], env);
    expect(again.stdout.split('\n')[0]).toBe(`Replaced the systemd user unit ${unitFile}`);
  });

  it('a rewrite over a unit anyone may write (0666) leaves it 0600', async () => {
    writeFileSync(unitFile, '[Service]\nExecStart=/bin/sh -c "echo owned"\n');
    chmodSync(unitFile, 0o666);
    expect(mode(unitFile)).toBe(0o666);
    expect(await runCli(['service', 'install'], env)).toMatchObject({ code: 0, stderr: '' });
    expect(mode(unitFile)).toBe(0o600);
    expect(readFileSync(unitFile, 'utf8')).not.toContain('owned');
    expect(readdirSync(dirname(unitFile)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('PATH keeps only absolute, existing folders nobody else may write, and says what it left out', async () => {
    const open = join(dir, 'open-bin');
    mkdirSync(open, { recursive: true });
    chmodSync(open, 0o777);
    const hostile = ['.', '', 'node_modules/.bin', '/tmp', join(dir, 'missing'), open, '/usr/bin', '/usr/bin', join(dir, 'calls.log')].join(':');
    const r = await runCli(['service', 'install'], { ...env, PATH: hostile });
    expect(r.code).toBe(0);
    const dropped = ['.', '', 'node_modules/.bin', '/tmp', join(dir, 'missing'), open, join(dir, 'calls.log')];
    expect(r.stdout.split('\n')[4]).toBe(`  PATH: left out ${dropped.map((d) => JSON.stringify(d)).join(', ')} (not absolute, missing, or writable by anyone)`);
    const unit = readFileSync(unitFile, 'utf8');
    expect(unit).toContain(`Environment=${q('PATH=/usr/bin')}\n`);
    expect(unit.match(/PATH=/g)).toHaveLength(1);
    const json = JSON.parse((await runCli(['--json', 'service', 'install'], { ...env, PATH: hostile })).stdout);
    expect(json.path_dropped).toEqual(dropped);
  });

  it('a credential in an SVC_ value goes to a 0600 environment file beside the unit, never into the unit', async () => {
    const token = `ghp_${'Cr3dent1al'.repeat(4)}`;
    const api = `https://octo:${token}@api.github.test`;
    const envFile = join(dirname(unitFile), 'loom.env');
    writeFileSync(envFile, 'stale');
    chmodSync(envFile, 0o644);
    const r = await runCli(['service', 'install'], { ...env, SVC_GITHUB_API: api, SVC_SIGNING_KEY: 'k"e$y`\\1' });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[4]).toBe(`  credentials: SVC_GITHUB_API, SVC_SIGNING_KEY in ${envFile} (mode 0600), not in the unit`);
    const unit = readFileSync(unitFile, 'utf8');
    expect(unit).not.toContain(token);
    expect(unit).not.toContain('octo');
    expect(unit).not.toContain('SVC_SIGNING_KEY');
    expect(unit).toContain(`\nEnvironmentFile=${envFile}\n`);
    expect(mode(envFile)).toBe(0o600);
    expect(readFileSync(envFile, 'utf8')).toBe(`SVC_GITHUB_API="${api}"\nSVC_SIGNING_KEY="k\\"e\\$y\\\`\\\\1"\n`);
    if (analyze) expect(spawnSync('systemd-analyze', ['verify', unitFile], { encoding: 'utf8' })).toMatchObject({ status: 0, stderr: '' });
    // Without credentials, the next install leaves no environment file behind.
    expect((await runCli(['service', 'install'], env)).code).toBe(0);
    expect(existsSync(envFile)).toBe(false);
    expect(readFileSync(unitFile, 'utf8')).not.toContain('EnvironmentFile=');
    expect((await runCli(['service', 'install'], { ...env, SVC_GITHUB_API: api })).code).toBe(0);
    expect(existsSync(envFile)).toBe(true);
  });

  it('uninstall stops, disables and removes it; a second uninstall says none is installed; status then exits 3', async () => {
    writeFileSync(calls, '');
    expect(await runCli(['service', 'uninstall'], env)).toEqual({ code: 0, stdout: `Removed the loom service ${unitFile} (stopped and disabled)\n`, stderr: '' });
    expect(existsSync(unitFile)).toBe(false);
    expect(existsSync(join(dirname(unitFile), 'loom.env'))).toBe(false);
    expect(logged()).toEqual(['--user disable --now loom.service', '--user daemon-reload']);
    expect(await runCli(['service', 'uninstall'], env)).toEqual({ code: 0, stdout: `No loom service is installed (${unitFile} does not exist)\n`, stderr: '' });
    expect(await runCli(['service', 'status'], env)).toEqual({ code: 3, stdout: `loom service (systemd): not installed (${unitFile}); install it with: loom service install\n`, stderr: '' });
  });

  it('when systemctl fails (no user session), install says what failed and where the unit is, exit 1', async () => {
    const r = await runCli(['service', 'install'], { ...env, FAIL_WITH: 'Failed to connect to bus: No medium found' });
    expect(r).toEqual({ code: 1, stdout: '', stderr: `loom: ${systemctl} --user daemon-reload failed: Failed to connect to bus: No medium found; the unit is written to ${unitFile}; remove it with: loom service uninstall\n` });
    expect(await runCli(['service', 'uninstall'], env)).toMatchObject({ code: 0 });
  });

  describe('with a daemon already on the port', () => {
    let d: RunningDaemon;
    beforeAll(async () => { d = await startDaemon({ dataDir: join(dir, 'busy') }); });
    afterAll(async () => { await d.stop(); });

    it('install enables the unit without starting it, and says how to switch over', async () => {
      writeFileSync(calls, '');
      const r = await runCli(['--json', 'service', 'install'], { ...env, SVC_PORT: String(d.port) });
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ manager: 'systemd', file: unitFile, replaced: false, started: false, data_dir: data, port: d.port, env_file: null, path_dropped: [] });
      expect(logged()).toEqual(['--user daemon-reload', '--user enable loom.service']);
      const text = await runCli(['service', 'install'], { ...env, SVC_PORT: String(d.port) });
      expect(text.stdout.split('\n')[3]).toBe(`  a daemon already answers on port ${d.port}: the service starts at the next login, or now after: loom stop && systemctl --user start loom.service`);
      await runCli(['service', 'uninstall'], env);
    });
  });

  it('without systemctl on PATH (and not macOS): a clear message and exit 1', async () => {
    const empty = join(dir, 'empty-bin');
    mkdirSync(empty, { recursive: true });
    const r = await runCli(['service', 'install'], { ...env, LOOM_SYSTEMCTL: '', PATH: empty });
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'loom: no systemd found (systemctl is not on PATH); loom service manages a systemd user unit (Linux) or a launchd agent (macOS); without either, run the daemon with: loom start\n' });
    expect(existsSync(unitFile)).toBe(false);
  });

  it('a data directory with a line break is refused before anything is written', async () => {
    const r = await runCli(['service', 'install'], { ...env, SVC_DATA_DIR: join(dir, 'a\nExecStartPre=/bin/false') });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`loom: cannot write the service: ${JSON.stringify(join(dir, 'a\nExecStartPre=/bin/false'))} contains a control character\n`);
    expect(existsSync(unitFile)).toBe(false);
  });
});

describe('service definitions (src/domain/serviceUnit.ts)', () => {
  const spec: ServiceSpec = { node: '/opt/node 20/bin/node', cli: '/home/a/loom/dist/cli/main.js', env: { SVC_DATA_DIR: '/home/a/50% "x" $y', SVC_PORT: '3923' }, logFile: '/home/a/.loom/loom.log' };

  it('systemd: every word quoted, % doubled everywhere, $ doubled in ExecStart only', () => {
    const unit = systemdUnit({ ...spec, cli: '/home/$USER/main.js' });
    expect(unit).toContain('ExecStart="/opt/node 20/bin/node" "/home/$$USER/main.js" "daemon" "--quiet"\n');
    expect(unit).toContain('Environment="SVC_DATA_DIR=/home/a/50%% \\"x\\" $y"\n');
  });

  it('launchd: the plist runs the same command, keeps it alive only after a failure, and escapes XML', () => {
    const plist = launchdPlist({ ...spec, env: { SVC_DATA_DIR: '/a<b>&c', SVC_PORT: '3923' } });
    expect(plist).toContain('  <key>Label</key>\n  <string>dev.loom.daemon</string>\n');
    expect(plist).toContain('  <array>\n    <string>/opt/node 20/bin/node</string>\n    <string>/home/a/loom/dist/cli/main.js</string>\n    <string>daemon</string>\n    <string>--quiet</string>\n  </array>\n');
    expect(plist).toContain('    <key>SVC_DATA_DIR</key>\n    <string>/a&lt;b&gt;&amp;c</string>\n');
    expect(plist).toContain('  <key>KeepAlive</key>\n  <dict>\n    <key>SuccessfulExit</key>\n    <false/>\n  </dict>\n');
    expect(plist).toContain('  <key>StandardErrorPath</key>\n  <string>/home/a/.loom/loom.log</string>\n');
  });

  it('unsafeValue names a value with a control character, and passes ordinary ones', () => {
    expect(unsafeValue(spec)).toBeNull();
    expect(unsafeValue({ ...spec, env: { SVC_PORT: '1\r2' } })).toBe('"1\\r2" contains a control character');
  });
});
