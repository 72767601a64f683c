// A daemon composed in a process of its own with the request log on or off (bench/requestlog):
// `node bench/requestlog-server.mjs on|off <port> <dataDir>`; prints `listening` when ready.
import { loadConfig } from '../dist/config.js';
import { compose, listen } from '../dist/daemon.js';

const [mode, port, dataDir] = process.argv.slice(2);
const c = await compose(loadConfig({ SVC_PORT: port, SVC_DATA_DIR: dataDir }), { requestLog: mode === 'on' ? {} : false });
await listen(c, Number(port));
console.log(`listening ${mode}`);
process.on('SIGTERM', () => process.exit(0));
