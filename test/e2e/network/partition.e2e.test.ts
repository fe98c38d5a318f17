/**
 * Issue #13 item 9, a real partition: three node processes, each in a network namespace this test
 * makes (test/helpers/netns.ts: HTTP on a control link to the test, the swarm on a bridge between
 * the namespaces), running the kv-store test application, driven through the SDK. A is cut off from
 * B and C; both sides write (the same keys and their own) and change governance; each node's sync
 * status tells the truth meanwhile (A: no peers; B and C: caught up with each other); then the link
 * comes back and all three converge with no write lost, governance agreed and the status caught up.
 * Skipped, saying why, where namespaces cannot be made (not root, no `ip`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStream } from '../../../src/client/index.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { eventually, joinContext, type ClusterNode } from '../../helpers/cluster.ts';
import { haltLabNode } from '../../helpers/nat-lab.ts';
import { NetnsLab, netnsCluster } from '../../helpers/netns.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

const lab = new NetnsLab('part', 3);
/** why namespaces could not be made, when they could not */
let unavailable: string | undefined;
let home: string | undefined;
let nodes: ClusterNode[] = [];
let a: ClusterNode, b: ClusterNode, c: ClusterNode;
const nodeKey = new Map<ClusterNode, string>();
const account = new Map<ClusterNode, string>();
let ns: string;
let ctx: string;
/** SyncStatus frames A's event stream delivered, with when they arrived */
const aFrames: { at: number; state: string }[] = [];
let aStream: EventStream | undefined;

const entries = (n: ClusterNode) => n.client.rpc.execute<Record<string, string>>(ctx, 'entries', {});
const status = (n: ClusterNode) => n.client.contexts.syncStatus(ctx);
const reasons = async (n: ClusterNode) => (await status(n)).reasons.map((r) => r.reason);
const peerCount = async (n: ClusterNode) => (await n.client.admin.peers()).count;
const heardAt = async (n: ClusterNode, from: ClusterNode) => {
  const seen = (await status(n)).peers.find((p) => p.peer === nodeKey.get(from));
  return seen ? Date.parse(seen.lastHeardAt) : undefined;
};

/** What must be equal everywhere: the context's root and entries, and the namespace's governance. */
async function view(n: ClusterNode): Promise<string> {
  const [info, e, meta, members] = await Promise.all([
    n.client.groups.info(ns),
    entries(n),
    n.client.settings.groupMetadata(ns),
    Promise.all(nodes.map((m) => n.client.settings.memberMetadata(ns, account.get(m)!))),
  ]);
  const root = (await n.client.contexts.get(ctx)).contextStateHash;
  return JSON.stringify({ root, e, governance: info.groupStateHash, meta: meta?.name ?? null, members: members.map((m) => m?.name ?? null) });
}

async function converged(): Promise<boolean> {
  const views = await Promise.all(nodes.map(view));
  return views.every((v) => v === views[0]) && !views[0]!.includes(`"root":"${'f'.repeat(64)}"`);
}

/** Writes on `n`: its own keys `<who>-<i>` and the shared keys `shared<i>`, for i in [from, to). */
async function write(n: ClusterNode, who: string, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) {
    await n.client.rpc.execute(ctx, 'set', { key: `${who}-${i}`, value: `${who}${i}` });
    await n.client.rpc.execute(ctx, 'set', { key: `shared${i}`, value: who });
  }
}

