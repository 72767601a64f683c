import { parentPort } from 'node:worker_threads';
import { parseDocument } from '../sfmd/parse.js';

/**
 * A parse worker of the pool (effects/parsePool.ts): parses action documents off the daemon's event
 * loop. The document's `source` is not sent back (the caller has it), which saves a copy of the
 * largest string through structured clone.
 */
parentPort?.on('message', (job: { id: number; text: string }) => {
  try {
    const { source: _source, ...doc } = parseDocument(job.text);
    parentPort?.postMessage({ id: job.id, doc });
  } catch (err) {
    parentPort?.postMessage({ id: job.id, error: err instanceof Error ? err.message : String(err) });
  }
});
