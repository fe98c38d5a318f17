/**
 * Benchmark (issue #22 item 3): what one JSON-RPC call costs the node's **main thread** — the
 * thread that parses the request, checks the token, takes the context's lock, hands the call to a
 * runtime worker, commits, publishes and answers. One connection (no queueing; BENCH_RPC_MAIN_CONNECTIONS
 * for more), `get` and `set` of the kv_flat test app (BENCH_RPC_MAIN_APP=kv_store for the real-app-shaped
 * one) with BENCH_RPC_MAIN_KEYS keys (default 1000; BENCH_RPC_MAIN_METHODS=set for one); for each, requests per
 * second, latency and CPU per request of the main thread (`/proc/<pid>/task/<pid>/stat`) and of the
 * whole process, next to the bare node:http server's CPU per request for the same POST in the same
 * run. For a profile of the steps, run it with BENCH_NODE_FLAGS="--cpu-prof --cpu-prof-dir=…".
 */
import { makeBundle } from '../test/helpers/bundles.ts';
import { buildTestApp } from '../test/helpers/wasm-apps.ts';
import { cpuSecs, LOAD_SECS, loadgen, loadNote, startBare, startNode, threadCpuSecs, type LoadResult, type LoadSpec } from './harness.ts';

const PREFIX = 'k';
const APP = process.env.BENCH_RPC_MAIN_APP === 'kv_store' ? 'kv_store' : 'kv_flat';
const CONNS = Number(process.env.BENCH_RPC_MAIN_CONNECTIONS ?? 1);

interface Measured extends LoadResult {
  mainUs: number;
  processUs: number;
}

async function measured(spec: LoadSpec, pid: number): Promise<Measured> {
  await loadgen({ ...spec, connections: CONNS, durationSecs: 1 });
  const [main0, proc0] = [await threadCpuSecs(pid, pid), await cpuSecs(pid)];
  const r = await loadgen({ ...spec, connections: CONNS, durationSecs: LOAD_SECS });
  const [main1, proc1] = [await threadCpuSecs(pid, pid), await cpuSecs(pid)];
  const per = (s: number) => (r.requests > 0 ? (s * 1e6) / r.requests : NaN);
  return { ...r, mainUs: per(main1 - main0), processUs: per(proc1 - proc0) };
}

export async function benchRpcMain(keys = Number(process.env.BENCH_RPC_MAIN_KEYS ?? 1000)): Promise<void> {
  console.log(`# JSON-RPC main thread per call, ${APP}, ${keys} keys, ${CONNS} connection(s) (${loadNote()})`);
  const node = await startNode();
  const bare = await startBare();
  try {
    const c = node.client;
    const bundle = await makeBundle({ wasm: await buildTestApp(APP), package: `com.hearth.bench.${APP.replace('_', '')}.main` });
    const appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
    const ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
    const contextId = (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
    if (APP === 'kv_flat') await c.rpc.execute(contextId, 'fill', { prefix: PREFIX, from: 0, count: keys });
    else for (let i = 0; i < keys; i++) await c.rpc.execute(contextId, 'set', { key: `${PREFIX}${i}`, value: `v${i}` });
    const bareRun = await measured({ url: `${bare.url}/jsonrpc`, rpc: { contextId, method: 'get', keyPrefix: PREFIX, keys } }, bare.pid);
    console.log(`bare POST: ${bareRun.rps.toFixed(0)} req/s, CPU ${bareRun.processUs.toFixed(0)} µs/request`);
    const methods = (process.env.BENCH_RPC_MAIN_METHODS ?? 'get,set').split(',').filter((m): m is 'get' | 'set' => m === 'get' || m === 'set');
    for (const method of methods) {
      const r = await measured({ url: `${node.url}/jsonrpc`, headers: { authorization: `Bearer ${node.token}` }, check: 'jsonrpc', rpc: { contextId, method, keyPrefix: PREFIX, keys } }, node.pid);
      console.log(
        `${method}: ${r.rps.toFixed(0)} req/s, mean ${r.meanMs.toFixed(2)} ms, p50 ${r.p50ms} ms, p99 ${r.p99ms} ms, errors ${r.errors}; ` +
          `CPU per request: main thread ${r.mainUs.toFixed(0)} µs, whole process ${r.processUs.toFixed(0)} µs (bare ${bareRun.processUs.toFixed(0)} µs)`,
      );
    }
  } finally {
    await bare.stop();
    await node.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRpcMain();
