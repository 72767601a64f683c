import { EventStreams } from '../services/eventStreams.js';
import { Installs } from '../services/installs.js';
import { installCommands } from '../commands/install.js';
import { INSTALL_FILE_BYTES, INSTALL_MAX_FILES, INSTALL_TOTAL_BYTES } from '../domain/limits.js';
import { installsRoute } from '../http/routes/installs.js';
import { installMachine } from '../machines/install.js';
import { FilePackageStore } from '../stores/packages.js';
import { WIRES } from '../domain/wire.js';
import type { Feature } from './types.js';

/** Files an install fetches at the same time (a few: enough to hide latency, kind to the server). */
const PARALLEL_FETCHES = 4;

/**
 * Installs and packages (spec §2 Install manifest, §3 Package install, §4.13;
 * behaviour.md §7): `/install`, `/uninstall`, `/packages`, the per-agent package registry, one
 * `install:<install_id>` actor per running install, `GET /installs` and `GET /installs/stream` for progress, and start-up
 * recovery of interrupted commits. Registries are read at start-up so an unreadable one stops the
 * daemon (behaviour.md §1.1).
 */
export const installFeature: Feature = ({ directory, inspection, agents, env, clock, info, githubApi, stateFolders }) => {
  const store = new FilePackageStore(info.dataDir, WIRES[info.wire].stateRoot);
  const streams = new EventStreams(clock);
  const installs = new Installs(directory, {
    store, env, clock, githubApi, userAgent: `loom/${info.version}`, parallel: PARALLEL_FETCHES, dataDir: info.dataDir,
  }, (agentId, p, requestId) => streams.publishTo(agentId, 'install', p, requestId), inspection.topicMasks);
  for (const a of agents.list()) {
    // No state folder, no registry to read (it is made on first use).
    if (stateFolders.has(a.id)) store.check(a.id);
    for (const line of installs.sweep(a.id, a.home)) process.emitWarning(`agent ${a.id}: ${line}`);
  }
  return {
    commands: installCommands,
    services: { packages: store, installs },
    actors: { installStage: installs.stage },
    describe: {
      'install-manifest': { version: 1 },
      'github-install': {},
      install: {
        github_api: githubApi,
        sources: ['file', 'folder', 'github', 'url', 'manifest'],
        delivery: ['local', 'link', 'any'],
        limits: { files: INSTALL_MAX_FILES, file_bytes: INSTALL_FILE_BYTES, total_bytes: INSTALL_TOTAL_BYTES },
        progress: '/installs',
        progress_stream: '/installs/stream',
      },
    },
    onDelete: (agentId) => { store.forget(agentId); streams.closeAgent(agentId); },
    onShutdown: () => streams.closeAll(),
    routes: [installsRoute(streams, installs)],
    // GET /inspect/machines draws the install machine from its definition (behaviour.md §13.1).
    machines: [installMachine],
  };
};
