/**
 * Benchmark (issue #33 "fast lane"): a JSON-RPC call as a client meets it — the compiled node
 * (`bin/hearth.js`) with an admin token, `POST /jsonrpc` `execute` of the kv_store test app (shaped
 * like the reference SDK's kv-store) with BENCH_RPC_KEYS keys (default 200), the load made by
 * autocannon in a process of its own — against the bare node:http POST server in the same run.
 *
 * Prints, in one run so the ratios share the machine's load:
 * - the **main thread's CPU per `get`** (`/proc/<pid>/task/<pid>/stat`) against the bare server's
 *   main thread per request (goal ≤ 2.5 ×);
 * - `get` requests/s at CONNECTIONS against bare (goal ≥ 0.2), p99 / p50 of `get` (goal ≤ 3);
 * - CPU per `get` over all the node's threads against (raw guest call on a kept instance + bare)
 *   (goal ≤ 2 ×), and by thread (main, workers, other: GC, compiler, libuv);
 * - `set` p50 with one connection (goal < 2 ms);
 * - a projection from the measured per-thread costs: calls/s against core count, with workers =
 *   cores − 1, bounded by the main thread (1 / its CPU per call), the workers ((cores − 1) / their
 *   CPU per call) and the whole machine (cores / the CPU per call of all threads), and the core
 *   count past which the main thread is the bound.
 *
 * `npx tsx bench/rpc-outside.ts`, or `BENCH_ONLY=outside npm run bench`.
 */
import { CONNECTIONS, LOAD_SECS, loadgen, loadNote, rows, startBare, startNode, threadCpuSecs, cpuSecs, type BenchNode, type LoadResult, type LoadSpec } from './harness.ts';
import { fillTo, kvContext, PREFIX, rawGuestGet, sample } from './rpc.ts';

interface Run {
  load: LoadResult;
  /** µs of CPU per request */
  main: number;
  total: number;
  workers: number;
}

async function bareRun(url: string, pid: number, contextId: string, keys: number): Promise<Run> {
  const spec: LoadSpec = { url: `${url}/jsonrpc`, rpc: { contextId, method: 'get', keyPrefix: PREFIX, keys } };
  await loadgen({ ...spec, durationSecs: 1, connections: CONNECTIONS });
  const [m0, p0] = [await threadCpuSecs(pid), await cpuSecs(pid)];
  const load = await loadgen({ ...spec, durationSecs: LOAD_SECS, connections: CONNECTIONS });
  const [m1, p1] = [await threadCpuSecs(pid), await cpuSecs(pid)];
  const per = (s: number) => (s * 1e6) / Math.max(1, load.requests);
  return { load, main: per(m1 - m0), total: per(p1 - p0), workers: 0 };
}

async function nodeRun(node: BenchNode, spec: LoadSpec): Promise<Run> {
  await loadgen({ ...spec, durationSecs: 1 });
  const a = await sample(node);
  const load = await loadgen({ durationSecs: LOAD_SECS, connections: CONNECTIONS, ...spec });
  const b = await sample(node);
  let workers = 0;
  for (const [slot, cpu] of b.workers) workers += Math.max(0, cpu - (a.workers.get(slot) ?? 0));
  const per = (s: number) => (s * 1e6) / Math.max(1, load.requests);
  return { load, main: per(b.main - a.main), total: per(b.process - a.process), workers: per(workers) };
}

/** calls/s a node could answer on `cores` cores, from per-call CPU by thread (µs): the tightest bound */
export function project(main: number, workers: number, total: number, cores: number): { rps: number; bound: 'main thread' | 'workers' | 'all cores' } {
  const bounds = [
    { rps: 1e6 / main, bound: 'main thread' as const },
    { rps: ((cores - 1) * 1e6) / Math.max(1e-9, workers), bound: 'workers' as const },
    { rps: (cores * 1e6) / total, bound: 'all cores' as const },
  ];
  return bounds.reduce((a, b) => (b.rps < a.rps ? b : a));
}

