/**
 * The Blobs table end to end (admin spec "Blobs"; admin-wire-a §5): a real node on 127.0.0.1,
 * driven through the SDK's `client.blobs`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryTokenStore, type Client } from '../../../src/client/index.ts';
import { makeHome, spawnNode, startTestNode, type TestNode } from '../../helpers/node.ts';
import { httpError } from '../../helpers/status.ts';

const MiB = 1024 * 1024;
let node: TestNode;
let client: Client;

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A stream of `total` pseudo-random bytes made on the fly, hashed as it goes. */
function generated(total: number, piece = 256 * 1024): { stream: ReadableStream<Uint8Array>; hash: () => string } {
  const h = createHash('sha256');
  let sent = 0;
  const block = randomBytes(piece);
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) return controller.close();
      const n = Math.min(piece, total - sent);
      const out = new Uint8Array(block.subarray(0, n));
      new DataView(out.buffer).setUint32(0, sent / piece); // every piece differs
      h.update(out);
      sent += n;
      controller.enqueue(out);
    },
  });
  let digest: string | undefined;
  return { stream, hash: () => (digest ??= h.digest('hex')) };
}

beforeAll(async () => {
  node = await startTestNode();
  client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await client.auth.login({ username: node.adminUser, password: node.adminPassword });
});
afterAll(async () => node?.destroy());

describe('blob round-trips', () => {
  it.each([
    ['empty', 0],
    ['1 byte', 1],
    ['exactly 1 MiB', MiB],
    ['1 MiB + 1', MiB + 1],
  ])('%s', async (_name, n) => {
    const data = new Uint8Array(randomBytes(n));
    const up = await client.blobs.upload(data, { hash: sha(data) });
    expect(up.size).toBe(n);
    expect(up.blob_id).toMatch(/^[0-9a-f]{64}$/);
    const back = await client.blobs.bytes(up.blob_id);
    expect(Buffer.from(back).equals(Buffer.from(data))).toBe(true);
    const info = await client.blobs.head(up.blob_id);
    expect(info).toMatchObject({ blobId: up.blob_id, size: n, hash: sha(data), source: 'local' });
    expect((await client.blobs.list()).map((b) => b.blob_id)).toContain(up.blob_id);
    expect(await client.blobs.delete(up.blob_id)).toEqual({ blob_id: up.blob_id, deleted: true });
    expect((await httpError(client.blobs.head(up.blob_id))).status).toBe(404);
  });

  it('empty content has the reference id SHA-256("")', async () => {
    const up = await client.blobs.upload(new Uint8Array(0));
    expect(up.blob_id).toBe(sha(new Uint8Array(0)));
    await client.blobs.delete(up.blob_id);
  });

  it('50 MiB streamed up and down, with progress, without buffering it in memory', async () => {
    const total = 50 * MiB;
    const src = generated(total);
    const progress: number[] = [];
    const up = await client.blobs.upload(src.stream, { onProgress: (loaded) => progress.push(loaded) });
    expect(up.size).toBe(total);
    expect(progress.at(-1)).toBe(total);
    expect(await readdir(join(node.paths.blobs, 'chunks'))).toHaveLength(50);

    const h = createHash('sha256');
    let size = 0;
    let lastTotal: number | undefined;
    const stream = await client.blobs.download(up.blob_id, { onProgress: (_l, t) => (lastTotal = t) });
    for await (const piece of stream as unknown as AsyncIterable<Uint8Array>) {
      h.update(piece);
      size += piece.length;
    }
    expect(size).toBe(total);
    expect(h.digest('hex')).toBe(src.hash());
    expect(lastTotal).toBe(total);
    const info = await client.blobs.head(up.blob_id);
    expect(info.size).toBe(total);
    expect(info.hash).toBe(src.hash());
    await client.blobs.delete(up.blob_id);
  });
});

