import { createServer, type RequestListener, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { makeBundle, tinyWasm } from '../../test/helpers/bundles.ts';
import { ApplicationRegistry, HttpRegistry } from './registry.ts';

let server: Server | undefined;

async function serve(handler: RequestListener): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  return `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
}

async function stop(): Promise<void> {
  if (!server) return;
  const s = server;
  server = undefined;
  s.closeAllConnections();
  await new Promise((resolve) => s.close(resolve));
}

afterEach(stop);

const registry = (url: string, timeoutMs = 5_000) => new ApplicationRegistry({ sources: [new HttpRegistry(url)], timeoutMs });

describe('HTTP registry', () => {
  it('fetches the manifest, then the artifact at the reference path', async () => {
    const b = await makeBundle({ wasm: tinyWasm(), package: 'com.x', version: '1.0.0' });
    const seen: string[] = [];
    const url = await serve((req, res) => {
      seen.push(req.url!);
      if (req.url === '/api/v2/bundles/com.x/1.0.0') return void res.end(JSON.stringify(b.manifest));
      if (req.url === '/artifacts/com.x/1.0.0/com.x-1.0.0.mpk') return void res.end(b.bytes);
      res.writeHead(404).end();
    });
    const found = await registry(`${url}/`).resolve('com.x', '1.0.0');
    expect(found.bytes.equals(b.bytes)).toBe(true);
    expect(found.source).toBe(`${url}/artifacts/com.x/1.0.0/com.x-1.0.0.mpk`);
    expect(seen).toEqual(['/api/v2/bundles/com.x/1.0.0', '/artifacts/com.x/1.0.0/com.x-1.0.0.mpk']);
  });

  it('maps every registry-side failure to 502', async () => {
    const cases: Array<[string, RequestListener, RegExp]> = [
      ['unknown', (_q, s) => void s.writeHead(404).end(), /cannot resolve com\.x@1\.0\.0/],
      ['server error', (_q, s) => void s.writeHead(500).end(), /answered 500/],
      ['not JSON', (_q, s) => void s.end('<html>'), /not JSON/],
      ['other coordinates', (_q, s) => void s.end(JSON.stringify({ package: 'com.y', appVersion: '1.0.0' })), /answered com\.y@1\.0\.0/],
      [
        'listed without artifact',
        (q, s) => void (q.url!.startsWith('/api/') ? s.end('{}') : s.writeHead(404).end()),
        /lists com\.x@1\.0\.0 but its bundle .* answered 404/,
      ],
    ];
    for (const [name, handler, message] of cases) {
      const url = await serve(handler);
      await expect(registry(url).resolve('com.x', '1.0.0'), name).rejects.toMatchObject({ kind: 'bad_gateway', message: expect.stringMatching(message) });
      await stop();
    }
  });

  it('gives up at the deadline, and when the registry is unreachable', async () => {
    const url = await serve(() => undefined); // never answers
    await expect(registry(url, 200).resolve('com.x', '1.0.0')).rejects.toMatchObject({ kind: 'bad_gateway', message: expect.stringMatching(/did not answer in time/) });
    await expect(registry('http://127.0.0.1:1').resolve('com.x', '1.0.0')).rejects.toMatchObject({ kind: 'bad_gateway', message: expect.stringMatching(/unreachable/) });
  });

  it('stops when the caller aborts', async () => {
    const url = await serve(() => undefined);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    await expect(registry(url).resolve('com.x', '1.0.0', ac.signal)).rejects.toMatchObject({ kind: 'bad_gateway' });
  });
});
