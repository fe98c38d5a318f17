/**
 * Benchmark (issue #5, event stream): N SSE subscribers (default 1000, BENCH_SSE_N) on one context
 * over real HTTP; for each of R rounds (default 30, BENCH_SSE_ROUNDS) one trigger, and the time
 * from sending the trigger to the frame reaching the *last* subscriber (goal: p99 < 100 ms).
 * Prints p50/p99 of that fan-out time, plus p50/p99 over every single delivery and the trigger's
 * own answer time.
 *
 * The trigger is a parameter. The default (the measure) is a real JSON-RPC `execute` of
 * the kv-store test app on the compiled node in its own process; `publishTrigger`
 * (BENCH_SSE_TRIGGER=bus) publishes a `StateMutation` on the bus of a node in this process.
 * Subscribers run in a worker thread (bench/sse-subscribers.mjs), not on the node's event loop.
 * Times run from the moment the trigger is sent (issue #14): the node publishes a call's frame once
 * the call is durable, which may be before its answer reaches the caller, so timing from the
 * answer would count such deliveries as 0 ms (or less).
 */
import { Worker } from 'node:worker_threads';
import { createClient, MemoryTokenStore, type Client } from '../src/client/index.ts';
import { startTestNode, type TestNode } from '../test/helpers/node.ts';
import { cpuSecs, loadNote, rows, startNode, threadCpuSecs } from './harness.ts';

export interface TriggerContext {
  /** the in-process node (bus trigger only) */
  node?: TestNode;
  contextId: string;
  token: string;
  round: number;
}
export type Trigger = (ctx: TriggerContext) => void | Promise<void>;

export interface TriggerSpec {
  /** runs the node in this process (the bus trigger needs its bus), else the compiled node in its own */
  inProcess?: boolean;
  /** prepares the node and answers the context to subscribe to */
  prepare(client: Client): Promise<string>;
  trigger: Trigger;
}

export const publishTrigger: TriggerSpec = {
  inProcess: true,
  prepare: async () => 'cd'.repeat(32),
  trigger: ({ node, contextId, round }) => {
    node!.node.bus.publish({
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
    prepare: async (c) => {
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
  /** the trigger's own time, send to answer */
  answerP50Ms: number;
  /** CPU the spawned node used per round (whole process, and its main thread), ms */
  nodeCpuMsPerRound?: number;
  mainCpuMsPerRound?: number;
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
  console.log(`# event stream (${loadNote()})`);
  const inProcess = spec.inProcess ? await startTestNode() : undefined;
  const spawned = spec.inProcess ? undefined : await startNode();
  const url = inProcess?.url ?? spawned!.url;
  let worker: Worker | undefined;
  try {
    const admin = createClient({ baseUrl: url, tokenStore: new MemoryTokenStore() });
    await admin.auth.login(inProcess ? { username: inProcess.adminUser, password: inProcess.adminPassword } : { username: 'dev', password: 'dev-password' });
    const token = (await admin.tokenStore.get())!.accessToken;
    const contextId = await spec.prepare(admin);

    worker = new Worker(new URL('./sse-subscribers.mjs', import.meta.url), { workerData: { url, token, contextId, n } });
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
    const answers: number[] = [];
    // the node's CPU over the rounds: far steadier than latencies on a shared machine
    const pid = spawned?.pid;
    const cpu0 = pid ? [await cpuSecs(pid), await threadCpuSecs(pid)] : undefined;
    for (let round = 0; round < rounds; round++) {
      const delivered = next(worker, 'round', 30_000);
      const sentAt = abs();
      await spec.trigger({ node: inProcess, contextId, token, round });
      answers.push(abs() - sentAt);
      const { arrivals } = await delivered;
      const times = arrivals.map((at) => at - sentAt);
      last.push(Math.max(...times));
      each.push(...times);
    }
    const cpu1 = pid ? [await cpuSecs(pid), await threadCpuSecs(pid)] : undefined;
    last.sort((a, b) => a - b);
    each.sort((a, b) => a - b);
    answers.sort((a, b) => a - b);
    const result: SseBenchResult = {
      subscribers: n,
      rounds,
      lastP50Ms: pct(last, 50),
      lastP99Ms: pct(last, 99),
      eachP50Ms: pct(each, 50),
      eachP99Ms: pct(each, 99),
      answerP50Ms: pct(answers, 50),
      ...(cpu0 && cpu1 ? { nodeCpuMsPerRound: ((cpu1[0]! - cpu0[0]!) * 1000) / rounds, mainCpuMsPerRound: ((cpu1[1]! - cpu0[1]!) * 1000) / rounds } : {}),
    };
    const f = (x: number) => x.toFixed(1);
    console.log(`sse fan-out: ${n} subscribers, ${rounds} rounds, trigger ${spec === publishTrigger ? 'bus publish' : 'JSON-RPC execute'}`);
    console.log(`  send → last subscriber: p50 ${f(result.lastP50Ms)} ms, p99 ${f(result.lastP99Ms)} ms (goal p99 < 100 ms) ${result.lastP99Ms < 100 ? 'met' : 'NOT met'}`);
    console.log(`  send → each delivery:   p50 ${f(result.eachP50Ms)} ms, p99 ${f(result.eachP99Ms)} ms; send → answer p50 ${f(result.answerP50Ms)} ms`);
    if (result.nodeCpuMsPerRound !== undefined) console.log(`  node CPU per round: ${f(result.nodeCpuMsPerRound)} ms (main thread ${f(result.mainCpuMsPerRound!)} ms)`);
    rows.push({
      measure: `SSE fan-out to ${n} subscribers (send → last)`,
      hearth: `p50 ${f(result.lastP50Ms)} ms, p99 ${f(result.lastP99Ms)} ms`,
      baseline: '-',
      goal: 'p99 < 100 ms',
      met: result.lastP99Ms < 100,
    });
    return result;
  } finally {
    worker?.postMessage('close');
    await worker?.terminate();
    await inProcess?.destroy();
    await spawned?.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSse();
