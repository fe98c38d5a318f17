/**
 * Blobs between peers over the in-memory network (docs/blobs.md "Blobs between peers"): a member
 * fetches a blob another node holds, verified and kept; lookups nobody can answer are clear 404s;
 * and every hostile case (a non-member asking, a malformed request, a provider lying about the
 * size or the bytes, oversized, endless or stalled frames) is refused, penalized and counted, with
 * nothing kept by the requester.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryHub, type MemoryNetwork } from '../network/memory.ts';
import type { PeerKey } from '../network/network-port.ts';
import { MemoryStore } from '../store/memory.ts';
import { PeerBlobFetcher } from './fetcher.ts';
import { BLOB_PROTOCOL } from './peer-protocol.ts';
import { BlobPeerStats } from './peer-stats.ts';
import { BlobPeers } from './peers.ts';
import { BlobService } from './service.ts';
import { BlobStore, CHUNK_SIZE } from './store.ts';

const CTX = 'c1'.repeat(32);
const OTHER_CTX = 'c2'.repeat(32);
const key = () => randomBytes(32).toString('hex');
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
/** the blob id of `data` (1 MiB chunks, id over the chunk ids) */
function blobIdOfBytes(data: Uint8Array): string {
  const h = createHash('sha256');
  for (let off = 0; off < data.length; off += CHUNK_SIZE) h.update(Buffer.from(sha(data.subarray(off, off + CHUNK_SIZE)), 'hex'));
  return h.digest('hex');
}

async function readAll(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of it) parts.push(Buffer.from(p));
  return Buffer.concat(parts);
}

async function* from(...frames: Uint8Array[]) {
  yield* frames;
}

const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

interface Peer {
  key: PeerKey;
  net: MemoryNetwork;
  store: BlobStore;
  kv: MemoryStore;
  dir: string;
  peers: BlobPeers;
  blobs: BlobService;
}

let hub: MemoryHub;
let made: Peer[];
/** context id -> node keys that speak for its members; a context absent here is unknown */
let members: Map<string, Set<PeerKey>>;
const membership = (peer: PeerKey, contextId: string) => {
  const m = members.get(contextId);
  return m === undefined ? undefined : m.has(peer);
};

async function storeIn(): Promise<{ kv: MemoryStore; store: BlobStore; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-blobpeers-'));
  const kv = new MemoryStore();
  await kv.open();
  const store = new BlobStore(kv, dir);
  await store.open();
  return { kv, store, dir };
}

async function peer(opts: { member?: boolean } = {}): Promise<Peer> {
  const k = key();
  const net = hub.join(k);
  const { kv, store, dir } = await storeIn();
  const peers = new BlobPeers({ network: net, store, membership });
  peers.start();
  const p: Peer = { key: k, net, store, kv, dir, peers, blobs: new BlobService({ store, peers: peers.source }) };
  if (opts.member !== false) members.get(CTX)!.add(k);
  made.push(p);
  return p;
}

/** a node serving BLOB_PROTOCOL with `answer` (a hostile or scripted provider) */
function rogue(answer: () => AsyncIterable<Uint8Array>): PeerKey {
  const k = key();
  const net = hub.join(k);
  net.handle(BLOB_PROTOCOL, async () => answer(), { maxRequestBytes: 4096, timeoutMs: 60_000 });
  members.get(CTX)!.add(k);
  return k;
}

/** a requester with its own fetcher options (short deadlines, a small blob bound) */
async function requester(opts: { chunkTimeoutMs?: number; fetchTimeoutMs?: number; maxBytes?: number } = {}) {
  const k = key();
  const net = hub.join(k);
  const { kv, store, dir } = await storeIn();
  const stats = new BlobPeerStats();
  const fetcher = new PeerBlobFetcher({ network: net, membership, stats, ...opts });
  members.get(CTX)!.add(k);
  made.push({ key: k, net, store, kv, dir } as Peer);
  return { key: k, net, store, dir, stats, fetcher, blobs: new BlobService({ store, peers: fetcher }) };
}

async function nothingKept(r: { store: BlobStore; dir: string }, blobId: string): Promise<void> {
  expect(await r.store.get(blobId)).toBeUndefined();
  expect(await readdir(join(r.dir, 'tmp'))).toEqual([]);
  expect(await readdir(join(r.dir, 'chunks'))).toEqual([]);
}

