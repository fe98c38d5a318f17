/**
 * Benchmark (issue #24 "Scale, on this machine"; docs/network.md "Scale"): BENCH_SCALE_NODES node
 * processes (default 20) in one context, BENCH_SCALE_WRITES writes (default 2,000,
 * BENCH_SCALE_PARALLEL in flight at once, default 8) spread over every node; the time from the last
 * acknowledged write to the same state hash everywhere, every key read back on every node, memory
 * per node and the traffic per write (test/helpers/scale.ts does the run). The baseline, measured
 * in the same run, is the same writes on BENCH_SCALE_BASELINE nodes (default 3): the ratio of the
 * traffic per node per write says whether it grows with the nodes or stays with the mesh.
 */
import { describeScale, runScale, type ScaleResult } from '../test/helpers/scale.ts';

export async function benchScale(
  nodes = Number(process.env.BENCH_SCALE_NODES ?? 20),
  writes = Number(process.env.BENCH_SCALE_WRITES ?? 2_000),
  parallel = Number(process.env.BENCH_SCALE_PARALLEL ?? 8),
  baseline = Number(process.env.BENCH_SCALE_BASELINE ?? 3),
): Promise<ScaleResult[]> {
  const log = (line: string) => console.log(`  … ${line}`);
  const runs: ScaleResult[] = [];
  for (const n of baseline > 0 ? [baseline, nodes] : [nodes]) {
    runs.push(await runScale({ nodes: n, writes, parallel, convergeTimeoutMs: 300_000, callTimeoutMs: 60_000, log }));
  }
  return runs;
}

export function printScale(runs: ScaleResult[]): void {
  for (const r of runs) for (const line of describeScale(r)) console.log(`  ${line}`);
  if (runs.length === 2) {
    const [base, big] = runs as [ScaleResult, ScaleResult];
    const perNode = (r: ScaleResult) => r.perWrite.bytesOut / r.nodes;
    console.log(`  connection bytes per node per write, ${big.nodes} nodes / ${base.nodes} nodes: ${(perNode(big) / perNode(base)).toFixed(2)}× (nodes ${(big.nodes / base.nodes).toFixed(1)}×)`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) printScale(await benchScale());
