/**
 * Benchmark (issue 23 §5, bench/sync-star): time for a restarted node to converge, in a star (B and
 * C bootstrap from A alone) against a full mesh (the baseline, measured in the same run). Three node
 * processes on loopback running the kv-store test application; this process only drives them.
 *
 * C is stopped; B makes BENCH_STAR_MISSED writes (default 2,000, 8 at a time); C is started again
 * while B goes on writing BENCH_STAR_DURING more (default 200, 2 at a time), which reach C relayed by
 * A in the star. Measured: from C's start (process spawn) until A, B and C name the same state hash
 * with every write in, and the slowest of the reads C answered meanwhile (one `get` every 50 ms).
 */
import { eventually, joinContext, startCluster, type ClusterNode } from '../test/helpers/cluster.ts';
import { makeBundle } from '../test/helpers/bundles.ts';
import { buildTestApp } from '../test/helpers/wasm-apps.ts';

export interface StarRun {
  topology: 'mesh' | 'star';
  convergeMs: number;
  slowestReadMs: number;
  reads: number;
}

async function run(topology: 'mesh' | 'star', missed: number, during: number): Promise<StarRun> {
  const cluster = await startCluster(3, { star: topology === 'star' });
  const [a, b, c] = cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
  try {
    const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: `com.hearth.kv.bench-${topology}` });
    let appId = '';
    for (const n of cluster.nodes) appId = (await n.client.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
    const ns = (await a.client.namespaces.create({ applicationId: appId })).namespaceId;
    const ctx = (await a.client.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
    await joinContext(a, b, ns, ctx);
    await joinContext(a, c, ns, ctx);
    const hash = async (n: ClusterNode) => (await n.client.contexts.get(ctx)).contextStateHash;
    const converged = async () => {
      const hs = await Promise.all([a, b, c].map(hash));
      return hs.every((h) => h === hs[0] && h !== 'f'.repeat(64));
    };
    await eventually('the cluster converged', converged, 60_000);
    const writes = async (prefix: string, total: number, parallel: number) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: parallel }, async () => {
          for (let i = next++; i < total; i = next++) await b.client.rpc.execute(ctx, 'set', { key: `${prefix}${i}`, value: String(i) });
        }),
      );
    };
    await c.stop();
    await writes('missed', missed, 8);
    const t0 = performance.now();
    await c.start();
    const reads: number[] = [];
    let done = false;
    const reader = (async () => {
      while (!done) {
        const r0 = performance.now();
        await c.client.rpc.execute(ctx, 'get', { key: 'missed0' }).catch(() => undefined);
        reads.push(performance.now() - r0);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      await writes('during', during, 2);
      await eventually('C converged', converged, 600_000);
    } finally {
      done = true;
      await reader;
    }
    return { topology, convergeMs: performance.now() - t0, slowestReadMs: Math.max(0, ...reads), reads: reads.length };
  } finally {
    await cluster.destroy();
  }
}

export async function benchSyncStar(missed = Number(process.env.BENCH_STAR_MISSED ?? 2_000), during = Number(process.env.BENCH_STAR_DURING ?? 200)): Promise<StarRun[]> {
  return [await run('mesh', missed, during), await run('star', missed, during)];
}

export function printSyncStar(runs: StarRun[]): void {
  const [mesh, star] = runs as [StarRun, StarRun];
  for (const r of runs) {
    console.log(`  ${r.topology}: C converged ${(r.convergeMs / 1000).toFixed(1)} s after its start; slowest of ${r.reads} reads on C meanwhile ${r.slowestReadMs.toFixed(0)} ms`);
  }
  console.log(`  star / mesh convergence: ${(star.convergeMs / mesh.convergeMs).toFixed(2)}×`);
}

if (import.meta.url === `file://${process.argv[1]}`) printSyncStar(await benchSyncStar());
