// A bare inspector client for bench/inspector: connects to <base>/inspect/ws, parses every frame as the
// page does (JSON.parse) and counts the messages, without drawing anything. It separates what feeding
// a watcher costs the daemon from what a browser rendering the page takes from the same cores.
// Prints `ready` once the snapshot arrived, and `messages <n>` when stdin closes.
import WebSocket from 'ws';

const ws = new WebSocket(`${process.argv[2].replace(/^http/, 'ws')}/inspect/ws`);
let messages = 0;
let ready = false;
ws.on('message', (data) => {
  const parsed = JSON.parse(String(data));
  if (Array.isArray(parsed)) messages += parsed.length;
  else if (!ready) {
    ready = true;
    console.log('ready');
  }
});
ws.on('error', (err) => { console.error(err.message); process.exit(1); });
process.stdin.resume();
process.stdin.on('end', () => { console.log(`messages ${messages}`); ws.close(); process.exit(0); });
