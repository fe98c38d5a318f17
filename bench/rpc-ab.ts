/**
 * A/B of builds (issue #33): the compiled node of two (or more) checkouts side by side, each with a
 * kv_store context of 200 keys, driven in alternating rounds by the same external load (`POST
 * /jsonrpc` `get`, admin token, 32 connections); per round the main thread's CPU per request, the
 * process's, requests/s and latency; then the median of each. On a shared machine the rounds of
 * both builds meet the same load, so their CPU per request compares where a single run's would not.
 * Per round also the runtime workers' CPU per request and the blocking round trips per call (/metrics).
 *
 * AB_ROOTS (comma-separated checkouts holding a built `bin/hearth.js` + `dist/`; default: a copy of
 * main's build in /tmp/hearth-base and this checkout), AB_ROUNDS (3), AB_SECS (4), AB_METHOD
 * (get | set), AB_CONNECTIONS (32; 1 for issue #33's `set` goal), AB_FLAGS (Node.js flags per root,
 * `|`-separated, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`).
 * `npx tsx bench/rpc-ab.ts`
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createClient, MemoryTokenStore } from '../src/client/index.ts';
import { makeHome, ROOT, spawnNode } from '../test/helpers/node.ts';
import { ADMIN_ENV, loadgen, type BenchNode, type LoadSpec } from './harness.ts';
import { fillTo, kvContext, PREFIX, sample } from './rpc.ts';
import { loadavg } from 'node:os';

async function start(root: string, flags = ''): Promise<BenchNode> {
  const paths = await makeHome();
  const home = join(paths.dir, '..');
  const wrap = ['sh', '-c', `n="$0"; shift; exec "$n" ${flags} ${root}/bin/hearth.js "$@"`];
  const spawned = await spawnNode(['run', '--home', home, '--node', 'test'], { ...ADMIN_ENV, HEARTH_LOG: '' }, 60_000, wrap);
  const client = createClient({ baseUrl: spawned.url, tokenStore: new MemoryTokenStore() });
  const { accessToken } = await client.auth.login({ username: 'dev', password: 'dev-password' });
  return { url: spawned.url, pid: spawned.child.pid!, spawned, client, token: accessToken, home, stop: async () => { spawned.child.kill('SIGTERM'); await spawned.exited; await rm(home, { recursive: true, force: true }); } };
}
const roots = (process.env.AB_ROOTS ?? `/tmp/hearth-base,${ROOT}`).split(',');
const rounds = Number(process.env.AB_ROUNDS ?? 3);
const secs = Number(process.env.AB_SECS ?? 4);
const flags = (process.env.AB_FLAGS ?? '').split('|');
const keys = 200;
const nodes = [] as { n: BenchNode; spec: LoadSpec; res: { main: number; all: number; workers: number; trips: number; rps: number; mean: number; p50: number; p50x: number; p99: number; p99x: number; err: number }[] }[];
try {
  for (const [i, r] of roots.entries()) {
    const n = await start(r, flags[i] ?? '');
    const contextId = await kvContext(n, 'kv_store');
    await fillTo(n, 'kv_store', contextId, keys);
    nodes.push({ n, spec: { url: `${n.url}/jsonrpc`, headers: { authorization: `Bearer ${n.token}` }, check: 'jsonrpc', rpc: { contextId, method: (process.env.AB_METHOD ?? 'get') as 'get', keyPrefix: PREFIX, keys }, connections: Number(process.env.AB_CONNECTIONS ?? 32) }, res: [] });
    await loadgen({ ...nodes.at(-1)!.spec, durationSecs: 2 });
  }
  for (let k = 0; k < rounds; k++) {
    for (const x of nodes) {
      const a = await sample(x.n);
      const l = await loadgen({ ...x.spec, durationSecs: secs });
      const b = await sample(x.n);
      const per = (s: number) => (s * 1e6) / Math.max(1, l.requests);
      let workers = 0;
      for (const [slot, cpu] of b.workers) workers += Math.max(0, cpu - (a.workers.get(slot) ?? 0));
      const trips = (b.trips - a.trips) / Math.max(1, b.calls - a.calls);
      x.res.push({ main: per(b.main - a.main), all: per(b.process - a.process), workers: per(workers), trips, rps: l.rps, mean: l.meanMs, p50: l.p50ms, p50x: l.p50exactMs, p99: l.p99ms, p99x: l.p99exactMs, err: l.errors });
      console.log(`round ${k} ${roots[nodes.indexOf(x)]}: main ${per(b.main - a.main).toFixed(0)} µs, workers ${per(workers).toFixed(0)} µs, all ${per(b.process - a.process).toFixed(0)} µs, round trips ${trips.toFixed(2)}/call, ${l.rps.toFixed(0)} req/s, mean ${l.meanMs.toFixed(2)} ms, p50 ${l.p50ms} (${l.p50exactMs.toFixed(2)}) p99 ${l.p99ms} (${l.p99exactMs.toFixed(2)}, p99/p50 ${(l.p99exactMs / Math.max(1e-9, l.p50exactMs)).toFixed(2)}), errors ${l.errors} (load ${loadavg()[0].toFixed(1)})`);
    }
  }
  for (const [i, x] of nodes.entries()) {
    // how many calls went to a worker in batches (a build without batching has no such series)
    const metrics = await fetch(`${x.n.url}/metrics`, { headers: { authorization: `Bearer ${x.n.token}` } }).then((r) => r.text(), () => '');
    const batched = metrics.split('\n').filter((l) => /^hearth_runtime_(batched_calls|batches|calls)_total /.test(l));
    if (batched.length > 0) console.log(`${roots[i]}: ${batched.join(', ')}`);
    const med = (f: (r: (typeof x.res)[0]) => number) => [...x.res.map(f)].sort((a, b) => a - b)[Math.floor(x.res.length / 2)]!;
    console.log(`MEDIAN ${roots[i]}: main ${med((r) => r.main).toFixed(0)} µs, workers ${med((r) => r.workers).toFixed(0)} µs, round trips ${med((r) => r.trips).toFixed(2)}/call, all ${med((r) => r.all).toFixed(0)} µs, ${med((r) => r.rps).toFixed(0)} req/s, mean ${med((r) => r.mean).toFixed(2)} ms, p50 ${med((r) => r.p50)} (${med((r) => r.p50x).toFixed(2)}) p99 ${med((r) => r.p99)} (${med((r) => r.p99x).toFixed(2)}), p99/p50 exact ${med((r) => r.p99x / Math.max(1e-9, r.p50x)).toFixed(2)}`);
  }
} finally {
  for (const x of nodes) await x.n.stop();
}
