/**
 * Benchmark (issue #24, bench/nat): replication between two homes of the NAT lab
 * (test/helpers/nat-lab.ts: network namespaces, needs root, `ip` and `iptables`; skipped, saying
 * why, without them), over the three kinds of connection a pair of homes can end up with:
 *
 * - **direct**: topology `forwarded`; the writer W is home A (behind a port forward, public), so the
 *   reader J (home B) dials A's forwarded address from the invitation: direct from the first packet;
 * - **relayed**: topology `masquerade`; both homes private, every byte goes through R;
 * - **upgraded**: topology `forwarded`; W is home B (private, reserved on R), J is home A, which
 *   joins through B's relayed address; DCUtR's connection reversal upgrades it to direct.
 *
 * Per case, three node processes (R, A, B; the DHT off, as in nat-upgrade.e2e.test.ts, so the first
 * A–B connection is the one the invitation gives). Figures:
 * 1. start → first converged read: W holds a kv context with one write; J's process is spawned and
 *    the clock starts; J waits for its reachability verdict (so that A, when it is J, advertises its
 *    forwarded address before it dials), joins W's namespace and context on W's invitation, and the
 *    clock stops at J's first read of W's value.
 * 2. write on W → readable on J: a JSON-RPC `set` on W, then `get` on J polled every 2 ms until it
 *    answers the new value; from sending the `set` to that answer (so W's own write and the polling
 *    are in it). BENCH_NAT_N writes (default 100) after 10 warm-up writes; p50 and p99.
 * The kind of connection is checked before the writes (relayed: every A–B connection through R;
 * direct and upgraded: none), so a figure is never filed under the wrong case.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, joinContext, type ClusterNode } from '../test/helpers/cluster.ts';
import { makeBundle } from '../test/helpers/bundles.ts';
import { NatLab, natLabNodes, type NatTopology, haltLabNode } from '../test/helpers/nat-lab.ts';
import { buildTestApp } from '../test/helpers/wasm-apps.ts';

const pct = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;

export type NatCase = 'direct' | 'relayed' | 'upgraded';

export interface NatCaseResult {
  kind: NatCase;
  writes: number;
  p50Ms: number;
  p99Ms: number;
  startToReadMs: number;
  /** the 1-minute load average when the case finished */
  load: number;
}

interface Status {
  localPeerId: string;
  autonat: { reachability: string };
  connections: { peerId: string; remoteAddr: string }[];
  internet?: { upgradeCounts: { attempts: number; successes: number } };
}
const net = async (n: ClusterNode) => (await n.client.admin.networkStatus()) as unknown as Status;

const CASES: Record<NatCase, { topology: NatTopology; writer: 'a' | 'b' }> = {
  direct: { topology: 'forwarded', writer: 'a' },
  relayed: { topology: 'masquerade', writer: 'a' },
  upgraded: { topology: 'forwarded', writer: 'b' },
};

