/**
 * Joining a context brings its application (issue #34 §1; app-fetch.ts), over the in-memory
 * network with the real blob peers and the real applications service: a node whose context names
 * a bundle it lacks takes it from a member, verifies and installs it; a member serving other bytes
 * or announcing more than a bundle may hold is refused and penalized and another member serves
 * it; while nothing serves it the context's problem names the application and the fix; a bundle of
 * another application is never installed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeBundle, testAbi, tinyWasm, type MadeBundle } from '../../test/helpers/bundles.ts';
import { ApplicationRegistry } from '../applications/registry.ts';
import { ApplicationService } from '../applications/service.ts';
import { BLOB_PROTOCOL } from '../blobs/peer-protocol.ts';
import { BlobPeers } from '../blobs/peers.ts';
import { BlobService } from '../blobs/service.ts';
import { BlobStore } from '../blobs/store.ts';
import type { PeerKey } from '../network/network-port.ts';
import { MemoryHub, type MemoryNetwork } from '../network/memory.ts';
import { MemoryStore } from '../store/memory.ts';
import { until } from '../sync/testkit.ts';
import { ApplicationFetch, bundleBlobsOf } from './app-fetch.ts';
import { UNINITIALIZED_HASH, type ContextMeta, type Registration } from './types.ts';

const CTX = 'c1'.repeat(32);
const ZERO = '0'.repeat(64);
/** the shared poller, with room for a loaded machine */
const wait = (what: string, ok: () => boolean | Promise<boolean>, ms = 15_000) => until(what, ok, ms);
const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

interface Node {
  key: PeerKey;
  net: MemoryNetwork;
  apps: ApplicationService;
  blobs: BlobService;
  peers: BlobPeers;
}

let hub: MemoryHub;
let dirs: string[];
let nodes: Node[];
let fetches: ApplicationFetch[];
let members: Set<PeerKey>;

async function node(): Promise<Node> {
  const key = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex');
  const net = hub.join(key);
  const dir = await mkdtemp(join(tmpdir(), 'hearth-appfetch-'));
  dirs.push(dir);
  const kv = new MemoryStore();
  await kv.open();
  const store = new BlobStore(kv, dir);
  await store.open();
  const peers = new BlobPeers({ network: net, store, membership: (peer, contextId) => (contextId === CTX ? members.has(peer) : undefined) });
  peers.start();
  members.add(key);
  const apps = new ApplicationService({ store: kv, blobs: store, registry: new ApplicationRegistry({ sources: [], timeoutMs: 1_000 }) });
  const n = { key, net, apps, blobs: new BlobService({ store, peers: peers.source }), peers };
  nodes.push(n);
  return n;
}

/** A scripted member answering every blob request with `frames`. */
function rogue(frames: () => Uint8Array[]): PeerKey {
  const key = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex');
  const net = hub.join(key);
  net.handle(
    BLOB_PROTOCOL,
    async () =>
      (async function* () {
        yield* frames();
      })(),
    { maxRequestBytes: 4096, timeoutMs: 10_000 },
  );
  members.add(key);
  return key;
}

function registration(opts: { appKey?: string; bundleBlobId?: string; applicationId: string; upgradeTo?: string; aborted?: boolean }): Registration {
  const upgrade = opts.upgradeTo ? { upgrade: { targetApplicationId: opts.applicationId, toAppKey: opts.upgradeTo, ...(opts.aborted ? { aborted: { at: 1, by: 'x' } } : {}) } } : {};
  const group = {
    id: 'aa'.repeat(32),
    appKey: opts.upgradeTo ?? opts.appKey ?? ZERO,
    ...upgrade,
    targetApplicationId: opts.applicationId,
    contexts: { [CTX]: { metadata: null, registeredAt: 0, ...(opts.bundleBlobId ? { bundleBlobId: opts.bundleBlobId } : {}) } },
  };
  return { ns: { groups: { [group.id]: group } }, group } as unknown as Registration;
}

