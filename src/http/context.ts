import type { LoomSystem } from '../actors/system.js';

/** What routes get: the system facade and the daemon's settings. */
export interface AppContext {
  system: LoomSystem;
  /** Origins accepted besides loopback (SVC_ALLOWED_ORIGINS, behaviour.md §9.2). */
  allowedOrigins: string[];
  /** Capabilities advertised by /describe; features add their entries (behaviour.md §9.3). */
  describeCapabilities: Record<string, unknown>;
  /** Called after POST /shutdown has answered (the daemon exits after the 50 ms grace). */
  onShutdown: () => void;
}
