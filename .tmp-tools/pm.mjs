import { Worker } from 'node:worker_threads';
const w = new Worker(`const { parentPort } = require('node:worker_threads'); parentPort.on('message', (m) => { if (m.done) parentPort.postMessage('ok'); });`, { eval: true });
const { DEFAULT_LIMITS } = await import('../dist/runtime/limits.js');
const job = { type: 'call', seq: 1, moduleKey: 'x'.repeat(64), drop: [], req: { method: 'get', input: new Uint8Array(40), contextId: new Uint8Array(32), executorId: new Uint8Array(32), deviceId: new Uint8Array(32), readOnly: false }, stateVersion: 3, limits: DEFAULT_LIMITS, hasIndexMeta: false, hasBlobs: true, hasSealing: true };
const N = 20000;
for (const [name, msg] of [['job', job], ['small', { a: 1 }], ['limits', DEFAULT_LIMITS]]) {
  const t = performance.now();
  for (let i = 0; i < N; i++) w.postMessage(msg);
  console.log(name, ((performance.now() - t) / N * 1000).toFixed(2), 'us');
}
w.postMessage({ done: true });
await new Promise((r) => w.once('message', r));
await w.terminate();