/** A joiner holding context CTX of `app`, its application missing; `reg` is what its governance says. */
function fetcherOn(n: Node, meta: Partial<ContextMeta> & { applicationId: string }, reg: () => Registration | undefined, opts: { maxBundleBytes?: number } = {}) {
  const full: ContextMeta = { id: CTX, groupId: 'aa'.repeat(32), rootHash: UNINITIALIZED_HASH, dagHeads: [], createdAt: 0, ...meta };
  const ready: string[] = [];
  const f = new ApplicationFetch({
    records: { getMeta: async (id) => (id === CTX ? full : undefined), listMeta: async () => [full] },
    applications: n.apps,
    blobs: bundleBlobsOf(n.blobs),
    locate: (id) => (id === CTX ? reg() : undefined),
    now: () => Date.now(),
    onReady: (id) => ready.push(id),
    retry: { firstMs: 50, maxMs: 200, sweepMs: 60_000 },
    ...opts,
  });
  fetches.push(f);
  return { f, ready, meta: full };
}

async function bundle(version = '1.0.0', key?: MadeBundle['key']): Promise<MadeBundle> {
  return makeBundle({ wasm: tinyWasm({ abi: testAbi() }), package: 'com.hearth.fetched', version, ...(key ? { key } : {}) });
}

/** Installs `b` on `n` and answers its bundle blob id. */
async function installOn(n: Node, b: MadeBundle): Promise<string> {
  await n.apps.installBytes(b.bytes, 'test');
  return (await n.apps.releases(b.applicationId)).find((r) => r.version === b.version)!.bundleBlobId;
}

/** Two nodes, A holding an application (1.0.0) installed, B not: the arrange of most cases. */
async function appOnA() {
  const a = await node();
  const b = await node();
  const app = await bundle();
  return { a, b, app, blobId: await installOn(a, app) };
}

/** Two nodes, A holding versions 1.0.0 and 2.0.0 of one application installed, B neither. */
async function twoVersionsOnA() {
  const a = await node();
  const b = await node();
  const v1 = await bundle('1.0.0');
  const v2 = await bundle('2.0.0', v1.key);
  return { a, b, v1, v2, blob1: await installOn(a, v1), blob2: await installOn(a, v2) };
}

beforeEach(() => {
  hub = new MemoryHub();
  dirs = [];
  nodes = [];
  fetches = [];
  members = new Set();
});

