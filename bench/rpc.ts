/**
 * Benchmark (issue #14): JSON-RPC `execute` of a key-value application (test/apps/kv_flat.ts: its
 * ABI, like the reference SDK's, marks no method read-only; each call touches a constant number of
 * keys) with 1k and then 100k keys in the context, against a bare node:http server answering a
 * POST, both driven by the same external load generator in the same run.
 *
 * - `get` of a random existing key at saturation (CONNECTIONS): goal >= 0.4 of bare.
 * - `set` (update) of a random existing key at saturation: throughput and ratio, reported.
 * - `set` latency with one connection (no queueing behind other calls on the context's write
 *   lock: what one writer waits): goal p50 < 5 ms at 100k keys (autocannon's percentiles are whole
 *   milliseconds, so the mean is printed too).
 */
import { makeBundle } from '../test/helpers/bundles.ts';
import { buildTestApp } from '../test/helpers/wasm-apps.ts';
import { CONNECTIONS, fmtRps, loadNote, measure, rows, startBare, startNode, type BenchNode, type LoadResult } from './harness.ts';

const PREFIX = 'k';
const FILL_BATCH = 10_000;

async function kvContext(node: BenchNode): Promise<string> {
  const c = node.client;
  const bundle = await makeBundle({ wasm: await buildTestApp('kv_flat'), package: 'com.hearth.bench.kvflat' });
  const appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
  const ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
  return (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
}

/** Fills the context up to `keys` keys (`k0`…), in calls of FILL_BATCH keys. */
async function fillTo(node: BenchNode, contextId: string, keys: number): Promise<void> {
  let have = Number(await node.client.rpc.execute(contextId, 'len', {}));
  while (have < keys) {
    const count = Math.min(FILL_BATCH, keys - have);
    have = Number(await node.client.rpc.execute(contextId, 'fill', { prefix: PREFIX, from: have, count }));
  }
}

export async function benchRpc(sizes = (process.env.BENCH_RPC_KEYS ?? '1000,100000').split(',').map(Number)): Promise<void> {
  console.log(`# JSON-RPC execute, kv app (${CONNECTIONS} connections; ${loadNote()})`);
  const node = await startNode();
  const bare = await startBare();
  try {
    const contextId = await kvContext(node);
    const headers = { authorization: `Bearer ${node.token}` };
    const url = `${node.url}/jsonrpc`;
    const bareRpc = (method: 'get' | 'set') => ({ url: `${bare.url}/jsonrpc`, rpc: { contextId, method, keyPrefix: PREFIX, keys: 1000 } });
    for (const keys of sizes) {
      await fillTo(node, contextId, keys);
      const n = keys >= 1000 ? `${keys / 1000}k` : String(keys);
      const rpc = (method: 'get' | 'set') => ({ url, headers, check: 'jsonrpc' as const, rpc: { contextId, method, keyPrefix: PREFIX, keys } });
      const baseline = await measure(bareRpc('get'));
      const get = await measure(rpc('get'));
      const set = await measure(rpc('set'));
      const setOne = await measure({ ...rpc('set'), connections: 1 });
      const ok = (r: LoadResult) => r.errors === 0;
      console.log(`${n} keys: bare POST ${fmtRps(baseline)}; get ${fmtRps(get)}, errors ${get.errors}; set ${fmtRps(set)}, errors ${set.errors}; set, 1 connection: mean ${setOne.meanMs.toFixed(2)} ms, p50 ${setOne.p50ms} ms, p99 ${setOne.p99ms} ms`);
      rows.push({ measure: `JSON-RPC get, ${n} keys`, hearth: fmtRps(get), baseline: fmtRps(baseline), ratio: get.rps / baseline.rps, goal: '>= 0.40', met: get.rps / baseline.rps >= 0.4 && ok(get) });
      rows.push({ measure: `JSON-RPC set, ${n} keys`, hearth: fmtRps(set), baseline: fmtRps(baseline), ratio: set.rps / baseline.rps, goal: '(reported)', met: ok(set) ? undefined : false });
      rows.push({ measure: `JSON-RPC set p50, 1 connection, ${n} keys`, hearth: `p50 ${setOne.p50ms} ms, mean ${setOne.meanMs.toFixed(2)} ms, p99 ${setOne.p99ms} ms`, baseline: '-', goal: '< 5 ms', met: setOne.p50ms < 5 && ok(setOne) });
    }
  } finally {
    await bare.stop();
    await node.stop();
  }
}
