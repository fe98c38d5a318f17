/** The quiet moment the node waits for before it loads its network (http-quiet.ts). */
import { createServer, request, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { whenQuiet } from './http-quiet.ts';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

/** A server answering `/slow` after `ms`, anything else at once; its port. */
async function serve(ms: number): Promise<number> {
  server = createServer((req, res) => (req.url === '/slow' ? setTimeout(() => res.end('ok'), ms) : res.end('ok')));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

const get = (port: number, path: string) =>
  new Promise<void>((resolve, reject) => {
    const req = request({ port, path, host: '127.0.0.1', agent: false }, (res) => res.resume().on('end', resolve));
    req.on('error', reject).end();
  });

describe('whenQuiet', () => {
  it('resolves once no request has been in flight for quietMs', async () => {
    await serve(0);
    const t0 = performance.now();
    await whenQuiet(server!, { quietMs: 40, maxMs: 5_000 });
    const elapsed = performance.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(35);
    expect(elapsed).toBeLessThan(1_000);
  });

  it('waits for a request in flight, then quietMs after it ends', async () => {
    const port = await serve(200);
    const t0 = performance.now();
    // quietMs well above a local request's arrival, so the request is in flight before it passes
    const quiet = whenQuiet(server!, { quietMs: 150, maxMs: 5_000 });
    const answered = get(port, '/slow').then(() => performance.now() - t0);
    await quiet;
    const at = performance.now() - t0;
    expect(at).toBeGreaterThanOrEqual((await answered) + 140);
  });

  it('resolves after maxMs however busy the server is', async () => {
    const port = await serve(2_000);
    const quiet = whenQuiet(server!, { quietMs: 40, maxMs: 300 });
    const pending = get(port, '/slow');
    const t0 = performance.now();
    await quiet;
    expect(performance.now() - t0).toBeLessThan(1_500);
    await pending;
  });

  it('resolves when the server closes', async () => {
    await serve(0);
    const quiet = whenQuiet(server!, { quietMs: 10_000, maxMs: 10_000 });
    server!.close();
    await quiet;
  });
});
