import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, closeSync, constants, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LAUNCHD_LABEL, SYSTEMD_ENV_FILE, SYSTEMD_UNIT, holdsCredential, launchdPlist, servicePath, systemdEnvFile, systemdUnit, unsafeValue, type PathFacts, type ServiceSpec } from '../domain/serviceUnit.js';
import { WIRES } from '../domain/wire.js';
import { CliFailure, client, cliPort, dataDir, examples, globals, guard, print, type CliParts, type GlobalOpts } from './common.js';

/** The service manager of this machine, with the program that drives it. */
type Manager = { kind: 'systemd'; tool: string; file: string } | { kind: 'launchd'; tool: string; file: string };

/** A program by name on PATH, or null. */
function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // Not in this folder: try the next.
    }
  }
  return null;
}

/**
 * systemd on Linux (when systemctl exists), launchd on macOS, else a failure that says what to do
 * instead. LOOM_SYSTEMCTL / LOOM_LAUNCHCTL name the program to run (tests point them at a stand-in);
 * XDG_CONFIG_HOME moves the unit folder as systemd itself does.
 */
function manager(): Manager {
  if (process.platform === 'linux') {
    const tool = process.env.LOOM_SYSTEMCTL || onPath('systemctl');
    if (!tool) {
      throw new CliFailure({ error: 'no systemd found (systemctl is not on PATH)', code: 'SERVICE_UNSUPPORTED', message: 'loom service manages a systemd user unit (Linux) or a launchd agent (macOS); without either, run the daemon with: loom start' });
    }
    const config = process.env.XDG_CONFIG_HOME ? resolve(process.env.XDG_CONFIG_HOME) : join(homedir(), '.config');
    return { kind: 'systemd', tool, file: join(config, 'systemd', 'user', SYSTEMD_UNIT) };
  }
  if (process.platform === 'darwin') {
    return { kind: 'launchd', tool: process.env.LOOM_LAUNCHCTL || 'launchctl', file: join(homedir(), 'Library', 'LaunchAgents', `${LAUNCHD_LABEL}.plist`) };
  }
  throw new CliFailure({ error: `loom service is not supported on ${process.platform}`, code: 'SERVICE_UNSUPPORTED', message: 'loom service manages a systemd user unit (Linux) or a launchd agent (macOS); run the daemon with: loom start' });
}

/** Run the manager's program; never throws (a missing program is exit code null with the reason in stderr). */
function call(tool: string, args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(tool, args, { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.error ? r.error.message : (r.stderr ?? '') };
}

/** The first line of a program's complaint, for a one-line error. */
const firstLine = (r: { stdout: string; stderr: string; code: number | null }) => (r.stderr.trim() || r.stdout.trim() || `exit ${r.code}`).split('\n')[0];

/** What the service's PATH needs to know of a folder (it follows symlinks, as a lookup would). */
const pathFacts: PathFacts = (dir) => {
  try {
    const st = statSync(dir);
    return { isDir: st.isDirectory(), worldWritable: (st.mode & 0o002) !== 0 };
  } catch {
    // Missing or unreadable: not a folder the service can run tools from.
    return null;
  }
};

/** A service definition, and the PATH entries it left out. */
interface Planned {
  spec: ServiceSpec;
  pathDropped: string[];
}

/**
 * What the service runs: this Node and this CLI, with the data directory and port as this
 * command sees them (absolute), every other SVC_* setting, and PATH (CLI actions run tools by name)
 * without its unsafe entries (behaviour.md §17). Credentials go to the environment file (systemd).
 */
function plan(opts: GlobalOpts, m: Manager): Planned {
  const captured: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (k.startsWith('SVC_') && v !== undefined && v !== '') captured[k] = v;
  captured.SVC_DATA_DIR = resolve(dataDir());
  captured.SVC_PORT = String(cliPort(opts));
  const env: Record<string, string> = {};
  const secretEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(captured)) (holdsCredential(k, v) ? secretEnv : env)[k] = v;
  const path = servicePath(process.env.PATH ?? '', pathFacts);
  if (path.kept.length > 0) env.PATH = path.kept.join(delimiter);
  const hasSecrets = Object.keys(secretEnv).length > 0;
  const s: ServiceSpec = {
    node: process.execPath,
    cli: fileURLToPath(new URL('./main.js', import.meta.url)),
    env, secretEnv,
    envFile: m.kind === 'systemd' && hasSecrets ? join(dirname(m.file), SYSTEMD_ENV_FILE) : null,
    logFile: join(captured.SVC_DATA_DIR, WIRES.agent.files.daemonLog),
  };
  const bad = unsafeValue(s);
  if (bad) throw new CliFailure({ error: `cannot write the service: ${bad}`, code: 'SERVICE_FAILED' });
  return { spec: s, pathDropped: process.env.PATH ? path.dropped : [] };
}

