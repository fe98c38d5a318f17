/**
 * `npm run bench`: every benchmark, then one table of the figures against their baselines from this
 * run (docs/performance.md explains each and how to read them). The machine's load average is
 * printed with each section: on a shared machine, run it when the machine is quiet, and more than
 * once. BENCH_ONLY=startup,http,rpc,outside,sse,blobs,durability,network,sync,sync-star,backpressure,restart,nat,scale runs
 * a subset (nat needs root: network namespaces; skipped, saying why, without).
 */
import { benchBackpressure } from './backpressure.ts';
import { benchBlobs } from './blobs.ts';
import { benchDurability } from './durability.ts';
import { ensureBuilt, printTable } from './harness.ts';
import { benchHttp } from './http.ts';
import { benchRpc } from './rpc.ts';
import { benchRpcOutside } from './rpc-outside.ts';
import { benchSse } from './sse.ts';
import { benchStartup } from './startup.ts';
import { benchRestart } from './restart.ts';
import { benchNat, printNat } from './nat.ts';
import { benchNetwork, printNetwork } from './network.ts';
import { benchSync, printSync } from './sync.ts';
import { benchSyncStar, printSyncStar } from './sync-star.ts';
import { benchScale, printScale } from './scale.ts';

const all: Record<string, () => Promise<unknown>> = {
  startup: benchStartup,
  http: benchHttp,
  rpc: () => benchRpc(),
  outside: () => benchRpcOutside(),
  sse: () => benchSse(),
  blobs: () => benchBlobs(),
  durability: () => benchDurability(),
  network: async () => printNetwork(await benchNetwork()),
  sync: async () => printSync(await benchSync()),
  'sync-star': async () => printSyncStar(await benchSyncStar()),
  backpressure: () => benchBackpressure(),
  restart: () => benchRestart(),
  nat: async () => printNat(await benchNat()),
  scale: async () => printScale(await benchScale()),
};
const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
for (const name of only ?? []) if (!(name in all)) throw new Error(`BENCH_ONLY: no benchmark named '${name}' (${Object.keys(all).join(', ')})`);

await ensureBuilt();
for (const [name, bench] of Object.entries(all)) {
  if (only && !only.includes(name)) continue;
  await bench();
  console.log('');
}
console.log('# summary (hearth against its baseline, measured in this run)');
printTable();