describe('blob rules', () => {
  it('a hash that does not match → 400 and nothing listed', async () => {
    const data = new Uint8Array(randomBytes(MiB + 3));
    const err = await httpError(client.blobs.upload(data, { hash: 'ab'.repeat(32) }));
    expect(err.status).toBe(400);
    expect(err.bodyText).toMatch(/hash mismatch/);
    const before = (await client.blobs.list()).map((b) => b.blob_id);
    const ok = await client.blobs.upload(data);
    expect(before).not.toContain(ok.blob_id);
    await client.blobs.delete(ok.blob_id);
    expect(await readdir(join(node.paths.blobs, 'tmp'))).toEqual([]);
  });

  it('an interrupted upload leaves no listed blob and no temp file', async () => {
    const before = (await client.blobs.list()).length;
    const chunksBefore = (await readdir(join(node.paths.blobs, 'chunks'))).length;
    const abort = new AbortController();
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 3 * MiB) {
          abort.abort(new Error('client gave up'));
          return new Promise(() => undefined); // never finishes
        }
        sent += 256 * 1024;
        controller.enqueue(new Uint8Array(randomBytes(256 * 1024)));
      },
    });
    await expect(client.blobs.upload(stream, { signal: abort.signal })).rejects.toThrow();
    const tmp = join(node.paths.blobs, 'tmp');
    // The node may still be reading the aborted body when the client's promise settles, and its
    // cleanup waits for chunk writes in flight (up to 8 fsyncs): wait until the temp directory has
    // stayed empty for a whole second (10 s at most, for a loaded disk).
    let quietSince = Date.now();
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && Date.now() - quietSince < 1000; ) {
      if ((await readdir(tmp)).length > 0) quietSince = Date.now();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(await readdir(tmp)).toEqual([]);
    expect(await client.blobs.list()).toHaveLength(before);
    expect(await readdir(join(node.paths.blobs, 'chunks'))).toHaveLength(chunksBefore);
  });

  it('an invalid hash or context id → 400 naming it', async () => {
    expect((await httpError(client.blobs.upload(new Uint8Array([1]), { hash: 'nope' }))).bodyText).toMatch(/hash is not a valid format/);
    expect((await httpError(client.blobs.upload(new Uint8Array([1]), { contextId: 'nope' }))).bodyText).toMatch(/context_id/);
    const e = await httpError(client.blobs.bytes('not-an-id'));
    expect(e.status).toBe(400);
    expect(e.bodyText).toMatch(/Invalid blob ID format/);
  });

  it('delete with two references: the first delete keeps the blob, the second removes it', async () => {
    const data = new Uint8Array(randomBytes(2000));
    const a = await client.blobs.upload(data);
    const b = await client.blobs.upload(data);
    expect(b.blob_id).toBe(a.blob_id);
    expect((await client.blobs.list()).filter((x) => x.blob_id === a.blob_id)).toHaveLength(1);
    expect(await client.blobs.delete(a.blob_id)).toEqual({ blob_id: a.blob_id, deleted: true });
    expect((await client.blobs.head(a.blob_id)).size).toBe(2000);
    expect(await client.blobs.delete(a.blob_id)).toEqual({ blob_id: a.blob_id, deleted: true });
    expect((await httpError(client.blobs.head(a.blob_id))).status).toBe(404);
    expect((await httpError(client.blobs.delete(a.blob_id))).status).toBe(404);
    expect((await client.blobs.list()).map((x) => x.blob_id)).not.toContain(a.blob_id);
  });

  it('HEAD answers the reference headers plus X-Blob-Source', async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    const up = await client.blobs.upload(png);
    const res = await client.http.send(`/admin-api/blobs/${up.blob_id}`, { method: 'HEAD' });
    const h = res.headers;
    expect(res.status).toBe(200);
    expect(res.bodyText).toBe('');
    expect(h.get('content-length')).toBe(String(png.length));
    expect(h.get('x-blob-id')).toBe(up.blob_id);
    expect(h.get('x-blob-hash')).toBe(sha(png));
    expect(h.get('etag')).toBe(`"${sha(png)}"`);
    expect(h.get('x-blob-mime-type')).toBe('image/png');
    expect(h.get('content-type')).toBe('image/png');
    expect(h.get('x-blob-source')).toBe('local');
    expect(h.get('cache-control')).toBe('private, no-cache');
    const exposed = h.get('access-control-expose-headers')!.toLowerCase();
    for (const name of ['x-blob-id', 'x-blob-hash', 'x-blob-mime-type', 'etag', 'x-blob-source', 'content-length']) {
      expect(exposed).toContain(name);
    }
    // the GET carries the same headers
    const get = await client.http.send(`/admin-api/blobs/${up.blob_id}`);
    expect(get.headers.get('x-blob-hash')).toBe(sha(png));
    await client.blobs.delete(up.blob_id);
  });

  it('a blob not held locally: 404 without context_id; with one, 404 saying no peer has it', async () => {
    const missing = 'ab'.repeat(32);
    const local = await httpError(client.blobs.bytes(missing));
    expect(local.status).toBe(404);
    expect(local.bodyText).toMatch(/not found locally.*context_id/);
    expect((await httpError(client.blobs.head(missing))).status).toBe(404);
    const peer = await httpError(client.blobs.bytes(missing, { contextId: 'cd'.repeat(32) }));
    expect(peer.status).toBe(404);
    expect(peer.bodyText).toMatch(/no peer/);
  });

  it('accepts base58 ids from older clients and answers hex', async () => {
    const empty = await client.blobs.upload(new Uint8Array(0));
    const info = await client.blobs.head('GKot5hBsd81kMupNCXHaqbhv3huEbxAFMLnpcX2hniwn');
    expect(info.blobId).toBe(empty.blob_id);
    await client.blobs.delete(empty.blob_id);
  });

  it('any content type, and a JSON-typed body, is stored raw (no 1 MiB body limit)', async () => {
    const data = new Uint8Array(randomBytes(2 * MiB));
    const up = await client.blobs.upload(data, { headers: { 'content-type': 'application/json' } });
    expect(up.size).toBe(2 * MiB);
    const text = await client.http.send('/admin-api/blobs', {
      method: 'PUT',
      rawBody: 'plain words',
      headers: { 'content-type': 'text/plain' },
    });
    const body = JSON.parse(text.bodyText);
    expect(body.data.size).toBe(11);
    await client.blobs.delete(up.blob_id);
    await client.blobs.delete(body.data.blob_id);
  });

  it('needs a token', async () => {
    const anon = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
    expect((await httpError(anon.blobs.list())).status).toBe(401);
  });

  it('blobs survive a restart', async () => {
    const data = new Uint8Array(randomBytes(MiB + 9));
    const up = await client.blobs.upload(data);
    node = await node.restart();
    client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
    await client.auth.login({ username: node.adminUser, password: node.adminPassword });
    expect(Buffer.from(await client.blobs.bytes(up.blob_id)).equals(Buffer.from(data))).toBe(true);
    await client.blobs.delete(up.blob_id);
  });
});