export async function benchRpcOutside(keys = Number(process.env.BENCH_RPC_KEYS?.split(',')[0] ?? 200)): Promise<void> {
  console.log(`# fast lane (issue #33): kv_store ${keys} keys, POST /jsonrpc, admin token, ${CONNECTIONS} connections (${loadNote()})`);
  const node = await startNode();
  const bare = await startBare();
  try {
    const contextId = await kvContext(node, 'kv_store');
    await fillTo(node, 'kv_store', contextId, keys);
    const headers = { authorization: `Bearer ${node.token}` };
    const rpc = (method: 'get' | 'set'): LoadSpec => ({ url: `${node.url}/jsonrpc`, headers, check: 'jsonrpc', rpc: { contextId, method, keyPrefix: PREFIX, keys } });
    const b = await bareRun(bare.url, bare.pid, contextId, keys);
    const get = await nodeRun(node, rpc('get'));
    const setOne = await nodeRun(node, { ...rpc('set'), connections: 1 });
    const raw = await rawGuestGet('kv_store', keys);
    console.log(`(${loadNote()} after the loads)`);
    const mainRatio = get.main / b.main;
    const rpsRatio = get.load.rps / b.load.rps;
    const allRatio = get.total / (raw + b.total);
    const tail = get.load.p99ms / Math.max(1, get.load.p50ms);
    // the same ratio of the answers' exact times (whole milliseconds at a 4 ms p50 move it by a quarter)
    const tailExact = get.load.p99exactMs / Math.max(1e-9, get.load.p50exactMs);
    console.log(`bare POST: ${b.load.rps.toFixed(0)} req/s, main thread ${b.main.toFixed(1)} µs/request, process ${b.total.toFixed(1)} µs/request`);
    console.log(
      `get (${CONNECTIONS} conn): ${get.load.rps.toFixed(0)} req/s = ${rpsRatio.toFixed(3)} of bare, errors ${get.load.errors}, p50 ${get.load.p50ms} ms, p99 ${get.load.p99ms} ms (p99/p50 ${tail.toFixed(1)}; exact ${get.load.p50exactMs.toFixed(2)} / ${get.load.p99exactMs.toFixed(2)} ms = ${tailExact.toFixed(2)})`,
    );
    console.log(`  main thread ${get.main.toFixed(1)} µs/request = ${mainRatio.toFixed(2)} × bare's main thread`);
    console.log(`  all threads ${get.total.toFixed(0)} µs/request (main ${get.main.toFixed(0)}, workers ${get.workers.toFixed(0)}, other ${Math.max(0, get.total - get.main - get.workers).toFixed(0)}) = ${allRatio.toFixed(2)} × (raw guest get ${raw.toFixed(0)} + bare ${b.total.toFixed(0)})`);
    console.log(`set (1 conn): p50 ${setOne.load.p50ms} ms (exact median ${setOne.load.p50exactMs.toFixed(2)} ms), mean ${setOne.load.meanMs.toFixed(2)} ms, p99 ${setOne.load.p99ms} ms, errors ${setOne.load.errors}; main ${setOne.main.toFixed(0)} µs, all ${setOne.total.toFixed(0)} µs per call`);
    console.log('projection of get calls/s from these per-call costs (workers = cores - 1):');
    let saturates: number | undefined;
    for (const cores of [2, 4, 8, 16, 32, 64]) {
      const p = project(get.main, get.workers, get.total, cores);
      if (saturates === undefined && p.bound === 'main thread') saturates = cores;
      console.log(`  ${String(cores).padStart(2)} cores: ${p.rps.toFixed(0).padStart(7)} calls/s (bound: ${p.bound})`);
    }
    console.log(`  the main thread saturates at ${(1e6 / get.main).toFixed(0)} calls/s${saturates ? `, the bound from ${saturates} cores on` : ''}`);
    rows.push({ measure: 'kv_store get main-thread CPU/request (outside)', hearth: `${get.main.toFixed(0)} µs`, baseline: `bare ${b.main.toFixed(1)} µs`, ratio: mainRatio, goal: '<= 2.5', met: mainRatio <= 2.5 && get.load.errors === 0 });
    rows.push({ measure: 'kv_store get req/s (outside)', hearth: `${get.load.rps.toFixed(0)} req/s`, baseline: `${b.load.rps.toFixed(0)} req/s`, ratio: rpsRatio, goal: '>= 0.2', met: rpsRatio >= 0.2 && get.load.errors === 0 });
    rows.push({ measure: 'kv_store get CPU/request all threads', hearth: `${get.total.toFixed(0)} µs`, baseline: `raw ${raw.toFixed(0)} + bare ${b.total.toFixed(0)} µs`, ratio: allRatio, goal: '<= 2', met: allRatio <= 2 });
    rows.push({ measure: 'kv_store get p99/p50', hearth: `p99 ${get.load.p99ms} ms`, baseline: `p50 ${get.load.p50ms} ms`, ratio: tail, goal: '<= 3', met: tail <= 3 });
    rows.push({ measure: 'kv_store get p99/p50, exact times', hearth: `p99 ${get.load.p99exactMs.toFixed(2)} ms`, baseline: `p50 ${get.load.p50exactMs.toFixed(2)} ms`, ratio: tailExact, goal: '<= 3', met: tailExact <= 3 });
    rows.push({ measure: 'kv_store set p50, 1 connection', hearth: `p50 ${setOne.load.p50ms} ms`, baseline: '-', goal: '< 2 ms', met: setOne.load.p50ms < 2 && setOne.load.errors === 0 });
  } finally {
    await bare.stop();
    await node.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRpcOutside();
