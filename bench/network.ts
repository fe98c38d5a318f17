/**
 * Benchmark (issue #12 §8, bench/network): how long a governance change made on node A takes to be
 * visible on nodes B and C. Three node processes on loopback (bootstrapped to each other as
 * `hearth dev --nodes 3` makes them); this process only drives them over HTTP. Each round adds a
 * member on A (`POST /groups/{ns}/members`) and waits for the `MemberAdded` group frame naming that
 * account on B's and C's event streams (SSE); the round's time runs from sending A's request to the
 * later of the two frames, so it includes A's own write. Goal: p50 < 100 ms (BENCH_NET_N rounds,
 * default 200).
 */
import { EventStream, type Client } from '../src/client/index.ts';
import { startCluster, eventually } from '../test/helpers/cluster.ts';

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

export interface NetworkBenchResult {
  rounds: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Resolves with the arrival time of the first frame of `groupId` that names `account`. */
function watch(client: Client, groupId: string): { stream: EventStream; arrival: (account: string) => Promise<number> } {
  const stream = new EventStream(client.http);
  const waiting = new Map<string, (t: number) => void>();
  const early = new Map<string, number>();
  stream.on('frame', (f) => {
    const t = performance.now();
    const text = JSON.stringify(f);
    const m = /"memberAccount":"([0-9a-f]{64})"/.exec(text);
    if (!m || !text.includes(groupId)) return;
    const resolve = waiting.get(m[1]!);
    if (resolve) {
      waiting.delete(m[1]!);
      resolve(t);
    } else early.set(m[1]!, t);
  });
  return {
    stream,
    arrival: (account) => {
      const seen = early.get(account);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no frame for ${account} within 10 s`)), 10_000);
        waiting.set(account, (t) => {
          clearTimeout(timer);
          resolve(t);
        });
      });
    },
  };
}

export async function benchNetwork(rounds = Number(process.env.BENCH_NET_N ?? 200)): Promise<NetworkBenchResult> {
  const cluster = await startCluster(3);
  const [a, b, c] = cluster.nodes.map((n) => n.client) as [Client, Client, Client];
  const streams: EventStream[] = [];
  try {
    for (const n of [a, b, c]) await eventually('two peers each', async () => (await n.admin.peers()).count === 2, 30_000);
    const ns = (await a.namespaces.create({ applicationId: 'be'.repeat(32) })).namespaceId;
    for (const joiner of [b, c]) await joiner.invitations.joinNamespace(ns, (await a.invitations.inviteToNamespace(ns)).invitation);
    const watchers = [b, c].map((x) => watch(x, ns));
    for (const w of watchers) {
      streams.push(w.stream);
      const connected = new Promise<void>((resolve) => w.stream.on('connect', () => resolve()));
      w.stream.start();
      await connected;
      await w.stream.subscribe({ groupIds: [ns] }); // the session is open: answered once subscribed
    }
    const times: number[] = [];
    for (let i = 0; i < rounds + 10; i++) {
      const account = Buffer.from(`bench-member-${i}`.padEnd(32, '.')).toString('hex');
      const t0 = performance.now();
      const arrivals = watchers.map((w) => w.arrival(account));
      await a.groups.addMembers(ns, [{ identity: account, role: 'Member' }]);
      const done = Math.max(...(await Promise.all(arrivals)));
      if (i >= 10) times.push(done - t0); // the first rounds warm connections and code up
    }
    times.sort((x, y) => x - y);
    return { rounds, p50Ms: pct(times, 0.5), p99Ms: pct(times, 0.99), maxMs: times[times.length - 1]! };
  } finally {
    for (const s of streams) s.stop();
    await cluster.destroy();
  }
}

export function printNetwork(r: NetworkBenchResult): void {
  const f = (n: number) => n.toFixed(1);
  console.log(`  governance change on A → visible on B and C (${r.rounds} changes, 3 processes on loopback):`);
  console.log(`    p50 ${f(r.p50Ms)} ms, p99 ${f(r.p99Ms)} ms, max ${f(r.maxMs)} ms (goal p50 < 100 ms) ${r.p50Ms < 100 ? 'met' : 'NOT met'}`);
}

if (import.meta.url === `file://${process.argv[1]}`) printNetwork(await benchNetwork());
