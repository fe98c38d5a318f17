// Second baseline of the HTTP bench: plain fastify (no logger, no hooks) with the one route the
// bench calls, answering the same small JSON document as bench/bare-server.mjs, in its own process.
// It shows what the framework itself costs against bare node:http, so the rest is hearth's own.
// Plain JavaScript (no loader).
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/admin-api/peers', async () => ({ count: 0 }));
await app.listen({ port: 0, host: '127.0.0.1' });
const addr = app.server.address();
process.stdout.write(`${JSON.stringify({ event: 'listening', url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` })}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
