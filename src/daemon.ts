import { mkdirSync } from 'node:fs';
import { nativeReport } from './effects/nativeReport.js';
import { sandboxSupport, scrubDaemonEnvironment } from './effects/sandbox.js';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LoomSystem } from './actors/system.js';
import { buildRegistry } from './commands/index.js';
import type { DaemonInfo } from './commands/types.js';
import type { DaemonConfig } from './config.js';
import { systemClock, type Clock } from './domain/ports.js';
import { createApp } from './http/app.js';
import { execRoute } from './http/routes/exec.js';
import { fastPath } from './http/fastPath.js';
import { upgradeListener } from './http/upgrade.js';
import { corsHeaders } from './http/guard.js';
import type { AppContext } from './http/context.js';
import { LowAgentStore } from './stores/agentStore.js';
import { removeLeftoverTemps } from './stores/leftovers.js';
import { FileEnvStore } from './stores/envStore.js';
import { EmptyPackageRegistry } from './stores/packages.js';
import { VERSION } from './version.js';
import { installFeatures } from './features.js';
import { WIRES } from './domain/wire.js';
import type { RequestLogEntry, RequestLogSink } from './domain/requestLog.js';
import { RequestLogFile } from './effects/requestLogFile.js';
import { requestLogger } from './http/requestLog.js';
import { markSandboxed } from './http/sandboxed.js';
import { createDenialBoard, type DenialBoard } from './domain/denials.js';
import { effectiveNetwork } from './domain/sandbox.js';
import { startEgressProxy, type EgressProxy } from './effects/egressProxy.js';

/** What a crashed daemon left is ended at start-up, and this daemon's children are marked (behaviour.md §1.1). */
export { adoptDataDir, type ProcessWatch } from './effects/leftoverProcesses.js';

/** A composed daemon: system and app, not yet listening. */
export interface Composition {
  system: LoomSystem;
  ctx: AppContext;
  /** The Express app, made at its first request or by `warm` (whichever comes first). */
  app: (req: IncomingMessage, res: ServerResponse) => void;
  /** Make what `app` makes at its first request now: after the ready line, while nothing asks. */
  warm(): void;
  /** The Express app itself, made now if it is not yet (what reads its routes: the audit of readers). */
  express(): ReturnType<typeof createApp>;
  /** Set the bound port once listening (URLs printed by commands use it). */
  setPort(port: number): void;
  /** The request log (behaviour.md §2.13), or null when turned off. */
  requestLog: RequestLogSink | null;
  /** What the sandbox refused, per agent (behaviour.md §15.5). */
  denials: DenialBoard;
  /** Set the egress proxy once it listens (behaviour.md §15.2). */
  setEgress(proxy: EgressProxy | null): void;
}

/** Request log settings: off, or on with an optional echo of each entry (a foreground daemon on a TTY). */
export type RequestLogOption = false | { echo?: (entry: RequestLogEntry) => void };

/**
 * Compose the daemon from its configuration (architecture.md: main.ts is the composition root).
 * `memory` uses an in-memory agent registry (contract tests); the env store still needs a folder.
 * The configured wire (behaviour.md §11) picks the registry file and state folder, the queue limits,
 * the command words and features that exist, and the edges of the app; the runtime is the same.
 */