beforeEach(() => {
  hub = new MemoryHub();
  made = [];
  members = new Map([[CTX, new Set<PeerKey>()]]);
});

afterEach(async () => {
  for (const p of made) {
    p.peers?.stop();
    await p.kv.close();
    await rm(p.dir, { recursive: true, force: true });
  }
});

describe('fetching a blob from the peers of a context', () => {
  it('streams a multi-chunk blob from the member holding it, verifies it, keeps it and serves it', async () => {
    const [a, b] = [await peer(), await peer()];
    hub.linkAll();
    const data = randomBytes(2 * CHUNK_SIZE + 12_345);
    const { blobId } = await a.blobs.upload(from(data), { contextId: CTX });
    expect(await b.blobs.info(blobId, CTX)).toEqual({ blobId, size: data.length, source: 'peer' });
    expect(await b.store.get(blobId)).toBeUndefined(); // HEAD keeps nothing
    const { info, body } = await b.blobs.open(blobId, CTX);
    expect(info).toMatchObject({ blobId, size: data.length, hash: sha(data), source: 'peer' });
    expect((await readAll(body)).equals(data)).toBe(true);
    expect((await b.blobs.info(blobId)).source).toBe('local');
    expect(a.peers.stats.served).toMatchObject({ sent: 1, stopped: 1 });
    expect(b.peers.stats.transfers).toMatchObject({ ok: 1, cancelled: 1 });
    expect(b.peers.stats.asked.found).toBe(2);
    expect(a.net.penalties).toEqual([]);
  });

  it('an empty blob travels too', async () => {
    const [a, b] = [await peer(), await peer()];
    hub.linkAll();
    const { blobId } = await a.blobs.upload(from());
    const { info, body } = await b.blobs.open(blobId, CTX);
    expect(info.size).toBe(0);
    expect((await readAll(body)).length).toBe(0);
  });

  it('concurrent downloads of one blob share one transfer and one reference', async () => {
    const [a, b] = [await peer(), await peer()];
    hub.linkAll();
    const data = randomBytes(50_000);
    const { blobId } = await a.blobs.upload(from(data));
    const got = await Promise.all([b.blobs.open(blobId, CTX), b.blobs.open(blobId, CTX)]);
    for (const g of got) expect((await readAll(g.body)).equals(data)).toBe(true);
    expect(a.peers.stats.served.sent).toBe(1);
    expect((await b.store.get(blobId))?.refcount).toBe(1);
  });

  it('takes the blob from the member that has it when others do not', async () => {
    const [a, b, c] = [await peer(), await peer(), await peer()];
    hub.linkAll();
    const data = randomBytes(1000);
    const { blobId } = await c.blobs.upload(from(data));
    expect((await readAll((await a.blobs.open(blobId, CTX)).body)).equals(data)).toBe(true);
    expect(a.peers.stats.asked).toMatchObject({ found: 1, not_found: 1 });
    expect(b.peers.stats.served.not_found).toBe(1);
  });

  it('a blob no peer has is a clear 404; so is a context with no connected member peer', async () => {
    const [a, b] = [await peer(), await peer()];
    const missing = 'ab'.repeat(32);
    await expect(b.blobs.open(missing, CTX)).rejects.toMatchObject({ kind: 'not_found', message: expect.stringContaining(`no peer of context ${CTX} has it`) });
    expect(b.peers.stats.noPeers).toBe(1);
    hub.linkAll();
    await expect(b.blobs.info(missing, CTX)).rejects.toMatchObject({ kind: 'not_found', message: expect.stringContaining('no peer') });
    expect(a.peers.stats.served.not_found).toBe(1);
    // without context_id only local storage is searched: nobody is asked
    await expect(b.blobs.open(missing)).rejects.toMatchObject({ kind: 'not_found', message: expect.stringContaining('pass context_id') });
    expect(a.net.status().requests.in).toBe(1);
  });

  it('only member peers are asked: a connected non-member never hears of the lookup', async () => {
    const [a, stranger] = [await peer(), await peer({ member: false })];
    hub.linkAll();
    const { blobId } = await stranger.blobs.upload(from(randomBytes(10)));
    await expect(a.blobs.open(blobId, CTX)).rejects.toMatchObject({ kind: 'not_found' });
    expect(stranger.net.status().requests.in).toBe(0);
  });
});

