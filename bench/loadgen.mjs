// The benchmarks' load generator: autocannon in a process of its own, so the load it makes never
// shares an event loop with the server it measures or with the bench that drives both. Plain
// JavaScript (no loader). Usage: node bench/loadgen.mjs '<spec JSON>'; prints one JSON result line.
//
// spec: { url, method?, headers?, body?, rpc?: { contextId, method, keyPrefix, keys, value? },
//         connections, durationSecs, check?: 'status' | 'jsonrpc' }
// `rpc` makes each request a JSON-RPC `execute` of `method` on a random one of `keys` existing keys
// (`<keyPrefix><i>`), so reads and updates spread over the store instead of hitting one key.
// `check: 'jsonrpc'` counts a 200 whose body carries a JSON-RPC `error` as an error too.
import autocannon from 'autocannon';

const spec = JSON.parse(process.argv[2]);
let bad = 0;
let id = 0;

const rpcBody = (rpc) => {
  const key = `${rpc.keyPrefix}${Math.floor(Math.random() * rpc.keys)}`;
  const argsJson = rpc.method === 'set' ? { key, value: `${rpc.value ?? 'w'}${id}` } : { key };
  return JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'execute', params: { contextId: rpc.contextId, method: rpc.method, argsJson } });
};

const request = {
  method: spec.method ?? (spec.rpc ? 'POST' : 'GET'),
  headers: { ...(spec.rpc ? { 'content-type': 'application/json' } : {}), ...spec.headers },
  ...(spec.body !== undefined ? { body: spec.body } : {}),
  ...(spec.rpc ? { setupRequest: (req) => ({ ...req, body: rpcBody(spec.rpc) }) } : {}),
  onResponse: (status, body) => {
    if (status !== 200) return void bad++;
    if (spec.check === 'jsonrpc' && (body.includes('"error"') || !body.includes('"result"'))) bad++;
  },
};

const instance = autocannon({
  url: spec.url,
  connections: spec.connections ?? 16,
  duration: spec.durationSecs ?? 5,
  requests: [request],
});
// autocannon's percentiles are whole milliseconds; the exact median and 99th percentile of the
// answers' times are kept beside them (a goal of "p50 < 2 ms" needs more than the integer part, and
// a p99/p50 ratio of whole milliseconds at a 4 ms p50 moves by a quarter with one millisecond)
const times = [];
instance.on('response', (_client, status, _bytes, ms) => {
  if (status === 200) times.push(ms);
});
const result = await instance;
times.sort((a, b) => a - b);

process.stdout.write(
  `${JSON.stringify({
    requests: result.requests.total,
    rps: result.requests.total / (spec.durationSecs ?? 5),
    meanMs: result.latency.average,
    p50ms: result.latency.p50,
    p50exactMs: times.length > 0 ? times[times.length >> 1] : 0,
    p99ms: result.latency.p99,
    p99exactMs: times.length > 0 ? times[Math.min(times.length - 1, Math.floor(times.length * 0.99))] : 0,
    errors: result.errors + result.timeouts + bad,
  })}\n`,
);
