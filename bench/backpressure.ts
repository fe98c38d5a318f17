/**
 * Back-pressure and fairness of method calls (issue #23 §4), against compiled nodes:
 * - a flood of concurrent writers on one context (BENCH_WRITERS, default 200: one connection each),
 *   with the pending-call bounds at their defaults and, as the baseline in the same run, lifted;
 *   latency of the accepted writes (median, max) and the 503s;
 * - 60 parallel calls of 9 MiB arguments (a method that ignores them): the node's resident memory
 *   before and at its peak;
 * - four contexts spinning in infinite loops (default pool and deadline): a healthy context's get
 *   and set latency (median, max).
 * `npx tsx bench/backpressure.ts`, or `BENCH_ONLY=backpressure npm run bench`.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createClient, MemoryTokenStore, type Client } from '../src/client/index.ts';
import type { NodeConfig } from '../src/config/config.ts';
import { makeBundle } from '../test/helpers/bundles.ts';
import { makeHome, spawnNode } from '../test/helpers/node.ts';
import { buildTestApp } from '../test/helpers/wasm-apps.ts';
import { ADMIN_ENV, ensureBuilt, loadNote, median, rows, rssMB } from './harness.ts';

const WRITERS = Number(process.env.BENCH_WRITERS ?? 200);
const BIG_CALLS = 60;
const BIG_BYTES = 9 * 1024 * 1024;

interface Node {
  url: string;
  pid: number;
  client: Client;
  token: string;
  stop(): Promise<void>;
}

async function start(configure: (cfg: NodeConfig) => void = () => undefined): Promise<Node> {
  await ensureBuilt();
  const paths = await makeHome({ configure });
  const home = join(paths.dir, '..');
  const spawned = await spawnNode(['run', '--home', home, '--node', 'test'], { ...ADMIN_ENV, HEARTH_LOG: 'error' }, 60_000);
  const client = createClient({ baseUrl: spawned.url, tokenStore: new MemoryTokenStore() });
  const { accessToken } = await client.auth.login({ username: ADMIN_ENV.MERO_AUTH_ADMIN_USER, password: ADMIN_ENV.MERO_AUTH_ADMIN_PASSWORD });
  return {
    url: spawned.url,
    pid: spawned.child.pid!,
    client,
    token: accessToken,
    stop: async () => {
      spawned.child.kill('SIGTERM');
      await spawned.exited;
      await rm(home, { recursive: true, force: true });
    },
  };
}

async function contexts(node: Node, app: 'kv' | 'spin', count: number): Promise<string[]> {
  const c = node.client;
  const bundle = await makeBundle({ wasm: await buildTestApp(app), package: `com.hearth.bench.${app}` });
  const appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path } })).applicationId;
  const ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId);
  return ids;
}

/** One raw JSON-RPC execute; answers the HTTP status and the time it took. */
async function execute(node: Node, contextId: string, method: string, argsJson: unknown): Promise<{ status: number; ms: number }> {
  const t = performance.now();
  try {
    const res = await fetch(`${node.url}/jsonrpc`, {
      method: 'POST',
      headers: { authorization: `Bearer ${node.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'execute', params: { contextId, method, argsJson } }),
    });
    const body = (await res.json().catch(() => undefined)) as { error?: unknown } | undefined;
    // a JSON-RPC error in a 200 answer (the call failed in the guest) is not an accepted call
    return { status: res.status === 200 && body?.error !== undefined ? -1 : res.status, ms: performance.now() - t };
  } catch (err) {
    // no answer (the connection closed under the load): status 0
    if (process.env.BENCH_VERBOSE) console.log(err);
    return { status: 0, ms: performance.now() - t };
  }
}

async function flood(node: Node): Promise<{ ok: number; refused: number; p50: number; max: number }> {
  const [ctx] = await contexts(node, 'kv', 1);
  const answers = await Promise.all(Array.from({ length: WRITERS }, (_, i) => execute(node, ctx, 'set', { key: `k${i}`, value: String(i) })));
  const ok = answers.filter((a) => a.status === 200);
  return { ok: ok.length, refused: answers.filter((a) => a.status === 503).length, p50: median(ok.map((a) => a.ms)), max: Math.max(...ok.map((a) => a.ms)) };
}

async function bigCalls(node: Node): Promise<{ before: number; peak: number; ok: number; refused: number; other: number[] }> {
  // `quick` ignores its arguments: what is measured is the node holding them
  const [ctx] = await contexts(node, 'spin', 1);
  const before = await rssMB(node.pid);
  let peak = before;
  const sampler = setInterval(() => void rssMB(node.pid).then((mb) => (peak = Math.max(peak, mb)), () => undefined), 50);
  const pad = 'p'.repeat(BIG_BYTES);
  const answers = await Promise.all(Array.from({ length: BIG_CALLS }, () => execute(node, ctx, 'quick', { pad })));
  clearInterval(sampler);
  peak = Math.max(peak, await rssMB(node.pid));
  const other = answers.filter((a) => a.status !== 200 && a.status !== 503).map((a) => a.status);
  return { before, peak, ok: answers.filter((a) => a.status === 200).length, refused: answers.filter((a) => a.status === 503).length, other };
}

async function starvation(node: Node): Promise<{ p50: number; max: number }> {
  const [healthy] = await contexts(node, 'kv', 1);
  const spinning = await contexts(node, 'spin', 4);
  let stopped = false;
  const loops = spinning.map(async (ctx) => {
    while (!stopped) await execute(node, ctx, 'spin', {});
  });
  await new Promise((r) => setTimeout(r, 12_000)); // every spinning context has run
  const waits: number[] = [];
  for (let i = 0; i < 6; i++) {
    waits.push((await execute(node, healthy, 'get', { key: 'a' })).ms);
    waits.push((await execute(node, healthy, 'set', { key: 'a', value: String(i) })).ms);
  }
  stopped = true;
  await Promise.all(loops);
  return { p50: median(waits), max: Math.max(...waits) };
}

const LIFTED = (cfg: NodeConfig) => {
  cfg.runtime.contextPendingCalls = 1_000_000;
  cfg.runtime.pendingCalls = 1_000_000;
  cfg.runtime.contextPendingBytes = 2 ** 40;
  cfg.runtime.pendingBytes = 2 ** 40;
};

export async function benchBackpressure(): Promise<void> {
  console.log(`# back-pressure and fairness (issue #23 §4; ${loadNote()})`);
  for (const [label, configure] of [['bounds lifted (baseline)', LIFTED], ['default bounds', undefined]] as const) {
    const node = await start(configure);
    try {
      const f = await flood(node);
      console.log(`${label}: ${WRITERS} writers on one context: ${f.ok} accepted (median ${f.p50.toFixed(0)} ms, max ${f.max.toFixed(0)} ms), ${f.refused} answered 503`);
      const b = await bigCalls(node);
      console.log(`${label}: ${BIG_CALLS} calls of ${BIG_BYTES >> 20} MiB: ${b.ok} accepted, ${b.refused} answered 503, other answers ${JSON.stringify(b.other)}; resident ${b.before.toFixed(0)} -> peak ${b.peak.toFixed(0)} MB`);
      rows.push({ measure: `${WRITERS} writers, one context (${label})`, hearth: `${f.ok} ok p50 ${f.p50.toFixed(0)} ms max ${f.max.toFixed(0)} ms, ${f.refused} × 503`, baseline: '', goal: '503 past the bound' });
    } finally {
      await node.stop();
    }
  }
  const node = await start();
  try {
    const s = await starvation(node);
    console.log(`4 spinning contexts: a healthy context's get/set median ${s.p50.toFixed(0)} ms, max ${s.max.toFixed(0)} ms (deadline 5000 ms)`);
    rows.push({ measure: 'healthy get/set beside 4 spinning contexts', hearth: `p50 ${s.p50.toFixed(0)} ms max ${s.max.toFixed(0)} ms`, baseline: '', goal: '≤ normal + one deadline' });
  } finally {
    await node.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchBackpressure();
