/**
 * Benchmark (issues #14, #22): JSON-RPC `execute` of two key-value applications against a bare
 * node:http server answering a POST, driven by the same external load generator in the same run:
 *
 * - `kv_flat` (test/apps/kv_flat.ts): every call touches a constant number of keys and keeps its
 *   memory size — a cost that grows with the store is the host's;
 * - `kv_store` (test/apps/kv_store.ts): the real-app-shaped one — its memory grows in every call,
 *   the map's index is one entry every `set` rewrites, 26 host calls per `get` and ~240 per `set`,
 *   as the reference SDK's output.
 *
 * For each app with BENCH_RPC_KEYS keys (default 200): `get` at saturation (CONNECTIONS), `set` at
 * saturation, `set` with one connection. Each prints requests/s and latency, and per call the
 * instances created and blocking host round trips (the runtime's /metrics counters), and the CPU
 * per request by thread: the node's main thread, its runtime workers (each worker thread's CPU,
 * from /metrics), and the rest of the process (V8's and libuv's threads: GC, compilation, LevelDB).
 * The raw guest call (the same app's `get` in this process on a kept instance, no HTTP, no worker)
 * and the bare server's CPU per request give the issue's CPU bound: hearth ≤ 4 × (raw + bare).
 * Next to hearth's `get`, the zero-overhead server (rpc-ceiling.ts: the bare server handing each
 * request to a worker that runs the raw guest call, nothing else) measured the same way: its ratio
 * to bare is what bounds hearth's on this machine, the guest's own CPU being what bare never spends.
 *
 * Goals (issue #22): `get` on kv_store ≥ 0.4 of bare by requests/s, CPU per request ≤ 4 × (raw
 * guest + bare exchange); `set` with one connection p50 < 3 ms; `set` with CONNECTIONS at least one
 * connection's throughput.
 */
import { readFile } from 'node:fs/promises';
import { makeBundle } from '../test/helpers/bundles.ts';
import { buildTestApp } from '../test/helpers/wasm-apps.ts';
import { guestCaller, startCeiling } from './rpc-ceiling.ts';
import { CONNECTIONS, LOAD_SECS, cpuSecs, fmtRps, loadNote, loadgen, measureWithCpu, rows, startBare, startNode, type BenchNode, type LoadResult, type LoadSpec } from './harness.ts';

export const PREFIX = 'k';
const APPS = ['kv_flat', 'kv_store'] as const;
export type App = (typeof APPS)[number];