/** Peak resident memory of a process (Linux `/proc`), in bytes. */
async function peakRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

describe.runIf(process.platform === 'linux')('memory', () => {
  it('uploading 100 MiB grows the node process by far less than 100 MiB (streamed, not buffered)', async () => {
    const paths = await makeHome();
    const root = join(paths.dir, '..');
    const spawned = await spawnNode(['run', '--home', root, '--node', 'test'], {
      MERO_AUTH_ADMIN_USER: 'dev',
      MERO_AUTH_ADMIN_PASSWORD: 'dev-password',
    });
    try {
      const c = createClient({ baseUrl: spawned.url, tokenStore: new MemoryTokenStore() });
      await c.auth.login({ username: 'dev', password: 'dev-password' });
      // warm up the route and the store first, so the baseline includes them
      await c.blobs.upload(generated(10 * MiB).stream);
      const before = await peakRss(spawned.child.pid!);
      const up = await c.blobs.upload(generated(100 * MiB).stream);
      expect(up.size).toBe(100 * MiB);
      // a buffered upload would add ≥ 100 MiB; streaming costs a constant (~30 MiB of lazily
      // collected garbage and buffer pools, measured the same for 50 and 200 MiB)
      const growth = (await peakRss(spawned.child.pid!)) - before;
      expect(growth).toBeLessThan(50 * MiB);
    } finally {
      spawned.child.kill('SIGTERM');
      await spawned.exited;
      await rm(root, { recursive: true, force: true });
    }
  }, 60_000);
});
