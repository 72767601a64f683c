import { TRACE_FORMAT } from '../domain/trace.js';
import { TraceService } from '../services/traces.js';
import { mountTraces } from '../http/routes/traces.js';
import { mountTraceSteps } from '../http/routes/traceSteps.js';
import type { Feature } from './types.js';

/**
 * Traces (behaviour.md §14.1): the recorder behind POST/GET/DELETE /traces and
 * `loom daemon --record <file>`, which records every agent from start-up into that file; and a
 * trace's steps for the inspector page (§13.8, GET /inspect/trace/{id}).
 */
export const tracesFeature: Feature = ({ directory, inspection, env, info, clock, recordTo }) => {
  const traces = new TraceService({ directory, inspection, env }, { dataDir: info.dataDir, clock, port: info.port, version: info.version });
  if (recordTo) traces.start({ agentId: null, topic: null, note: `loom daemon --record ${recordTo}` }, recordTo);
  return {
    describe: { traces: { routes: '/traces', format: TRACE_FORMAT } },
    onShutdown: () => traces.shutdown(),
    routes: [mountTraces(traces), mountTraceSteps(traces)],
  };
};