/**
 * Write `text` to `file` readable by its owner only: a 0600 temp file beside it, synced, renamed
 * over it. A unit that existed with another mode (0666) is replaced, not rewritten in place, so
 * nobody else can change it meanwhile and it ends 0600.
 */
function writePrivate(file: string, text: string): void {
  const tmp = join(dirname(file), `.${basename(file)}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, file);
  } catch (err) {
    unlinkSync(tmp);
    throw err;
  }
}

/** True when a daemon already answers on the port (the service would then fail to bind it). */
async function daemonAnswers(opts: GlobalOpts): Promise<boolean> {
  try {
    return (await client(opts, false).describe()).status === 200;
  } catch {
    // Nothing listening: the service can start now.
    return false;
  }
}

const guiDomain = () => `gui/${userInfo().uid}`;

async function install(opts: GlobalOpts): Promise<number> {
  const m = manager();
  const { spec: s, pathDropped } = plan(opts, m);
  const replaced = existsSync(m.file);
  mkdirSync(dirname(m.file), { recursive: true });
  // The credentials first: the unit that names them never exists without them.
  if (s.envFile) writePrivate(s.envFile, systemdEnvFile(s.secretEnv ?? {}));
  else if (m.kind === 'systemd') rmSync(join(dirname(m.file), SYSTEMD_ENV_FILE), { force: true });
  writePrivate(m.file, m.kind === 'systemd' ? systemdUnit(s) : launchdPlist(s));
  const busy = await daemonAnswers(opts);
  const steps: string[][] = m.kind === 'systemd'
    ? [['--user', 'daemon-reload'], ['--user', 'enable', ...(busy ? [] : ['--now']), SYSTEMD_UNIT]]
    : busy ? [] : [['bootstrap', guiDomain(), m.file]];
  if (m.kind === 'launchd' && !busy) call(m.tool, ['bootout', `${guiDomain()}/${LAUNCHD_LABEL}`]);
  for (const args of steps) {
    const r = call(m.tool, args);
    if (r.code !== 0) {
      throw new CliFailure({ error: `${m.tool} ${args.join(' ')} failed: ${firstLine(r)}`, code: 'SERVICE_FAILED', message: `the ${m.kind === 'systemd' ? 'unit' : 'agent'} is written to ${m.file}; remove it with: loom service uninstall` });
    }
  }
  const port = s.env.SVC_PORT ?? s.secretEnv?.SVC_PORT;
  const dataDirShown = s.env.SVC_DATA_DIR ?? s.secretEnv?.SVC_DATA_DIR;
  const started = busy
    ? `a daemon already answers on port ${port}: the service starts at the next login, or now after: loom stop && ${m.kind === 'systemd' ? `systemctl --user start ${SYSTEMD_UNIT}` : `launchctl bootstrap ${guiDomain()} ${m.file}`}`
    : `started; it restarts when it fails and starts at login (${m.kind === 'systemd' ? `systemctl --user status ${SYSTEMD_UNIT}` : `launchctl print ${guiDomain()}/${LAUNCHD_LABEL}`})`;
  const secrets = Object.keys(s.secretEnv ?? {});
  const notes = [
    ...(pathDropped.length > 0 ? [`  PATH: left out ${pathDropped.map((d) => JSON.stringify(d)).join(', ')} (not absolute, missing, or writable by anyone)`] : []),
    ...(s.envFile ? [`  credentials: ${secrets.join(', ')} in ${s.envFile} (mode 0600), not in the unit`] : []),
  ];
  print(opts, { manager: m.kind, file: m.file, replaced, started: !busy, data_dir: dataDirShown, port: Number(port), env_file: s.envFile ?? null, path_dropped: pathDropped },
    `${replaced ? 'Replaced' : 'Installed'} the ${m.kind === 'systemd' ? 'systemd user unit' : 'launchd agent'} ${m.file}\n` +
    `  runs: ${[s.node, s.cli, 'daemon', '--quiet'].join(' ')}\n  data: ${dataDirShown} · port ${port}\n  ${started}${notes.map((n) => `\n${n}`).join('')}`);
  return 0;
}

async function uninstall(opts: GlobalOpts): Promise<number> {
  const m = manager();
  if (!existsSync(m.file)) {
    print(opts, { manager: m.kind, file: m.file, removed: false }, `No loom service is installed (${m.file} does not exist)`);
    return 0;
  }
  // Stopping may fail (not loaded, no user session): the file goes either way, and the answer says so.
  const stop = m.kind === 'systemd' ? call(m.tool, ['--user', 'disable', '--now', SYSTEMD_UNIT]) : call(m.tool, ['bootout', `${guiDomain()}/${LAUNCHD_LABEL}`]);
  rmSync(m.file, { force: true });
  if (m.kind === 'systemd') rmSync(join(dirname(m.file), SYSTEMD_ENV_FILE), { force: true });
  if (m.kind === 'systemd') call(m.tool, ['--user', 'daemon-reload']);
  const note = stop.code === 0 ? 'stopped and disabled' : `could not stop it: ${firstLine(stop)}`;
  print(opts, { manager: m.kind, file: m.file, removed: true, stopped: stop.code === 0 }, `Removed the loom service ${m.file} (${note})`);
  return 0;
}

async function status(opts: GlobalOpts): Promise<number> {
  const m = manager();
  const installed = existsSync(m.file);
  let state = 'not installed';
  if (installed && m.kind === 'systemd') {
    state = call(m.tool, ['--user', 'is-active', SYSTEMD_UNIT]).stdout.trim() || 'unknown';
  } else if (installed) {
    const r = call(m.tool, ['print', `${guiDomain()}/${LAUNCHD_LABEL}`]);
    state = r.code !== 0 ? 'not loaded' : (/^\s*state = (\S+)/m.exec(r.stdout)?.[1] ?? 'loaded');
  }
  const running = state === 'active' || state === 'running';
  print(opts, { manager: m.kind, file: m.file, installed, state, running },
    installed ? `loom service (${m.kind}): ${state}\n  file: ${m.file}` : `loom service (${m.kind}): not installed (${m.file}); install it with: loom service install`);
  return running ? 0 : 3;
}

/** `loom service install|uninstall|status` (behaviour.md §17): keep the daemon up with the OS's user service manager. */
export function serviceCli({ program }: CliParts): void {
  const service = examples(program.command('service').description('Run the daemon as a user service: a systemd user unit (Linux) or a launchd agent (macOS)'), [
    'loom service install                 # write the unit with the current SVC_DATA_DIR and port, enable and start it',
    'SVC_PORT=4000 loom service install   # the port (and data directory) are fixed at install time',
    'loom service status                  # exit 0 when it runs, 3 when not',
    'loom service uninstall               # stop, disable and remove it',
  ]);
  examples(service.command('install').description('Write the service definition, enable it at login and start it (restarted when it fails)'), [
    'loom service install', 'loom --port 4000 service install', 'loom --json service install',
  ]).action(() => guard(globals(program), () => install(globals(program))));
  examples(service.command('uninstall').description('Stop and disable the service and remove its definition'), ['loom service uninstall'])
    .action(() => guard(globals(program), () => uninstall(globals(program))));
  examples(service.command('status').description('Say whether the service is installed and running (exit 0 running, 3 not)'), ['loom service status', 'loom --json service status'])
    .action(() => guard(globals(program), () => status(globals(program))));
}
