import { INSPECTOR_WS_BUFFER_BYTES } from '../domain/limits.js';
import { checkAssets, loadAssets } from '../inspector/assets.js';
import { InspectorFeed } from '../inspector/feed.js';
import { inspectorRoutes } from '../inspector/routes.js';
import { inspectorSocket } from '../inspector/socket.js';
import type { Feature } from './types.js';

/** The paths /describe advertises (behaviour.md §13.1). */
export const INSPECTOR_PATHS = { ws: '/inspect/ws', state: '/inspect/state' } as const;

/**
 * The state inspector (behaviour.md §13): the page and its assets, the snapshot, the
 * machine definitions and the live WebSocket feed, read-only and loopback-only (the app's and the
 * upgrade hook's Host/Origin guard). It observes the actor tree only while a page is attached.
 */
export const inspectorFeature: Feature = ({ inspection, clock }) => {
  // Read on the first page request, not at start-up (no cold start pays for a page nobody opens);
  // a missing file still stops the start.
  checkAssets();
  let files: ReturnType<typeof loadAssets> | undefined;
  const feed = new InspectorFeed({ inspection, inspectState: () => inspection.state() }, clock, INSPECTOR_WS_BUFFER_BYTES);
  const socket = inspectorSocket(feed);
  return {
    describe: { inspector: { ...INSPECTOR_PATHS } },
    routes: [inspectorRoutes(inspection, () => (files ??= loadAssets()))],
    upgrades: { [INSPECTOR_PATHS.ws]: (req, s, head) => socket.handle(req, s, head) },
    onShutdown: () => socket.close(),
  };
};