export async function kvContext(node: BenchNode, app: App): Promise<string> {
  const c = node.client;
  const bundle = await makeBundle({ wasm: await buildTestApp(app), package: `com.hearth.bench.${app.replace('_', '')}` });
  const appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
  const ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
  return (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
}

/** Fills the context up to `keys` keys (`k0`…): kv_flat in calls of 10,000, kv_store one `set` each. */
export async function fillTo(node: BenchNode, app: App, contextId: string, keys: number): Promise<void> {
  let have = Number(await node.client.rpc.execute(contextId, 'len', {}));
  while (have < keys) {
    if (app === 'kv_flat') {
      const count = Math.min(10_000, keys - have);
      have = Number(await node.client.rpc.execute(contextId, 'fill', { prefix: PREFIX, from: have, count }));
    } else {
      await node.client.rpc.execute(contextId, 'set', { key: `${PREFIX}${have}`, value: `v${have}` });
      have++;
    }
  }
}

/** CPU seconds of one thread of process `pid` (Linux). */
async function threadCpu(pid: number, tid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface Sample {
  process: number;
  main: number;
  /** worker CPU seconds by pool slot */
  workers: Map<string, number>;
  calls: number;
  instances: number;
  trips: number;
  replaced: number;
}

export async function sample(node: BenchNode): Promise<Sample> {
  const text = await (await fetch(`${node.url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  const workers = new Map<string, number>();
  for (const m of text.matchAll(/^hearth_runtime_worker_cpu_seconds\{slot="(\d+)"\} (\S+)$/gm)) workers.set(m[1]!, Number(m[2]));
  let replaced = 0;
  for (const m of text.matchAll(/^hearth_runtime_workers_replaced_total\{reason="\w+"\} (\S+)$/gm)) replaced += Number(m[1]);
  return {
    process: await cpuSecs(node.pid),
    main: await threadCpu(node.pid, node.pid),
    workers,
    calls: value('hearth_runtime_calls_total'),
    instances: value('hearth_runtime_instances_created_total'),
    trips: value('hearth_runtime_round_trips_total'),
    replaced,
  };
}

interface Figures {
  load: LoadResult;
  instancesPerCall: number;
  tripsPerCall: number;
  /** µs of CPU per request */
  cpu: { total: number; main: number; workers: number; other: number };
  replaced: number;
}

/** A warm-up second, then the measured load with the node's counters and CPU by thread around it. */
async function measured(node: BenchNode, spec: LoadSpec): Promise<Figures> {
  await loadgen({ ...spec, durationSecs: 1 });
  const a = await sample(node);
  const load = await loadgen({ durationSecs: LOAD_SECS, connections: CONNECTIONS, ...spec });
  const b = await sample(node);
  const calls = Math.max(1, b.calls - a.calls);
  let workers = 0;
  for (const [slot, cpu] of b.workers) workers += Math.max(0, cpu - (a.workers.get(slot) ?? 0));
  const per = (secs: number) => (secs * 1e6) / Math.max(1, load.requests);
  const total = per(b.process - a.process);
  const main = per(b.main - a.main);
  const w = per(workers);
  return {
    load,
    instancesPerCall: (b.instances - a.instances) / calls,
    tripsPerCall: (b.trips - a.trips) / calls,
    cpu: { total, main, workers: w, other: Math.max(0, total - main - w) },
    replaced: b.replaced - a.replaced,
  };
}

/** The app's `get` in this process on a kept instance against an in-memory store of `keys` keys: µs of CPU per call. */
export async function rawGuestGet(app: App, keys: number): Promise<number> {
  const call = await guestCaller(app, keys, PREFIX);
  const args = (i: number) => new TextEncoder().encode(JSON.stringify({ key: `${PREFIX}${i % keys}` }));
  for (let i = 0; i < 500; i++) call('get', args(i));
  const n = 3000;
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) call('get', args(i));
  const used = process.cpuUsage(t0);
  return (used.user + used.system) / n;
}

const fmtCpu = (f: Figures) =>
  `CPU/request ${f.cpu.total.toFixed(0)} µs (main ${f.cpu.main.toFixed(0)}, workers ${f.cpu.workers.toFixed(0)}, other threads ${f.cpu.other.toFixed(0)})`;
const fmtCalls = (f: Figures) => `instances/call ${f.instancesPerCall.toFixed(3)}, round trips/call ${f.tripsPerCall.toFixed(2)}${f.replaced ? `, workers replaced ${f.replaced}` : ''}`;

export async function benchRpc(sizes = (process.env.BENCH_RPC_KEYS ?? '200').split(',').map(Number)): Promise<void> {
  console.log(`# JSON-RPC execute, kv_flat and kv_store (${CONNECTIONS} connections; ${loadNote()})`);
  const node = await startNode();
  const bare = await startBare();
  try {
    for (const app of APPS) {
      const contextId = await kvContext(node, app);
      const headers = { authorization: `Bearer ${node.token}` };
      const url = `${node.url}/jsonrpc`;
      for (const keys of sizes) {
        await fillTo(node, app, contextId, keys);
        const n = keys >= 1000 ? `${keys / 1000}k` : String(keys);
        const rpc = (method: 'get' | 'set') => ({ url, headers, check: 'jsonrpc' as const, rpc: { contextId, method, keyPrefix: PREFIX, keys } });
        // the bare server's CPU per exchange, measured like the node's
        await loadgen({ url: `${bare.url}/jsonrpc`, rpc: { contextId, method: 'get', keyPrefix: PREFIX, keys }, durationSecs: 1 });
        const bareBefore = await cpuSecs(bare.pid);
        const baseline = await loadgen({ url: `${bare.url}/jsonrpc`, rpc: { contextId, method: 'get', keyPrefix: PREFIX, keys }, durationSecs: LOAD_SECS, connections: CONNECTIONS });
        const bareCpu = (((await cpuSecs(bare.pid)) - bareBefore) * 1e6) / Math.max(1, baseline.requests);
        const raw = await rawGuestGet(app, keys);
        // the zero-overhead server (rpc-ceiling.ts): bare HTTP + a worker running the raw guest call, nothing else
        const ceilingServer = await startCeiling(app, keys, PREFIX);
        let ceiling: LoadResult & { cpuUsPerRequest: number };
        try {
          ceiling = await measureWithCpu({ url: `${ceilingServer.url}/jsonrpc`, check: 'jsonrpc', rpc: { contextId, method: 'get', keyPrefix: PREFIX, keys } }, ceilingServer.pid);
        } finally {
          await ceilingServer.stop();
        }
        const get = await measured(node, rpc('get'));
        const set = await measured(node, rpc('set'));
        const setOne = await measured(node, { ...rpc('set'), connections: 1 });
        const bound = 4 * (raw + bareCpu);
        console.log(`${app}, ${n} keys: bare POST ${fmtRps(baseline)}, CPU/request ${bareCpu.toFixed(0)} µs; raw guest get ${raw.toFixed(0)} µs CPU`);
        console.log(`  ceiling get (${CONNECTIONS} conn, zero-overhead server): ${fmtRps(ceiling)}, errors ${ceiling.errors}, ${(ceiling.rps / baseline.rps).toFixed(3)} of bare; CPU/request ${ceiling.cpuUsPerRequest.toFixed(0)} µs`);
        console.log(`  get (${CONNECTIONS} conn):  ${fmtRps(get.load)}, errors ${get.load.errors}, ${(get.load.rps / baseline.rps).toFixed(3)} of bare, ${(get.load.rps / ceiling.rps).toFixed(2)} of the ceiling; ${fmtCalls(get)}; ${fmtCpu(get)}`);
        console.log(`  set (${CONNECTIONS} conn):  ${fmtRps(set.load)}, errors ${set.load.errors}; ${fmtCalls(set)}; ${fmtCpu(set)}`);
        console.log(`  set (1 conn):   mean ${setOne.load.meanMs.toFixed(2)} ms, p50 ${setOne.load.p50ms} ms, p99 ${setOne.load.p99ms} ms, ${setOne.load.rps.toFixed(0)} req/s; ${fmtCalls(setOne)}; ${fmtCpu(setOne)}`);
        const ok = (f: Figures) => f.load.errors === 0;
        const real = app === 'kv_store';
        rows.push({ measure: `${app} get, ${n} keys`, hearth: fmtRps(get.load), baseline: fmtRps(baseline), ratio: get.load.rps / baseline.rps, goal: real ? '>= 0.40' : '(reported)', met: real ? get.load.rps / baseline.rps >= 0.4 && ok(get) : ok(get) ? undefined : false });
        rows.push({ measure: `${app} get ceiling (zero-overhead server), ${n} keys`, hearth: fmtRps(ceiling), baseline: fmtRps(baseline), ratio: ceiling.rps / baseline.rps, goal: real ? 'bounds the 0.40' : '(reported)', met: ceiling.errors === 0 ? undefined : false });
        rows.push({ measure: `${app} get CPU/request, ${n} keys`, hearth: `${get.cpu.total.toFixed(0)} µs`, baseline: `4 x (raw ${raw.toFixed(0)} + bare ${bareCpu.toFixed(0)}) = ${bound.toFixed(0)} µs`, ratio: get.cpu.total / (raw + bareCpu), goal: real ? '<= 4' : '(reported)', met: real ? get.cpu.total <= bound : undefined });
        rows.push({ measure: `${app} set, ${n} keys`, hearth: fmtRps(set.load), baseline: `1 conn: ${setOne.load.rps.toFixed(0)} req/s`, ratio: set.load.rps / setOne.load.rps, goal: '>= 1 (no collapse)', met: set.load.rps >= setOne.load.rps && ok(set) });
        rows.push({ measure: `${app} set p50, 1 connection, ${n} keys`, hearth: `p50 ${setOne.load.p50ms} ms, mean ${setOne.load.meanMs.toFixed(2)} ms`, baseline: '-', goal: '< 3 ms', met: setOne.load.p50ms < 3 && ok(setOne) });
      }
    }
  } finally {
    await bare.stop();
    await node.stop();
  }
}