beforeAll(async () => {
  unavailable = await lab.setUp();
  if (unavailable !== undefined) {
    console.warn(`network/partition.e2e.test.ts skipped: cannot create network namespaces (${unavailable}); the partition is only tested inside them`);
    return;
  }
  home = await mkdtemp(join(tmpdir(), 'hearth-partition-'));
  nodes = await netnsCluster(lab, home);
  [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode];
  await Promise.all(nodes.map((n) => n.start()));
  const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv.partition' });
  let appId = '';
  for (const n of nodes) {
    appId = (await n.client.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
    const id = await n.client.http.data<{ publicKey: string; accountId: string }>('/admin-api/identity');
    nodeKey.set(n, id.publicKey);
    account.set(n, id.accountId);
  }
  ns = (await a.client.namespaces.create({ applicationId: appId })).namespaceId;
  ctx = (await a.client.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
  await joinContext(a, b, ns, ctx);
  await joinContext(a, c, ns, ctx);
  await a.client.groups.setMemberRole(ns, account.get(b)!, 'Admin'); // so B may change the group's metadata too
  await eventually('B is an admin on B', async () => (await b.client.groups.members(ns)).find((m) => m.identity === account.get(b))?.role === 'Admin');
  await write(a, 'seed', 0, 3);
  aStream = new EventStream(a.client.http);
  aStream.on('frame', (f) => {
    const frame = f as { type?: string; data?: { syncState?: { state?: string } } };
    const state = frame.data?.syncState?.state;
    if (frame.type === 'SyncStatus' && state) aFrames.push({ at: Date.now(), state });
  });
  const open = new Promise<void>((resolve) => aStream!.on('connect', () => resolve()));
  await aStream.subscribe({ contextIds: [ctx] });
  aStream.start();
  await open;
}, 120_000);

afterAll(async () => {
  aStream?.stop();
  // SIGTERM, then SIGKILL past 10 s: a node that hangs on stop must not keep its namespace alive
  await Promise.allSettled(nodes.map(haltLabNode));
  await lab.tearDown();
  if (home) await rm(home, { recursive: true, force: true });
}, 60_000);

describe('a network partition between node processes', { timeout: 90_000 }, () => {
  const skipUnlessNamespaces = (t: { skip: (condition: boolean, note?: string) => void }) => t.skip(unavailable !== undefined, `cannot create network namespaces: ${unavailable}`);
  /** when A's link went down, and when the nodes had noticed */
  let cutAt = 0;
  let noticedAt = 0;

  it('three nodes, each in its own namespace, share a context and agree', async (t) => {
    skipUnlessNamespaces(t);
    for (const n of nodes) await eventually(`${n.name} sees two peers`, async () => (await peerCount(n)) === 2);
    await eventually('all three agree', converged, 30_000);
    for (const n of nodes) {
      expect(await status(n)).toMatchObject({ caughtUp: true, behind: 0, pending: 0, quarantined: 0 });
      expect(await reasons(n)).not.toContain('no_peers');
    }
    expect(a.url).toContain(lab.hosts[0]!.control); // the API is on the control link, not loopback
  });

  it('cut off, each side keeps writing and says what it knows: A has no peers, B and C have each other', async (t) => {
    skipUnlessNamespaces(t);
    cutAt = Date.now();
    await lab.cut(0);
    // writes while the old connections still look alive: their gossip goes into a dead link
    await Promise.all([write(a, 'a', 0, 5), write(b, 'b', 0, 5), write(c, 'c', 0, 3)]);
    await a.client.settings.setGroupMetadata(ns, { name: 'west', data: {} });
    await a.client.settings.setMemberMetadata(ns, account.get(a)!, { name: 'a-side', data: {} });
    // the connections die when their pings go unanswered (libp2p's connection monitor)
    await eventually('A has no peers', async () => (await peerCount(a)) === 0 && (await reasons(a)).includes('no_peers'), 40_000);
    await eventually('B and C have only each other', async () => (await peerCount(b)) === 1 && (await peerCount(c)) === 1, 40_000);
    noticedAt = Date.now();
    // more writes, now that everyone knows
    await Promise.all([write(a, 'a', 5, 10), write(b, 'b', 5, 10), write(c, 'c', 3, 10)]);
    await b.client.settings.setGroupMetadata(ns, { name: 'east', data: {} });
    await b.client.settings.setMemberMetadata(ns, account.get(b)!, { name: 'b-side', data: {} });
    await c.client.settings.setMemberMetadata(ns, account.get(c)!, { name: 'c-side', data: {} });
    await eventually('B and C hold each other’s writes', async () => (await entries(b))['c-9'] === 'c9' && (await entries(c))['b-9'] === 'b9', 20_000);
    await eventually('B and C agree', async () => (await view(b)) === (await view(c)), 20_000);

    // A: caught up with all it has heard of, and saying it has no peer to hear from
    const aStatus = await status(a);
    expect(aStatus).toMatchObject({ caughtUp: true, behind: 0 });
    expect(aStatus.reasons.map((r) => r.reason)).toContain('no_peers');
    for (const other of [b, c]) expect((await heardAt(a, other)) ?? 0).toBeLessThan(noticedAt);
    // B and C: caught up with each other, heard from each other during the partition, not from A
    for (const [n, other] of [[b, c], [c, b]] as const) {
      expect(await status(n)).toMatchObject({ caughtUp: true, behind: 0, pending: 0 });
      expect(await reasons(n)).not.toContain('no_peers');
      expect((await heardAt(n, other)) ?? 0).toBeGreaterThan(cutAt);
      expect((await heardAt(n, a)) ?? 0).toBeLessThan(noticedAt);
    }
    // the partition is real: neither side holds anything the other wrote after the cut
    const [onA, onB] = [Object.keys(await entries(a)), Object.keys(await entries(b))];
    expect(onA.filter((k) => k.startsWith('b-') || k.startsWith('c-'))).toEqual([]);
    expect(onB.filter((k) => k.startsWith('a-'))).toEqual([]);
    expect((await a.client.settings.groupMetadata(ns))?.name).toBe('west');
    expect((await b.client.settings.groupMetadata(ns))?.name).toBe('east');
    expect(await b.client.settings.memberMetadata(ns, account.get(a)!)).toBeNull();
  });

  it('healed, all three converge: the same root and entries, every write kept, governance agreed, caught up', async (t) => {
    skipUnlessNamespaces(t);
    const healAt = Date.now();
    await lab.heal(0);
    for (const n of nodes) await eventually(`${n.name} sees two peers again`, async () => (await peerCount(n)) === 2, 40_000);
    await eventually('all three agree', converged, 30_000);
    const [e, root] = [await entries(a), (await a.client.contexts.get(ctx)).contextStateHash];
    for (const who of ['a', 'b', 'c']) for (let i = 0; i < 10; i++) expect(e[`${who}-${i}`], `${who}-${i}`).toBe(`${who}${i}`); // no write lost
    for (let i = 0; i < 10; i++) expect(['a', 'b', 'c']).toContain(e[`shared${i}`]); // one writer's value, the same everywhere
    for (const n of nodes) expect((await n.client.contexts.get(ctx)).contextStateHash).toBe(root);
    // governance: both sides' member metadata kept; the concurrent group metadata settled the same way everywhere
    for (const n of nodes) {
      const names = await Promise.all(nodes.map(async (m) => (await n.client.settings.memberMetadata(ns, account.get(m)!))?.name));
      expect(names).toEqual(['a-side', 'b-side', 'c-side']);
      expect(['west', 'east']).toContain((await n.client.settings.groupMetadata(ns))?.name);
    }
    // the status: caught up, with peers again, having heard from the other side since the heal
    for (const n of nodes) {
      await eventually(`${n.name} is caught up`, async () => (await status(n)).caughtUp && !(await reasons(n)).includes('no_peers'), 20_000);
      expect(await status(n)).toMatchObject({ behind: 0, pending: 0, quarantined: 0 });
    }
    for (const other of [b, c]) expect((await heardAt(a, other)) ?? 0).toBeGreaterThanOrEqual(healAt);
    expect((await heardAt(b, a)) ?? 0).toBeGreaterThanOrEqual(healAt);
    // A's subscribers saw it catch up: a SyncStatus frame leaving idle for a pull after the heal
    expect(aFrames.some((f) => f.at >= healAt && f.state === 'syncing')).toBe(true);
  });
});