afterEach(async () => {
  for (const f of fetches) f.stop();
  for (const n of nodes) n.peers.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('a joined context brings its application', () => {
  it('takes the bundle its registration names from a member, verifies and installs it, then says the context is ready', async () => {
    const { a, b, app, blobId } = await appOnA();
    const { f, ready } = fetcherOn(b, { applicationId: app.applicationId }, () => registration({ applicationId: app.applicationId, bundleBlobId: blobId }));
    expect(await b.apps.get(app.applicationId)).toBeNull();
    hub.linkAll();
    f.start();
    await wait('B installed the application', async () => (await b.apps.get(app.applicationId)) !== null);
    const got = (await b.apps.get(app.applicationId))!;
    expect(got).toMatchObject({ bundleBlobId: blobId, version: '1.0.0', source: `blob:${blobId}` });
    expect(await b.apps.abi(app.applicationId)).toMatchObject({ methods: expect.any(Array) });
    await wait('the context is ready', () => ready.includes(CTX));
    expect(f.problem(CTX)).toBeUndefined();
    // the fetch's own reference is dropped: the application holds the only one
    await wait('one reference left', async () => (await b.blobs.store.get(blobId))?.refcount === 1);
    // and B now serves it in turn: a third member without A gets it from B
    members.delete(a.key);
    const c = await node();
    hub.linkAll();
    const third = fetcherOn(c, { applicationId: app.applicationId, bundleBlobId: blobId }, () => registration({ applicationId: app.applicationId }));
    third.f.start();
    await wait('C installed it from B', async () => (await c.apps.get(app.applicationId)) !== null);
  });

  it('prefers the group’s resolved appKey (the version it runs now) to the registration’s', async () => {
    const { b, v1, blob1, blob2 } = await twoVersionsOnA();
    const { f } = fetcherOn(b, { applicationId: v1.applicationId }, () => registration({ applicationId: v1.applicationId, bundleBlobId: blob1, appKey: blob2 }));
    hub.linkAll();
    f.start();
    await wait('B installed v2', async () => (await b.apps.get(v1.applicationId))?.version === '2.0.0');
    expect((await b.apps.releases(v1.applicationId)).map((r) => r.bundleBlobId)).toEqual([blob2]);
  });

  it('refuses and penalizes a member sending other bytes; nothing is kept, the status says it is still being fetched, and another member serves it', async () => {
    const { a, b, app, blobId } = await appOnA();
    const tampered = Buffer.from(app.bytes);
    tampered[tampered.length - 10] ^= 0xff;
    const liar = rogue(() => [json({ found: true, size: tampered.length }), tampered]);
    // B reaches only the liar at first
    hub.link(b.key, liar);
    const { f } = fetcherOn(b, { applicationId: app.applicationId }, () => registration({ applicationId: app.applicationId, bundleBlobId: blobId }));
    f.start();
    await wait('the liar penalized', () => b.net.penalties.some((p) => p.peer === liar && p.reason === 'invalid_message' && (p.detail ?? '').includes('hash to blob')));
    await wait('the problem names the breach', () => f.problem(CTX)?.detail.includes('hash to blob') === true);
    expect(f.problem(CTX)).toMatchObject({ reason: 'fetching_application', applicationId: app.applicationId, bundleBlobId: blobId });
    expect(f.problem(CTX)!.detail).toContain(`fetching application ${app.applicationId}`);
    expect(await b.apps.get(app.applicationId)).toBeNull();
    expect(await b.blobs.store.get(blobId)).toBeUndefined();
    // the honest member connects: a later attempt reaches it (the liar is left out for this blob)
    hub.link(b.key, a.key);
    await wait('B installed the application', async () => (await b.apps.get(app.applicationId)) !== null, 15_000);
    expect((await b.apps.get(app.applicationId))!.bundleBlobId).toBe(blobId);
    expect(f.problem(CTX)).toBeUndefined();
    // the fetch's own reference is dropped once installed: the application holds the only one
    await wait('one reference left', async () => (await b.blobs.store.get(blobId))?.refcount === 1);
  });

  it('refuses a member announcing more than a bundle may hold (penalized, skipped) and takes it from another', async () => {
    const { a, b, app, blobId } = await appOnA();
    const big = rogue(() => [json({ found: true, size: app.bytes.length + 1 })]);
    const { f } = fetcherOn(b, { applicationId: app.applicationId }, () => registration({ applicationId: app.applicationId, bundleBlobId: blobId }), {
      maxBundleBytes: app.bytes.length,
    });
    // B reaches only the oversized member at first
    hub.link(b.key, big);
    f.start();
    await wait('the oversized answer penalized', () => b.net.penalties.some((p) => p.peer === big && (p.detail ?? '').includes('exceeds the blob bound')));
    expect(await b.apps.get(app.applicationId)).toBeNull();
    hub.link(b.key, a.key);
    await wait('B installed the application from the other member', async () => (await b.apps.get(app.applicationId)) !== null, 15_000);
  });

  it('refuses a member streaming more than a bundle may hold without announcing a size', async () => {
    const b = await node();
    const app = await bundle();
    const blobId = await installOn(await node(), app);
    const endless = rogue(() => [json({ found: true }), new Uint8Array(4096), new Uint8Array(4096)]);
    // B reaches only the rogue
    hub.link(b.key, endless);
    const { f } = fetcherOn(b, { applicationId: app.applicationId }, () => registration({ applicationId: app.applicationId, bundleBlobId: blobId }), { maxBundleBytes: 5000 });
    f.start();
    await wait('the oversized stream penalized', () => b.net.penalties.some((p) => p.peer === endless && (p.detail ?? '').includes('sent more than the 5000 bytes')));
    expect(await b.apps.get(app.applicationId)).toBeNull();
    expect(await b.blobs.store.get(blobId)).toBeUndefined();
  });

  it('no member serves it: the problem names the application and the fix; installing it by hand ends the wait', async () => {
    const b = await node();
    const app = await bundle();
    const missing = 'ab'.repeat(32);
    const { f, ready } = fetcherOn(b, { applicationId: app.applicationId }, () => registration({ applicationId: app.applicationId, bundleBlobId: missing }));
    await node(); // a member that does not hold it
    hub.linkAll();
    f.start();
    await wait('unavailable', () => f.problem(CTX)?.reason === 'application_unavailable');
    const p = f.problem(CTX)!;
    expect(p.detail).toContain(`application ${app.applicationId} is not installed`);
    expect(p.detail).toContain(`no member serves its bundle ${missing}`);
    expect(p.detail).toContain('hearth app install-dev');
    await b.apps.installBytes(app.bytes, 'by hand');
    await wait('ready', () => ready.includes(CTX));
    expect(f.problem(CTX)).toBeUndefined();
  });

  it('a group naming no bundle: the problem says so and names the fix', async () => {
    const b = await node();
    const app = await bundle();
    const { f } = fetcherOn(b, { applicationId: app.applicationId }, () => registration({ applicationId: app.applicationId }));
    f.start();
    await wait('unavailable', () => f.problem(CTX) !== undefined);
    expect(f.problem(CTX)).toMatchObject({ reason: 'application_unavailable', detail: expect.stringContaining('names no bundle to fetch') });
    expect(f.problem(CTX)!.detail).toContain('hearth app install-dev <bundle.mpk>');
  });

  it('never installs a bundle of another application than the context names', async () => {
    const a = await node();
    const b = await node();
    const other = await bundle();
    const blobId = await installOn(a, other);
    const named = 'cd'.repeat(32);
    const { f } = fetcherOn(b, { applicationId: named }, () => registration({ applicationId: named, bundleBlobId: blobId }));
    hub.linkAll();
    f.start();
    await wait('invalid', () => f.problem(CTX)?.reason === 'application_unavailable');
    expect(f.problem(CTX)!.detail).toContain(`holds application ${other.applicationId}`);
    expect(await b.apps.get(other.applicationId)).toBeNull();
    expect(await b.blobs.store.get(blobId)).toBeUndefined();
  });
});

describe('an upgraded group brings its target version', () => {
  it('a member running v1 fetches the upgrade’s v2 from a member without blocking its calls; the status says so until it is installed', async () => {
    const { b, v1, blob1, blob2 } = await twoVersionsOnA();
    expect(await installOn(b, v1)).toBe(blob1);
    let reg = registration({ applicationId: v1.applicationId, bundleBlobId: blob1 });
    const { f } = fetcherOn(b, { applicationId: v1.applicationId, bundleBlobId: blob1 }, () => reg);
    f.start();
    // no upgrade: nothing is wanted
    await new Promise((r) => setTimeout(r, 200));
    expect(f.problem(CTX)).toBeUndefined();
    // the group is upgraded to v2, which no reachable member serves yet: the status names it, still not blocking
    reg = registration({ applicationId: v1.applicationId, bundleBlobId: blob1, upgradeTo: blob2 });
    f.ensure(CTX);
    await wait('the target is wanted', () => f.problem(CTX) !== undefined);
    expect(f.problem(CTX)!.detail).toContain(`the group's upgrade target, application ${v1.applicationId} bundle ${blob2}`);
    expect(f.problem(CTX)!.detail).toContain('runs its current version until it migrates');
    hub.linkAll();
    await wait('B installed v2', async () => (await b.apps.releases(v1.applicationId)).some((r) => r.bundleBlobId === blob2));
    await wait('nothing wanted any more', () => f.problem(CTX) === undefined);
    // the version B ran is still installed beside it
    expect((await b.apps.releases(v1.applicationId)).map((r) => r.version).sort()).toEqual(['1.0.0', '2.0.0']);
  });

  it('an aborted upgrade’s target is not fetched', async () => {
    const { b, v1, blob1, blob2 } = await twoVersionsOnA();
    await installOn(b, v1);
    const { f } = fetcherOn(b, { applicationId: v1.applicationId, bundleBlobId: blob1 }, () => registration({ applicationId: v1.applicationId, bundleBlobId: blob1, upgradeTo: blob2, aborted: true }));
    hub.linkAll();
    f.start();
    await new Promise((r) => setTimeout(r, 500));
    expect(f.problem(CTX)).toBeUndefined();
    expect((await b.apps.releases(v1.applicationId)).map((r) => r.bundleBlobId)).toEqual([blob1]);
  });
});