describe('serving blobs to peers', () => {
  it('refuses and penalizes a peer whose key does not speak for a member of the context', async () => {
    const [a, b] = [await peer(), await peer()];
    hub.linkAll();
    const { blobId } = await a.blobs.upload(from(randomBytes(100)));
    members.get(CTX)!.delete(b.key); // A does not count B as a member; B still asks A
    const bFetcher = new PeerBlobFetcher({ network: b.net, membership: () => true, stats: new BlobPeerStats() });
    await expect(new BlobService({ store: b.store, peers: bFetcher }).open(blobId, CTX)).rejects.toMatchObject({ kind: 'not_found' });
    expect(a.peers.stats.served.unauthorized).toBe(1);
    expect(a.net.penalties).toEqual([{ peer: b.key, reason: 'unauthorized', detail: expect.stringContaining('does not speak for a member') }]);
    await nothingKept(b, blobId);
  });

  it('refuses a context it does not know without a penalty', async () => {
    const [a, b] = [await peer(), await peer()];
    hub.linkAll();
    const { blobId } = await a.blobs.upload(from(randomBytes(100)));
    const bFetcher = new PeerBlobFetcher({ network: b.net, membership: () => true, stats: new BlobPeerStats() });
    await expect(new BlobService({ store: b.store, peers: bFetcher }).open(blobId, OTHER_CTX)).rejects.toMatchObject({ kind: 'not_found' });
    expect(a.peers.stats.served.unknown_context).toBe(1);
    expect(a.net.penalties).toEqual([]);
  });

  it('refuses and penalizes a malformed request', async () => {
    const [a, b] = [await peer(), await peer()];
    hub.linkAll();
    for (const body of [new TextEncoder().encode('not json'), json({ blob_id: 'xyz', context_id: CTX }), json({ blob_id: 'ab'.repeat(32) })]) {
      await expect(b.net.request(a.key, BLOB_PROTOCOL, body, { timeoutMs: 5000, maxResponseFrameBytes: 1024 })).rejects.toMatchObject({ kind: 'refused' });
    }
    expect(a.peers.stats.served.malformed).toBe(3);
    expect(a.net.penalties.map((p) => [p.peer, p.reason])).toEqual(Array(3).fill([b.key, 'invalid_message']));
  });

  it('a chunk damaged on its disk is never sent: the requester gets a failure and keeps nothing', async () => {
    const [a, b] = [await peer(), await peer()];
    hub.linkAll();
    const data = randomBytes(CHUNK_SIZE + 10);
    const { blobId } = await a.blobs.upload(from(data));
    const meta = (await a.store.get(blobId))!;
    await writeFile(join(a.dir, 'chunks', meta.chunks[1]!), 'rot');
    await expect(b.blobs.open(blobId, CTX)).rejects.toMatchObject({ kind: 'bad_gateway' });
    expect(a.peers.stats.served.failed).toBe(1);
    await nothingKept(b, blobId);
  });
});

