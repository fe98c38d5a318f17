/**
 * Issue #13 end to end: three node processes on 127.0.0.1 running the kv-store test application
 * (the quick start's example app), driven through the SDK. A joiner gets the existing state; writes
 * on each node reach the others with their events; interleaved and concurrent writes converge to
 * one root and the same entries; a node killed mid-stream catches up when it returns; the sync
 * status says what is going on; `hearth context status --wait` waits for a catch-up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStream } from '../../../src/client/index.ts';
import { CliUser } from '../../helpers/cli.ts';
import { eventually, joinContext, kvContextOn, startCluster, type Cluster, type ClusterNode } from '../../helpers/cluster.ts';
import { ADMIN_PASSWORD, ADMIN_USER } from '../../helpers/node.ts';

let cluster: Cluster;
let a: ClusterNode, b: ClusterNode, c: ClusterNode;
let appId: string;
let ns: string;
let ctx: string;

const entries = (n: ClusterNode) => n.client.rpc.execute<Record<string, string>>(ctx, 'entries', {});
const hash = async (n: ClusterNode) => (await n.client.contexts.get(ctx)).contextStateHash;
async function converged(nodes: ClusterNode[]): Promise<boolean> {
  const [hashes, all] = await Promise.all([Promise.all(nodes.map(hash)), Promise.all(nodes.map(entries))]);
  return hashes.every((h) => h === hashes[0] && h !== 'f'.repeat(64)) && all.every((e) => JSON.stringify(e) === JSON.stringify(all[0]));
}

beforeAll(async () => {
  cluster = await startCluster(3);
  [a, b, c] = cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
  ({ appId, ns, ctx } = await kvContextOn(cluster.nodes, a, 'com.hearth.kv.sync'));
  for (let i = 0; i < 5; i++) await a.client.rpc.execute(ctx, 'set', { key: `seed${i}`, value: `v${i}` });
}, 180_000);

afterAll(async () => {
  await cluster?.destroy();
});

describe('context state across three node processes', { timeout: 120_000 }, () => {
  it('a joiner gets the existing state and reports itself caught up', async () => {
    const before = await b.client.contexts.get(ctx).catch(() => undefined);
    expect(before).toBeUndefined(); // B does not hold the context before it joins
    await joinContext(a, b, ns, ctx);
    await eventually('B holds the state', async () => (await b.client.rpc.execute(ctx, 'get', { key: 'seed4' })) === 'v4');
    await eventually('B is caught up', async () => (await b.client.contexts.syncStatus(ctx)).caughtUp);
    const status = await b.client.contexts.syncStatus(ctx);
    expect(status).toMatchObject({ behind: 0, pending: 0, quarantined: 0 });
    const aKey = (await a.client.http.data<{ publicKey: string }>('/admin-api/identity')).publicKey;
    expect(status.peers.map((p) => p.peer)).toContain(aKey); // who B last heard from: A, which it synced with
    expect(await hash(b)).toBe(await hash(a));
    await joinContext(a, c, ns, ctx);
    await eventually('C is caught up', async () => (await c.client.contexts.syncStatus(ctx)).caughtUp && (await converged([a, b, c])));
    // a context nobody wrote to yet (the application keeps an empty row): its snapshot lands too
    const fresh = (await a.client.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
    await eventually('B lists the fresh context', async () => (await b.client.groups.contexts(ns)).some((x) => x.contextId === fresh));
    await b.client.contexts.join(fresh);
    await eventually('B holds the fresh context', async () => (await b.client.contexts.get(fresh)).contextStateHash === (await a.client.contexts.get(fresh)).contextStateHash);
  });

  it('writes on each node reach the others, and their events reach the others’ subscribers', async () => {
    const stream = new EventStream(c.client.http);
    const frames: unknown[] = [];
    stream.on('frame', (f) => frames.push(f));
    const open = new Promise<void>((resolve) => stream.on('connect', () => resolve()));
    await stream.subscribe({ contextIds: [ctx] });
    stream.start();
    try {
      await open;
      await a.client.rpc.execute(ctx, 'set', { key: 'from-a', value: '1' });
      await b.client.rpc.execute(ctx, 'set', { key: 'from-b', value: '2' });
      await eventually('C has both', async () => (await entries(c))['from-b'] === '2' && (await entries(c))['from-a'] === '1');
      await eventually('C’s subscribers saw both Inserted events', async () => {
        const inserted = frames.filter((f) => JSON.stringify(f).includes('StateMutation') && JSON.stringify(f).includes('"Inserted"'));
        return inserted.length >= 2;
      });
    } finally {
      stream.stop();
    }
    await eventually('all three agree', () => converged([a, b, c]));
  });

  it('interleaved and concurrent writes converge to one root and the same entries', async () => {
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 10; i++) {
      for (const [n, who] of [[a, 'a'], [b, 'b'], [c, 'c']] as const) {
        writes.push(n.client.rpc.execute(ctx, 'set', { key: `k${i}`, value: `${who}${i}` })); // the same keys from every node
        writes.push(n.client.rpc.execute(ctx, 'set', { key: `${who}-only-${i}`, value: String(i) }));
      }
    }
    await Promise.all(writes);
    await eventually('all three agree', () => converged([a, b, c]), 60_000);
    const e = await entries(a);
    for (let i = 0; i < 10; i++) for (const who of ['a', 'b', 'c']) expect(e[`${who}-only-${i}`]).toBe(String(i)); // no write lost
  });

  it('a node killed mid-stream catches up when it returns', async () => {
    const writing = (async () => {
      for (let i = 0; i < 40; i++) await a.client.rpc.execute(ctx, 'set', { key: `stream${i}`, value: String(i) });
    })();
    await new Promise((r) => setTimeout(r, 200));
    await c.kill();
    await writing;
    await b.client.rpc.execute(ctx, 'set', { key: 'while-c-down', value: 'yes' });
    await c.start();
    await eventually('C caught up', async () => (await entries(c))['stream39'] === '39' && (await converged([a, b, c])), 60_000);
  });

  it('hearth context status says caught up, and --wait waits for it', async () => {
    const cli = await CliUser.create(b.url);
    try {
      await cli.login(ADMIN_USER, ADMIN_PASSWORD);
      await a.client.rpc.execute(ctx, 'set', { key: 'for-the-cli', value: 'x' });
      const waited = await cli.json<{ sync: { caughtUp: boolean } }>(['context', 'status', ctx, '--wait', '--within', '30']);
      expect(waited.sync.caughtUp).toBe(true);
      const human = await cli.human(['context', 'status', ctx]);
      expect(human).toMatch(/caught up:\s+yes/);
      expect(human).toMatch(/peers:\s+[0-9a-f]{12}…/);
    } finally {
      await cli.destroy();
    }
  });
});

