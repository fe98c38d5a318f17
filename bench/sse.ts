/**
 * Benchmark (issue #5, event stream): N SSE subscribers (default 1000, BENCH_SSE_N) on one context
 * over real HTTP; for each of R rounds (default 30, BENCH_SSE_ROUNDS) one trigger, and the time
 * from the trigger's answer to the frame reaching the *last* subscriber (goal: p99 < 100 ms).
 * Prints p50/p99 of that fan-out time, plus p50/p99 over every single delivery.
 *
 * The trigger is a parameter. The default (the measure) is a real JSON-RPC `execute` of
 * the kv-store test app, timed from the moment its answer arrives; `publishTrigger`
 * (BENCH_SSE_TRIGGER=bus) publishes a `StateMutation` on the node's bus directly. Subscribers run
 * in a worker thread (bench/sse-subscribers.mjs): on the same machine, but not on the node's event
 * loop. A frame may arrive before the answer; such deliveries count as 0 ms.
 */
import { Worker } from 'node:worker_threads';
import { createClient, MemoryTokenStore, type Client } from '../src/client/index.ts';
import { startTestNode, type TestNode } from '../test/helpers/node.ts';

export interface TriggerContext {
  node: TestNode;
  contextId: string;
  token: string;
  round: number;
}
export type Trigger = (ctx: TriggerContext) => void | Promise<void>;

export interface TriggerSpec {
  /** prepares the node and answers the context to subscribe to */
  prepare(node: TestNode, client: Client): Promise<string>;
  trigger: Trigger;
}

export const publishTrigger: TriggerSpec = {
  prepare: async () => 'cd'.repeat(32),
  trigger: ({ node, contextId, round }) => {
    node.node.bus.publish({
      type: 'context',
      contextId,
      kind: 'StateMutation',
      data: { newRoot: 'ab'.repeat(32), events: [{ kind: 'BenchRound', data: Array.from(Buffer.from(JSON.stringify({ round }))), handler: null }] },
    });
  },
};

/** A JSON-RPC `set` on a real context of the kv-store test app (one StateMutation per call). */
export function rpcTrigger(): TriggerSpec {
  let client: Client;
  return {
    prepare: async (node, c) => {
      client = c;
      const { makeBundle } = await import('../test/helpers/bundles.ts');
      const { buildTestApp } = await import('../test/helpers/wasm-apps.ts');
      const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv.bench' });
      const appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
      const ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
      return (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
    },
    trigger: async ({ contextId, round }) => {
      await client.rpc.execute(contextId, 'set', { key: 'round', value: String(round) });
    },
  };
}

export interface SseBenchResult {
  subscribers: number;
  rounds: number;
  lastP50Ms: number;
  lastP99Ms: number;
  eachP50Ms: number;
  eachP99Ms: number;
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const abs = () => performance.timeOrigin + performance.now();

type WorkerMessage = { type: 'ready'; sessionIds: string[] } | { type: 'round'; round: number; arrivals: number[] };

/** Resolves with the next message of `type`, or rejects after `ms`. */
function next<T extends WorkerMessage['type']>(worker: Worker, type: T, ms: number): Promise<Extract<WorkerMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      worker.off('message', on);
      worker.off('error', fail);
    };
    const fail = (err: unknown) => {
      done();
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error(`subscribers: no '${type}' within ${ms} ms`)), ms);
    const on = (m: WorkerMessage) => {
      if (m.type !== type) return;
      done();
      resolve(m as Extract<WorkerMessage, { type: T }>);
    };
    worker.on('message', on);
    worker.on('error', fail);
  });
}

export async function benchSse(
  n = Number(process.env.BENCH_SSE_N ?? 1000),
  rounds = Number(process.env.BENCH_SSE_ROUNDS ?? 30),
  spec: TriggerSpec = process.env.BENCH_SSE_TRIGGER === 'bus' ? publishTrigger : rpcTrigger(),
): Promise<SseBenchResult> {
  const node = await startTestNode();
  let worker: Worker | undefined;
  try {
    const admin = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
    await admin.auth.login({ username: node.adminUser, password: node.adminPassword });
    const token = (await admin.tokenStore.get())!.accessToken;
    const contextId = await spec.prepare(node, admin);

    worker = new Worker(new URL('./sse-subscribers.mjs', import.meta.url), { workerData: { url: node.url, token, contextId, n } });
    const { sessionIds } = await next(worker, 'ready', 120_000);
    for (let i = 0; i < sessionIds.length; i += 50) {
      await Promise.all(
        sessionIds
          .slice(i, i + 50)
          .map((id) => admin.http.json('/sse/subscription', { method: 'POST', body: { id, method: 'subscribe', params: { contextIds: [contextId] } } })),
      );
    }

    const last: number[] = [];
    const each: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const delivered = next(worker, 'round', 30_000);
      await spec.trigger({ node, contextId, token, round });
      const answeredAt = abs();
      const { arrivals } = await delivered;
      const times = arrivals.map((at) => Math.max(0, at - answeredAt));
      last.push(Math.max(...times));
      each.push(...times);
    }
    last.sort((a, b) => a - b);
    each.sort((a, b) => a - b);
    const result: SseBenchResult = {
      subscribers: n,
      rounds,
      lastP50Ms: pct(last, 50),
      lastP99Ms: pct(last, 99),
      eachP50Ms: pct(each, 50),
      eachP99Ms: pct(each, 99),
    };
    const f = (x: number) => x.toFixed(1);
    console.log(`sse fan-out: ${n} subscribers, ${rounds} rounds, trigger ${spec === publishTrigger ? 'bus publish' : 'JSON-RPC execute'}`);
    console.log(`  answer → last subscriber: p50 ${f(result.lastP50Ms)} ms, p99 ${f(result.lastP99Ms)} ms (goal p99 < 100 ms) ${result.lastP99Ms < 100 ? 'met' : 'NOT met'}`);
    console.log(`  answer → each delivery:   p50 ${f(result.eachP50Ms)} ms, p99 ${f(result.eachP99Ms)} ms`);
    return result;
  } finally {
    worker?.postMessage('close');
    await worker?.terminate();
    await node.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSse();