describe('hostile providers', () => {
  const data = randomBytes(3000);
  const blobId = blobIdOfBytes(data);

  it('a wrong size (short or long) is refused, penalized and counted; nothing is kept', async () => {
    for (const [size, frames, what] of [
      [data.length + 1, [data], `sent ${data.length} bytes, not the ${data.length + 1}`],
      [100, [data], 'sent more than the 100 bytes it announced'],
    ] as const) {
      const liar = rogue(() => from(json({ found: true, size }), ...frames));
      const r = await requester();
      hub.link(r.key, liar);
      await expect(r.blobs.open(blobId, CTX)).rejects.toMatchObject({ kind: 'bad_gateway', message: expect.stringContaining(what) });
      expect(r.stats.transfers.bad_size).toBe(1);
      expect(r.net.penalties).toEqual([{ peer: liar, reason: 'invalid_message', detail: expect.stringContaining(what) }]);
      await nothingKept(r, blobId);
    }
  });

  it('bytes that do not hash to the blob id are refused and penalized; nothing is kept', async () => {
    const other = randomBytes(data.length);
    const liar = rogue(() => from(json({ found: true, size: data.length }), other.subarray(0, 1000), other.subarray(1000)));
    const r = await requester();
    hub.link(r.key, liar);
    await expect(r.blobs.open(blobId, CTX)).rejects.toMatchObject({ kind: 'bad_gateway', message: expect.stringContaining('hash to blob') });
    expect(r.stats.transfers.bad_hash).toBe(1);
    expect(r.net.penalties).toEqual([{ peer: liar, reason: 'invalid_message', detail: expect.stringContaining(`hash to blob ${blobIdOfBytes(other)}`) }]);
    await nothingKept(r, blobId);
  });

  it('a frame past one chunk is refused and penalized as oversized', async () => {
    const big = randomBytes(CHUNK_SIZE + 1);
    const liar = rogue(() => from(json({ found: true, size: big.length }), big));
    const r = await requester();
    hub.link(r.key, liar);
    await expect(r.blobs.open(blobIdOfBytes(big), CTX)).rejects.toMatchObject({ kind: 'bad_gateway', message: expect.stringContaining('chunk bound') });
    expect(r.stats.transfers.oversized).toBe(1);
    expect(r.net.penalties.map((p) => p.reason)).toEqual(['oversized_frame']);
    await nothingKept(r, blobIdOfBytes(big));
  });

  it('never-ending chunks without a size stop at the blob bound', async () => {
    const liar = rogue(async function* () {
      yield json({ found: true });
      for (;;) yield randomBytes(64 * 1024);
    });
    const r = await requester({ maxBytes: 256 * 1024 });
    hub.link(r.key, liar);
    await expect(r.blobs.open(blobId, CTX)).rejects.toMatchObject({ kind: 'bad_gateway', message: expect.stringContaining('more than the 262144 bytes a blob may hold') });
    expect(r.stats.transfers.bad_size).toBe(1);
    await nothingKept(r, blobId);
  });

  it('a provider that stalls between chunks is cut at the chunk deadline; one that drips is cut at the transfer deadline', async () => {
    const staller = rogue(async function* () {
      yield json({ found: true, size: data.length });
      yield data.subarray(0, 10);
      await new Promise(() => undefined);
    });
    const r = await requester({ chunkTimeoutMs: 200 });
    hub.link(r.key, staller);
    await expect(r.blobs.open(blobId, CTX)).rejects.toMatchObject({ kind: 'gateway_timeout', message: expect.stringContaining('sent nothing') });
    expect(r.stats.transfers.timeout).toBe(1);
    await nothingKept(r, blobId);

    const dripper = rogue(async function* () {
      yield json({ found: true, size: data.length });
      for (let i = 0; i < data.length; i++) {
        await new Promise((res) => setTimeout(res, 20));
        yield data.subarray(i, i + 1);
      }
    });
    const slow = await requester({ chunkTimeoutMs: 200, fetchTimeoutMs: 400 });
    hub.link(slow.key, dripper);
    await expect(slow.blobs.open(blobId, CTX)).rejects.toMatchObject({ kind: 'gateway_timeout', message: expect.stringContaining('did not finish') });
    await nothingKept(slow, blobId);
  });

  it('an answer that is not {found, size?} is penalized and the next peer is used', async () => {
    const garbage = rogue(() => from(new TextEncoder().encode('{"found":"yes"}')));
    const huge = rogue(() => from(json({ found: true, size: 2 ** 40 })));
    const honest = rogue(() => from(json({ found: true, size: data.length }), data));
    const r = await requester();
    for (const p of [garbage, huge, honest]) hub.link(r.key, p);
    expect((await readAll((await r.blobs.open(blobId, CTX)).body)).equals(data)).toBe(true);
    expect(r.stats.asked).toMatchObject({ bad_answer: 2, found: 1 });
    expect(r.net.penalties.map((p) => [p.peer, p.reason]).sort()).toEqual(
      [
        [garbage, 'invalid_message'],
        [huge, 'invalid_message'],
      ].sort(),
    );
  });

  it('stopping the node ends a transfer in flight', async () => {
    const staller = rogue(async function* () {
      yield json({ found: true, size: data.length });
      await new Promise(() => undefined);
    });
    const r = await requester();
    hub.link(r.key, staller);
    const pending = r.blobs.open(blobId, CTX);
    setTimeout(() => r.fetcher.stop(), 50);
    await expect(pending).rejects.toMatchObject({ kind: 'unavailable' });
    await nothingKept(r, blobId);
  });
});
