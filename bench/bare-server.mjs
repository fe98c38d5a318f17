// Baseline of the HTTP benchmarks: a bare node:http server, run as its own process like the node
// under test. GET answers a small JSON document; POST reads the body first, then answers a JSON-RPC
// shaped result, so a JSON-RPC call is compared with the same exchange minus everything hearth does.
// Plain JavaScript (no loader).
import http from 'node:http';

const get = JSON.stringify({ count: 0 });
const server = http.createServer((req, res) => {
  const answer = (body) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  if (req.method !== 'POST') return answer(get);
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const call = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    answer(JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, result: { output: null } }));
  });
});
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`${JSON.stringify({ event: 'listening', url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
