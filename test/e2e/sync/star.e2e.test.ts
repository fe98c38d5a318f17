/**
 * Issue 23 §5 end to end: three node processes in a star (B and C bootstrap from A alone, so B and
 * C are not connected to each other). C is stopped while B writes; when C comes back it converges
 * with A and B — also on the deltas B keeps writing during its catch-up, which reach C relayed by A
 * from a publisher C is not connected to — and every read on C during the catch-up answers within a
 * bound. (Time to converge, star against full mesh: bench/sync-star.ts, docs/sync.md "Measured".)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, joinContext, kvContextOn, startCluster, type Cluster, type ClusterNode } from '../../helpers/cluster.ts';

/** writes C misses while it is down, and writes B makes while C catches up */
const MISSED = 2_000;
const DURING = 100;
/** a read on C during catch-up must answer within this (a loaded 2-core machine; normal reads take milliseconds) */
const READ_BOUND_MS = 5_000;

let cluster: Cluster;
let a: ClusterNode, b: ClusterNode, c: ClusterNode;
let ns: string;
let ctx: string;

const hash = async (n: ClusterNode) => (await n.client.contexts.get(ctx)).contextStateHash;
const get = (n: ClusterNode, key: string) => n.client.rpc.execute<string | null>(ctx, 'get', { key });
async function converged(nodes: ClusterNode[]): Promise<boolean> {
  const hashes = await Promise.all(nodes.map(hash));
  return hashes.every((h) => h === hashes[0] && h !== 'f'.repeat(64));
}
const peerKeys = async (n: ClusterNode) => ((await n.client.admin.networkStatus()).connections as { peerKey: string }[]).map((x) => x.peerKey);
const keyOf = async (n: ClusterNode) => (await n.client.http.data<{ publicKey: string }>('/admin-api/identity')).publicKey;

/** `total` writes on `n`, `parallel` at a time */
async function writes(n: ClusterNode, prefix: string, total: number, parallel = 8): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let i = next++; i < total; i = next++) await n.client.rpc.execute(ctx, 'set', { key: `${prefix}${i}`, value: String(i) });
    }),
  );
}

beforeAll(async () => {
  cluster = await startCluster(3, { star: true });
  [a, b, c] = cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
  ({ ns, ctx } = await kvContextOn(cluster.nodes, a, 'com.hearth.kv.star'));
  await a.client.rpc.execute(ctx, 'set', { key: 'seed', value: 'a' });
  await joinContext(a, b, ns, ctx);
  await joinContext(a, c, ns, ctx);
  await eventually('the star converged', () => converged([a, b, c]), 60_000);
}, 180_000);

afterAll(async () => {
  await cluster?.destroy();
});

it('C restarted after missing many writes converges, and its reads during catch-up answer within a bound', { timeout: 300_000 }, async () => {
  const [bKey, cKey] = await Promise.all([keyOf(b), keyOf(c)]);
  expect(await peerKeys(b)).not.toContain(cKey); // a star: B and C meet only through A
  await c.stop();
  await writes(b, 'missed', MISSED);
  await c.start();
  expect(await peerKeys(c)).not.toContain(bKey);

  const reads: number[] = [];
  let done = false;
  const reader = (async () => {
    while (!done) {
      const t0 = Date.now();
      await c.client.rpc.execute(ctx, 'get', { key: 'seed' });
      reads.push(Date.now() - t0);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  try {
    await writes(b, 'during', DURING, 2); // relayed to C by A while it catches up
    await eventually('C converged with A and B', () => converged([a, b, c]), 120_000);
  } finally {
    done = true;
    await reader;
  }
  // the same state hash on all three, and the first and last of each run of writes are there
  for (const key of ['seed', 'missed0', `missed${MISSED - 1}`, 'during0', `during${DURING - 1}`]) expect(await get(c, key)).not.toBeNull();
  expect(reads.length).toBeGreaterThan(0);
  expect(Math.max(...reads)).toBeLessThan(READ_BOUND_MS);
  expect(await c.client.contexts.syncStatus(ctx)).toMatchObject({ pending: 0 });
});
