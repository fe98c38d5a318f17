/** Baseline: a bare node:http hello-world, run as its own process like the node under test. */
import http from 'node:http';

const body = JSON.stringify({ data: { status: 'alive' } });
const server = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`${JSON.stringify({ event: 'listening', url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
