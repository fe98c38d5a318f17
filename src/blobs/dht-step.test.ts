/**
 * Blobs found through DHT provider records (issue #24; docs/blobs.md "Found through the DHT"), over
 * the in-memory network whose hub plays the DHT: a holder announces what it stores and withdraws
 * what it deletes; a member not connected to the holder (both only know a middle node) fetches the
 * blob through the provider record, verified; and the hostile cases: a provider serving wrong bytes
 * (dropped, penalized, counted, the next provider used), a provider that never answers (its answer
 * deadline), many bogus records (bounded), and a non-member provider (never asked).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PeerKey } from '../network/network-port.ts';
import { MemoryHub, type MemoryNetwork } from '../network/memory.ts';
import { MemoryStore } from '../store/memory.ts';
import { BlobAnnouncer } from './announcer.ts';
import { PeerBlobFetcher, type DhtStepLimits } from './fetcher.ts';
import { BLOB_PROTOCOL, encodeAnswer } from './peer-protocol.ts';
import { BlobPeerStats } from './peer-stats.ts';
import { BlobPeers } from './peers.ts';
import { BlobService } from './service.ts';
import { BlobStore } from './store.ts';

const CTX = 'c1'.repeat(32);
const key = () => randomBytes(32).toString('hex');

async function readAll(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of it) parts.push(Buffer.from(p));
  return Buffer.concat(parts);
}
async function* from(...frames: Uint8Array[]) {
  yield* frames;
}

let hub: MemoryHub;
let cleanup: (() => Promise<void> | void)[];
let members: Set<PeerKey>;
const membership = (peer: PeerKey, contextId: string) => (contextId === CTX ? members.has(peer) : undefined);

async function storeIn() {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-blobdht-'));
  const kv = new MemoryStore();
  await kv.open();
  const store = new BlobStore(kv, dir);
  await store.open();
  cleanup.push(async () => {
    await kv.close();
    await rm(dir, { recursive: true, force: true });
  });
  return store;
}

/** a node with blobs between peers (provider, fetcher, announcer) */
async function node(opts: { member?: boolean; dht?: boolean; limits?: Partial<DhtStepLimits> } = {}) {
  const k = key();
  const net = hub.join(k, { dht: opts.dht });
  const store = await storeIn();
  const peers = new BlobPeers({ network: net, store, membership, dht: opts.limits, announce: { startDelayMs: 10, settleMs: 10, retryMs: 50 } });
  peers.start();
  cleanup.push(() => peers.stop());
  if (opts.member !== false) members.add(k);
  return { key: k, net, store, peers, stats: peers.stats, blobs: new BlobService({ store, peers: peers.source }) };
}

/** a member serving BLOB_PROTOCOL with `answer` (a hostile provider), named in the blob's provider records */
function rogue(blobId: string, answer: (signal: AbortSignal) => AsyncIterable<Uint8Array>): { key: PeerKey; net: MemoryNetwork } {
  const k = key();
  const net = hub.join(k);
  net.handle(BLOB_PROTOCOL, async (_req, ctx) => answer(ctx.signal), { maxRequestBytes: 4096, timeoutMs: 60_000 });
  members.add(k);
  record(blobId, k);
  return { key: k, net };
}

function record(blobId: string, provider: PeerKey): void {
  const set = hub.providers.get(blobId) ?? new Set<PeerKey>();
  set.add(provider);
  hub.providers.set(blobId, set);
}

/** S: a node both sides know, member of nothing, holding nothing */
async function middle() {
  return node({ member: false });
}

beforeEach(() => {
  hub = new MemoryHub();
  cleanup = [];
  members = new Set();
});

afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
});

