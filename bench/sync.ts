/**
 * Benchmark (issue #13 §10, bench/sync): context state between node processes on loopback, running
 * the kv-store test application. This process only drives the nodes over HTTP.
 *
 * 1. Write → visible: a JSON-RPC `set` on A, then `get` on B polled until it answers the new value
 *    (every 2 ms); the time runs from sending the `set` to the first matching `get`, so it includes
 *    A's own write and the polling granularity. BENCH_SYNC_N writes (default 500). Goals: p50 < 200 ms,
 *    p99 < 1 s.
 * 2. Catch-up: B stopped, A makes BENCH_SYNC_MISSED writes (default 10,000), B started again; the
 *    time from B's start (process spawn) until B answers the last value, and from its first answer on
 *    HTTP, so the node's own start-up can be told apart.
 */
import { startCluster, eventually } from '../test/helpers/cluster.ts';
import { makeBundle } from '../test/helpers/bundles.ts';
import { buildTestApp } from '../test/helpers/wasm-apps.ts';

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

export interface SyncBenchResult {
  writes: number;
  p50Ms: number;
  p99Ms: number;
  missed: number;
  catchUpMs: number;
  catchUpAfterStartMs: number;
}

export async function benchSync(writes = Number(process.env.BENCH_SYNC_N ?? 500), missed = Number(process.env.BENCH_SYNC_MISSED ?? 10_000)): Promise<SyncBenchResult> {
  const cluster = await startCluster(2);
  const [a, b] = cluster.nodes as [(typeof cluster.nodes)[number], (typeof cluster.nodes)[number]];
  try {
    const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv.bench-sync' });
    let appId = '';
    for (const n of cluster.nodes) appId = (await n.client.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
    const ns = (await a.client.namespaces.create({ applicationId: appId })).namespaceId;
    const ctx = (await a.client.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
    await b.client.invitations.joinNamespace(ns, (await a.client.invitations.inviteToNamespace(ns)).invitation);
    await b.client.groups.sync(ns);
    await eventually('B sees the context', async () => (await b.client.groups.contexts(ns)).some((x) => x.contextId === ctx), 30_000);
    await b.client.contexts.join(ctx);
    await eventually('B caught up', async () => (await b.client.contexts.syncStatus(ctx)).caughtUp, 30_000).catch(async (e: unknown) => {
      throw new Error(`${(e as Error).message}: ${JSON.stringify(await b.client.contexts.syncStatus(ctx))}`);
    });

    const times: number[] = [];
    for (let i = 0; i < writes + 20; i++) {
      const value = `v${i}`;
      const t0 = performance.now();
      await a.client.rpc.execute(ctx, 'set', { key: 'bench', value });
      while ((await b.client.rpc.execute(ctx, 'get', { key: 'bench' })) !== value) await new Promise((r) => setTimeout(r, 2));
      if (i >= 20) times.push(performance.now() - t0); // the first writes warm connections and code up
    }
    times.sort((x, y) => x - y);

    await b.stop();
    for (let i = 0; i < missed; i++) await a.client.rpc.execute(ctx, 'set', { key: `missed${i % 100}`, value: String(i) });
    const last = String(missed - 1);
    const lastKey = `missed${(missed - 1) % 100}`;
    const t0 = performance.now();
    await b.start();
    const up = performance.now();
    await eventually('B caught up with the missed writes', async () => (await b.client.rpc.execute(ctx, 'get', { key: lastKey })) === last, 600_000);
    const done = performance.now();
    return { writes, p50Ms: pct(times, 0.5), p99Ms: pct(times, 0.99), missed, catchUpMs: done - t0, catchUpAfterStartMs: done - up };
  } finally {
    await cluster.destroy();
  }
}

export function printSync(r: SyncBenchResult): void {
  const f = (n: number) => n.toFixed(1);
  console.log(`  write on A → read back on B (${r.writes} writes, 2 processes on loopback):`);
  console.log(`    p50 ${f(r.p50Ms)} ms (goal < 200) ${r.p50Ms < 200 ? 'met' : 'NOT met'}, p99 ${f(r.p99Ms)} ms (goal < 1000) ${r.p99Ms < 1000 ? 'met' : 'NOT met'}`);
  console.log(`  catch-up of a node that missed ${r.missed} deltas: ${(r.catchUpMs / 1000).toFixed(1)} s from its start, ${(r.catchUpAfterStartMs / 1000).toFixed(1)} s after it answered HTTP`);
}

if (import.meta.url === `file://${process.argv[1]}`) printSync(await benchSync());