/** One case; resolves with why it could not run when the lab cannot be built. */
export async function benchNatCase(kind: NatCase, writes = Number(process.env.BENCH_NAT_N ?? 100)): Promise<NatCaseResult | string> {
  const { topology, writer } = CASES[kind];
  const lab = new NatLab(`bn${kind.slice(0, 2)}`, topology);
  const unavailable = await lab.setUp();
  if (unavailable !== undefined) return unavailable;
  const home = await mkdtemp(join(tmpdir(), 'hearth-bench-nat-'));
  const started: ClusterNode[] = [];
  try {
    const nodes = await natLabNodes(lab, home, (_name, cfg) => {
      cfg.network.dht = false;
    });
    const w = nodes[writer];
    const j = writer === 'a' ? nodes.b : nodes.a;
    const wants = (n: ClusterNode) => (kind === 'relayed' || n === nodes.b ? 'private' : 'public');
    for (const n of [nodes.r, w]) {
      await n.start();
      started.push(n);
    }
    await eventually(`W (${w.name}) knows it is ${wants(w)}`, async () => (await net(w)).autonat.reachability === wants(w), 60_000);
    if (wants(w) === 'private') await eventually('W holds a relay reservation', async () => ((await w.client.admin.networkStatus()) as unknown as { relays: unknown[] }).relays.length > 0, 60_000);

    const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: `com.hearth.kv.bench-nat-${kind}` });
    const install = async (n: ClusterNode) => (await n.client.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
    const appId = await install(w);
    const ns = (await w.client.namespaces.create({ applicationId: appId })).namespaceId;
    const ctx = (await w.client.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
    await w.client.rpc.execute(ctx, 'set', { key: 'first', value: 'before J started' });

    // 1. J's start → its first converged read (application install included: a joiner needs it)
    const t0 = performance.now();
    await j.start();
    started.push(j);
    await install(j);
    await eventually(`J (${j.name}) knows it is ${wants(j)}`, async () => (await net(j)).autonat.reachability === wants(j), 60_000);
    await joinContext(w, j, ns, ctx);
    await eventually('J reads W’s value', async () => (await j.client.rpc.execute(ctx, 'get', { key: 'first' })) === 'before J started', 60_000);
    const startToReadMs = performance.now() - t0;

    // the connection is what the case says
    const [wId, jId] = [(await net(w)).localPeerId, (await net(j)).localPeerId];
    const between = async () => [...(await net(w)).connections.filter((c) => c.peerId === jId), ...(await net(j)).connections.filter((c) => c.peerId === wId)];
    await eventually(`the A–B connection is ${kind === 'relayed' ? 'relayed' : 'direct'}`, async () => {
      const conns = await between();
      return conns.length >= 2 && conns.every((c) => c.remoteAddr.includes('/p2p-circuit') === (kind === 'relayed'));
    }, 60_000);
    if (kind === 'upgraded' && (await net(w)).internet?.upgradeCounts.successes === 0) throw new Error('upgraded case: W counts no direct upgrade');

    // 2. write on W → readable on J
    const times: number[] = [];
    for (let i = 0; i < writes + 10; i++) {
      const value = `v${i}`;
      const t = performance.now();
      await w.client.rpc.execute(ctx, 'set', { key: 'bench', value });
      const end = Date.now() + 30_000;
      while ((await j.client.rpc.execute(ctx, 'get', { key: 'bench' })) !== value) {
        if (Date.now() > end) throw new Error(`write ${i} not readable on J within 30 s`);
        await new Promise((r) => setTimeout(r, 2));
      }
      if (i >= 10) times.push(performance.now() - t);
    }
    times.sort((x, y) => x - y);
    return { kind, writes, p50Ms: pct(times, 0.5), p99Ms: pct(times, 0.99), startToReadMs, load: loadavg()[0]! };
  } finally {
    await Promise.allSettled(started.map(haltLabNode));
    await lab.tearDown();
    await rm(home, { recursive: true, force: true });
  }
}

export async function benchNat(): Promise<(NatCaseResult | { kind: NatCase; skipped: string })[]> {
  const out: (NatCaseResult | { kind: NatCase; skipped: string })[] = [];
  for (const kind of ['direct', 'relayed', 'upgraded'] as const) {
    const r = await benchNatCase(kind);
    out.push(typeof r === 'string' ? { kind, skipped: r } : r);
  }
  return out;
}

export function printNat(results: Awaited<ReturnType<typeof benchNat>>): void {
  const f = (n: number) => n.toFixed(1);
  console.log('  two homes of the NAT lab (network namespaces), write on W → readable on J, and J’s start → first converged read:');
  for (const r of results) {
    if ('skipped' in r) {
      console.log(`    ${r.kind}: skipped (cannot build the NAT lab: ${r.skipped})`);
      continue;
    }
    console.log(`    ${r.kind.padEnd(8)} p50 ${f(r.p50Ms)} ms, p99 ${f(r.p99Ms)} ms (${r.writes} writes); start → first read ${(r.startToReadMs / 1000).toFixed(1)} s; load average ${r.load.toFixed(2)}`);
  }
  const by = Object.fromEntries(results.filter((r): r is NatCaseResult => !('skipped' in r)).map((r) => [r.kind, r]));
  if (by.direct && by.relayed && by.upgraded) {
    console.log(`    p50 against direct (same run): relayed ×${(by.relayed.p50Ms / by.direct.p50Ms).toFixed(2)}, upgraded ×${(by.upgraded.p50Ms / by.direct.p50Ms).toFixed(2)}`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) printNat(await benchNat());