export async function compose(config: DaemonConfig, opts: { clock?: Clock; memory?: boolean; onShutdown?: () => void; queue?: { max: number; waitMs: number }; requestLog?: RequestLogOption } = {}): Promise<Composition> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  scrubDaemonEnvironment();
  const wire = WIRES[config.wire];
  // Temp files of writes a crash interrupted, removed before anything is written; the
  // same scan says which agents have a state folder, so start-up probes skip the rest.
  const { stateFolders } = removeLeftoverTemps(config.dataDir, wire.stateRoot);
  let port = config.port;
  const clock = opts.clock ?? systemClock;
  const denials = createDenialBoard();
  let egress: EgressProxy | null = null;
  const info: DaemonInfo = {
    version: VERSION, role: config.role, label: config.label, wire: config.wire, startedAt: clock.now(), port: () => port, dataDir: config.dataDir, sandbox: config.sandbox, sandboxSupport,
    nativeParts: nativeReport, denials, egress: () => (egress ? { port: egress.port, url: (id: string) => (egress as EgressProxy).proxyUrl(id) } : null),
  };
  const agents = opts.memory ? LowAgentStore.memory() : await LowAgentStore.open(config.dataDir, wire.registryFile, wire.listField, stateFolders);
  const registry = buildRegistry(wire);
  const env = new FileEnvStore(config.dataDir, wire.stateRoot);
  const system = new LoomSystem({ info, clock, agents, env, packages: new EmptyPackageRegistry(), registry, queue: opts.queue });
  const host = { directory: system.directory, inspection: system.inspection, info, clock, agents, env, stateFolders, allowedOrigins: config.allowedOrigins, githubApi: config.githubApi, recordTo: config.record };
  const { routes, fastRoutes, upgrades } = await installFeatures(system, host, wire);
  await system.start();
  // POST /exec, the hot path, is answered before Express like the /fs plane, behind the app's one entry check.
  const edge = { cors: corsHeaders(wire.header), allowedOrigins: config.allowedOrigins, identity: wire };
  const ctx: AppContext = { system, wire, allowedOrigins: config.allowedOrigins, onShutdown: opts.onShutdown ?? (() => undefined), fastPaths: [execRoute(system, wire), ...fastRoutes].map((r) => fastPath(edge, r)), upgrades };
  // The Express app (every route but the fast paths) is not needed to reach the ready line: made at
  // its first request, or by warm() once the daemon listens. Express itself loads with it (the bundle
  // loads the package on first use, scripts/bundle.mjs).
  let app: ReturnType<typeof createApp> | undefined;
  const made = () => (app ??= createApp(ctx, routes));
  const log = opts.requestLog ?? {};
  const requestLog = log === false ? null : new RequestLogFile(join(config.dataDir, wire.files.requestLogs), { echo: log.echo });
  return { system, ctx, app: (req, res) => { made()(req, res); }, warm: () => { made(); }, express: made, setPort: (p) => { port = p; }, requestLog, denials, setEgress: (p) => { egress = p; } };
}

/**
 * The egress proxy of confined agents (behaviour.md §15.2, §15.3): a request it hands to the daemon
 * is marked with the agent it authenticated and answered by the same handler as every other, so
 * the one entry check applies its identity rules; every refusal is reported to the denial board.
 */
function startEgress(c: Composition, handler: (req: IncomingMessage, res: ServerResponse) => void, daemonPort: number): Promise<EgressProxy> {
  return startEgressProxy({
    policyOf: (agentId) => {
      const profile = c.system.agentProfile(agentId);
      return profile ? effectiveNetwork(profile.network) : undefined;
    },
    protectedPorts: () => ({ daemon: daemonPort }),
    onDaemonRequest: (agentId, req, res) => {
      markSandboxed(req, agentId);
      handler(req, res);
    },
    onDenied: (d) => c.denials.record(d.agentId, { kind: 'network', target: `${d.host}:${d.port}`, reason: d.reason }, d.at),
  });
}

/** Listen on 127.0.0.1 only (spec §1). Rejects with the listen error (EADDRINUSE …). */
export function listen(c: Composition, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    // What app.listen does, with the fast paths (AppContext.fastPaths) tried before the app.
    // The log masks the values of registered agents only: a name a client made up keeps no list.
    const masks = (agent: string, topic: string | null) => (c.system.hasAgent(agent) ? c.system.inspection.topicMasks(agent, topic) : null);
    const log = c.requestLog ? requestLogger(c.requestLog, Date.now, c.ctx.wire, masks) : null;
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      log?.(req, res);
      for (const fast of c.ctx.fastPaths) if (fast(req, res)) return;
      c.app(req, res);
    };
    // Node's own missing-Host refusal is off: the one guard answers it, with the wire's body and CORS.
    const server = createServer({ requireHostHeader: false }, handler);
    // WebSocket and other upgrades: the same Host/Origin guard, refused before any frame (behaviour.md §9.2).
    server.on('upgrade', upgradeListener(c.ctx.allowedOrigins, c.ctx.upgrades, corsHeaders(c.ctx.wire.header)));
    server.listen(port, '127.0.0.1');
    server.once('error', reject);
    // The log is flushed and closed with the server (shutdown, tests).
    server.once('close', () => void c.requestLog?.close());
    server.once('listening', () => {
      const bound = (server.address() as AddressInfo).port;
      c.setPort(bound);
      startEgress(c, handler, bound).then((proxy) => {
        c.setEgress(proxy);
        server.once('close', () => {
          c.setEgress(null);
          void proxy.close();
        });
        resolve(server);
      }, (err: unknown) => {
        server.close();
        reject(err as Error);
      });
    });
  });
}

/** Close a server and every open connection (SSE and keep-alive sockets would hold it open). */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