describe('blobs found through DHT provider records', () => {
  it('a member not connected to the holder fetches the blob through its provider record, verified and kept', async () => {
    const [s, h, f] = [await middle(), await node(), await node()];
    hub.link(h.key, s.key);
    hub.link(f.key, s.key);
    const data = randomBytes(300_000);
    const { blobId } = await h.blobs.upload(from(data));
    await h.peers.announcer.idle();
    expect(h.stats.announced.ok).toBeGreaterThanOrEqual(1); // the start-up round may announce it a second time
    expect(hub.providers.get(blobId)).toEqual(new Set([h.key]));
    expect(hub.linked(f.key, h.key)).toBe(false);

    const { info, body } = await f.blobs.open(blobId, CTX);
    expect((await readAll(body)).equals(data)).toBe(true);
    expect(info).toMatchObject({ blobId, size: data.length, hash: createHash('sha256').update(data).digest('hex'), source: 'peer' });
    expect(f.stats.noPeers).toBe(1); // no connected member: S is none
    expect(f.stats.dht).toMatchObject({ lookups: 1, found: 1, located: 1, none: 0 });
    expect(f.stats.transfers.ok).toBe(1);
    expect(h.stats.served.sent).toBe(1);
    // F now holds it, and announces it in turn
    await f.peers.announcer.idle();
    expect(hub.providers.get(blobId)).toEqual(new Set([h.key, f.key]));
  });

  it('announces the blobs held at start once a peer is there, and withdraws a deleted blob', async () => {
    const k = key();
    const net = hub.join(k);
    const store = await storeIn();
    const { blobId } = await new BlobService({ store }).upload(from(randomBytes(100)));
    const stats = new BlobPeerStats();
    const announcer = new BlobAnnouncer({ network: net, store, stats, startDelayMs: 10, settleMs: 10, retryMs: 10_000 });
    announcer.start();
    cleanup.push(() => announcer.stop());
    await new Promise((r) => setTimeout(r, 50));
    await announcer.idle();
    expect(stats.announced).toMatchObject({ ok: 0, no_peers: 1 }); // nobody to take the record yet
    const other = hub.join(key());
    hub.link(k, other.self); // a peer arrives: the waiting announcement goes out
    for (let i = 0; i < 100 && stats.announced.ok === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(stats.announced.ok).toBe(1);
    expect(hub.providers.get(blobId)?.has(k)).toBe(true);
    await store.release(blobId);
    expect(stats.announced.withdrawn).toBe(1);
    await new Promise((r) => setTimeout(r, 10));
    expect(hub.providers.get(blobId)?.has(k)).toBe(false);
  });

  it('a node without a DHT announces nothing and finds nothing beyond its connected peers', async () => {
    const [s, h] = [await middle(), await node()];
    const f = await node({ dht: false });
    hub.link(h.key, s.key);
    hub.link(f.key, s.key);
    const { blobId } = await h.blobs.upload(from(randomBytes(100)));
    await h.peers.announcer.idle();
    await expect(f.blobs.open(blobId, CTX)).rejects.toMatchObject({ kind: 'not_found' });
    expect(f.stats.dht).toMatchObject({ lookups: 1, found: 0, none: 1 });
    await f.blobs.upload(from(randomBytes(10)));
    await f.peers.announcer.idle();
    expect(f.stats.announced).toMatchObject({ ok: 0, unsupported: 1 });
  });
});

describe('hostile providers found through the DHT', () => {
  async function line(limits?: Partial<DhtStepLimits>) {
    const [s, h, f] = [await middle(), await node(), await node({ limits })];
    hub.link(h.key, s.key);
    hub.link(f.key, s.key);
    return { s, h, f };
  }

  it('a provider serving wrong bytes is dropped, penalized and counted, and the next provider serves the blob', async () => {
    const { h, f } = await line();
    const data = randomBytes(5_000);
    const blobId = (await new BlobService({ store: await storeIn() }).upload(from(data))).blobId;
    const liar = rogue(blobId, async function* () {
      yield encodeAnswer({ found: true, size: data.length });
      yield randomBytes(data.length); // the right size, the wrong bytes
    });
    await h.blobs.upload(from(data)); // H's record comes after the liar's
    await h.peers.announcer.idle();
    expect([...hub.providers.get(blobId)!]).toEqual([liar.key, h.key]);

    const { body } = await f.blobs.open(blobId, CTX);
    expect((await readAll(body)).equals(data)).toBe(true);
    expect(f.stats.transfers).toMatchObject({ bad_hash: 1, ok: 1 });
    expect(f.net.penalties.map((p) => [p.peer, p.reason])).toEqual([[liar.key, 'invalid_message']]);
    expect(f.stats.dht).toMatchObject({ lookups: 2, located: 2, skipped: 1 }); // the second lookup left the liar out
    expect((await f.store.get(blobId))?.refcount).toBe(1);
  });

  it('only a lying provider: the GET fails with the breach (502) and nothing is kept', async () => {
    const { f } = await line();
    const data = randomBytes(5_000);
    const blobId = (await new BlobService({ store: await storeIn() }).upload(from(data))).blobId;
    rogue(blobId, async function* () {
      yield encodeAnswer({ found: true, size: data.length });
      yield randomBytes(data.length);
    });
    await expect(f.blobs.open(blobId, CTX)).rejects.toMatchObject({ kind: 'bad_gateway', message: expect.stringContaining('nothing was kept') });
    expect(await f.store.get(blobId)).toBeUndefined();
  });

  it('a provider that never answers is given up at its answer deadline, and the next one is asked', async () => {
    const { h, f } = await line({ answerMs: 200 });
    const data = randomBytes(2_000);
    const blobId = (await new BlobService({ store: await storeIn() }).upload(from(data))).blobId;
    rogue(blobId, (signal) => ({
      [Symbol.asyncIterator]: () => ({ next: () => new Promise<IteratorResult<Uint8Array>>((_, reject) => signal.addEventListener('abort', () => reject(new Error('gone')))) }),
    }));
    await h.blobs.upload(from(data));
    await h.peers.announcer.idle();
    const { body } = await f.blobs.open(blobId, CTX);
    expect((await readAll(body)).equals(data)).toBe(true);
    expect(f.stats.asked).toMatchObject({ failed: 1, found: 1 });
    expect(f.stats.dht.located).toBe(1);
  });

  it('many bogus records: bounded by the records looked at and the providers asked, then a clear 404', async () => {
    const { f } = await line({ maxRecords: 10, maxAsked: 3, answerMs: 200 });
    const blobId = 'ab'.repeat(32);
    for (let i = 0; i < 200; i++) {
      const bogus = key(); // a node nobody runs, claiming membership
      members.add(bogus);
      record(blobId, bogus);
    }
    await expect(f.blobs.open(blobId, CTX)).rejects.toMatchObject({ kind: 'not_found' });
    expect(f.stats.dht).toMatchObject({ lookups: 1, found: 3, located: 0, none: 1 });
    expect(f.stats.asked.failed).toBe(3);
  });

  it('a provider that is not a member of the context is never asked (it would learn the context id)', async () => {
    const { s, f } = await line();
    const data = randomBytes(100);
    const stranger = await node({ member: false });
    hub.link(stranger.key, s.key);
    const { blobId } = await stranger.blobs.upload(from(data));
    await stranger.peers.announcer.idle();
    expect(hub.providers.get(blobId)?.has(stranger.key)).toBe(true);
    await expect(f.blobs.open(blobId, CTX)).rejects.toMatchObject({ kind: 'not_found' });
    expect(f.stats.dht).toMatchObject({ found: 1, skipped: 1, none: 1 });
    expect(stranger.net.status().requests.in).toBe(0);
  });
});
