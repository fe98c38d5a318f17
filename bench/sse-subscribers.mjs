// SSE subscribers for bench/sse.ts, in a worker thread so that their parsing does not share the
// node's event loop. Plain JavaScript (no loader needed in a worker). Times are absolute
// (timeOrigin + now) so the main thread can compare them with its own clock.
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { url, token, contextId, n } = workerData;
const abs = () => performance.timeOrigin + performance.now();
const subs = [];
let reported = 0;
/** how many subscribers have their frame of round r (so a round completes in O(1), not a scan) */
const got = [];

function open() {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/sse`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET /sse answered ${res.statusCode}`));
      const sub = { sessionId: '', arrivals: [], req };
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        const now = abs();
        buf += chunk;
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          // Light on purpose: this thread reads a thousand sockets, and the time it spends per frame
          // delays the next socket's timestamp (the connect frame is parsed, result frames matched).
          const at = block.indexOf('\ndata:');
          if (at < 0) continue;
          const data = block.slice(at + 6);
          if (!sub.sessionId) {
            const body = JSON.parse(data);
            if (body.type === 'connect') {
              sub.sessionId = body.session_id;
              resolve(sub);
            }
          } else if (data.startsWith('{"result":') && data.includes(`"contextId":"${contextId}"`)) {
            got[sub.arrivals.length] = (got[sub.arrivals.length] ?? 0) + 1;
            sub.arrivals.push(now);
            report();
          }
        }
      });
    });
    req.on('error', reject);
  });
}

/** Posts each round once every subscriber has its frame. */
function report() {
  while (subs.length === n && got[reported] === n) {
    parentPort.postMessage({ type: 'round', round: reported, arrivals: subs.map((s) => s.arrivals[reported]) });
    reported++;
  }
}

for (let i = 0; i < n; i += 50) {
  subs.push(...(await Promise.all(Array.from({ length: Math.min(50, n - i) }, open))));
}
parentPort.postMessage({ type: 'ready', sessionIds: subs.map((s) => s.sessionId) });
parentPort.on('message', (m) => {
  if (m === 'close') {
    for (const s of subs) s.req.destroy();
    parentPort.close();
  }
});
