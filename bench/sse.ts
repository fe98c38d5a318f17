/**
 * Benchmark (issue #5, event stream): N SSE subscribers (default 1000, BENCH_SSE_N) on one context
 * over real HTTP; for each of R rounds (default 30, BENCH_SSE_ROUNDS) one trigger, and the time
 * from the trigger to the frame reaching the *last* subscriber. Prints p50/p99 of that fan-out
 * time, plus p50/p99 over every single delivery.
 *
 * The trigger is a parameter. The default publishes a `StateMutation` on the node's bus (what the
 * contexts domain does after a state-changing call); `rpcTrigger` (BENCH_SSE_TRIGGER=rpc) makes a
 * real JSON-RPC `execute` of the kv-store test app instead, measuring the whole path. Subscribers
 * run in this process, so they share the CPU with the node: the numbers are an upper bound.
 */
import http from 'node:http';
import { createClient, MemoryTokenStore, SseParser, type Client } from '../src/client/index.ts';
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

interface Subscriber {
  sessionId: string;
  /** arrival times (ms, performance.now) of context frames, in order */
  arrivals: number[];
  close(): void;
}

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

function openSubscriber(url: string, token: string, contextId: string): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}/sse`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET /sse answered ${res.statusCode}`));
      const parser = new SseParser();
      const sub: Subscriber = { sessionId: '', arrivals: [], close: () => req.destroy() };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const now = performance.now();
        for (const m of parser.push(chunk)) {
          const body = JSON.parse(m.data);
          if (body.type === 'connect') {
            sub.sessionId = body.session_id;
            resolve(sub);
          } else if (body.result?.contextId === contextId) {
            sub.arrivals.push(now);
          }
        }
      });
    });
    req.on('error', reject);
  });
}

export async function benchSse(
  n = Number(process.env.BENCH_SSE_N ?? 1000),
  rounds = Number(process.env.BENCH_SSE_ROUNDS ?? 30),
  spec: TriggerSpec = process.env.BENCH_SSE_TRIGGER === 'rpc' ? rpcTrigger() : publishTrigger,
): Promise<SseBenchResult> {
  const node = await startTestNode();
  const subs: Subscriber[] = [];
  try {
    const admin = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
    await admin.auth.login({ username: node.adminUser, password: node.adminPassword });
    const token = (await admin.tokenStore.get())!.accessToken;
    const contextId = await spec.prepare(node, admin);

    for (let i = 0; i < n; i += 50) {
      const batch = await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => openSubscriber(node.url, token, contextId)));
      await Promise.all(
        batch.map((s) => admin.http.json('/sse/subscription', { method: 'POST', body: { id: s.sessionId, method: 'subscribe', params: { contextIds: [contextId] } } })),
      );
      subs.push(...batch);
    }

    const last: number[] = [];
    const each: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const t0 = performance.now();
      await spec.trigger({ node, contextId, token, round });
      const deadline = Date.now() + 30_000;
      while (subs.some((s) => s.arrivals.length <= round)) {
        if (Date.now() > deadline) throw new Error(`round ${round}: not every subscriber got its frame within 30 s`);
        await new Promise((r) => setImmediate(r));
      }
      const times = subs.map((s) => s.arrivals[round] - t0);
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
    console.log(`  trigger → last subscriber: p50 ${f(result.lastP50Ms)} ms, p99 ${f(result.lastP99Ms)} ms`);
    console.log(`  trigger → each delivery:   p50 ${f(result.eachP50Ms)} ms, p99 ${f(result.eachP99Ms)} ms`);
    return result;
  } finally {
    for (const s of subs) s.close();
    await node.destroy();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSse();
