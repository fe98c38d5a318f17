import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpFetch } from './http-fetch.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let base: string;
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      const path = req.url!;
      if (path === '/json') {
        res.writeHead(201, 'Made', [['Content-Type', 'application/json'], ['X-Many', 'a'], ['x-many', 'b']]);
        res.end('{"data":{"status":"alive"}}');
      } else if (path === '/empty') res.writeHead(204).end();
      else if (path === '/gzip') res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync('zipped text'));
      else if (path === '/moved') res.writeHead(302, { location: '/json' }).end();
      else if (path === '/slow') res.writeHead(200).write('first ');
      else if (path === '/missing') res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"nope"}');
      else res.writeHead(200).end(`echo ${chunks.length ? Buffer.concat(chunks).toString() : ''}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** What a response looks like to the SDK, through either fetch. */
async function view(res: Response) {
  return { ok: res.ok, status: res.status, statusText: res.statusText, type: res.headers.get('CONTENT-TYPE'), many: res.headers.get('x-many'), text: await res.text() };
}

/** The same request through the global fetch and through httpFetch: what the server saw of each. */
async function bothSeen(path: string, init: RequestInit) {
  seen.length = 0;
  await (await fetch(`${base}${path}`, init)).text();
  await (await httpFetch(`${base}${path}`, init)).text();
  const pick = ({ method, url, headers, body }: Seen) => ({
    method,
    url,
    body,
    headers: Object.fromEntries(['content-type', 'content-length', 'authorization', 'accept', 'user-agent', 'x-custom'].map((h) => [h, headers[h]])),
  });
  return seen.map(pick);
}

describe('httpFetch, against the global fetch', () => {
  it('answers as fetch does: status, text, headers case-insensitive and repeats joined', async () => {
    for (const path of ['/json', '/missing', '/gzip', '/moved']) {
      expect(await view(await httpFetch(`${base}${path}`))).toEqual(await view(await fetch(`${base}${path}`)));
    }
  });

  it('sends what fetch sends: method, headers (a record or Headers), text and byte bodies', async () => {
    const headers = { 'Content-Type': 'application/json', Authorization: 'Bearer t', 'X-Custom': 'x' };
    for (const init of [
      { method: 'POST', headers, body: '{"a":1}' },
      { method: 'PUT', headers: new Headers(headers), body: new Uint8Array([104, 105]) },
      { method: 'POST', body: 'plain' },
      { method: 'DELETE', headers },
      { method: 'POST' },
    ] as RequestInit[]) {
      const [viaFetch, viaHttp] = await bothSeen('/echo', init);
      expect(viaHttp).toEqual(viaFetch);
    }
  });

  it('gives no body for HEAD and 204, and the bytes and a stream otherwise', async () => {
    const head = await httpFetch(`${base}/json`, { method: 'HEAD' });
    expect([head.status, head.body, await head.text()]).toEqual([201, null, '']);
    expect((await httpFetch(`${base}/empty`)).status).toBe(204);
    expect(new TextDecoder().decode(await (await httpFetch(`${base}/echo`, { method: 'POST', body: 'b' })).arrayBuffer())).toBe('echo b');
    const reader = (await httpFetch(`${base}/gzip`)).body!.getReader();
    const parts: Uint8Array[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value);
    expect(Buffer.concat(parts).toString()).toBe('zipped text');
  });

  it('fails as fetch fails: TypeError "fetch failed" with the socket error as cause', async () => {
    // a port nothing listens on (fetch refuses the spec's "bad ports" such as 1 before connecting)
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const refused = `http://127.0.0.1:${(closed.address() as { port: number }).port}/`;
    await new Promise((r) => closed.close(r));
    const [a, b] = await Promise.all([fetch(refused).catch((e: unknown) => e), httpFetch(refused).catch((e: unknown) => e)]);
    expect(b).toBeInstanceOf(TypeError);
    expect([(b as Error).message, ((b as Error).cause as NodeJS.ErrnoException).code]).toEqual([(a as Error).message, ((a as Error).cause as NodeJS.ErrnoException).code]);
  });

  it('rejects with the signal’s reason, before the answer and while the body is read', async () => {
    const early = new AbortController();
    early.abort(new Error('stop'));
    await expect(httpFetch(`${base}/json`, { signal: early.signal })).rejects.toThrow('stop');
    const late = new AbortController();
    const res = await httpFetch(`${base}/slow`, { signal: late.signal });
    const text = res.text();
    late.abort(new Error('stopped reading'));
    await expect(text).rejects.toThrow('stopped reading');
  });
});
