/**
 * Scale runs (issue #24 "Scale, on this machine"): N node processes on 127.0.0.1 (homes under one
 * temporary folder, bootstrapped to each other as `hearth dev --nodes N` makes them), one namespace
 * and one kv context joined by all, W writes spread round-robin over every node, then: the time
 * from the last acknowledged write until every node names the same state hash, every key read back
 * on every node (`get`, key by key), memory per node (RSS of its process), and the
 * traffic per write (payload by channel and connection bytes, from each node's network status).
 * Used by test/e2e/sync/scale.e2e.test.ts (small) and bench/scale.ts (20 × 2,000).
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { eventually, inBatches, joinContext, startCluster, type Cluster, type ClusterNode } from './cluster.ts';
import { makeBundle } from './bundles.ts';
import { buildTestApp } from './wasm-apps.ts';

export interface ScaleOptions {
  nodes: number;
  writes: number;
  /** writes in flight at once, over all nodes (default 8) */
  parallel?: number;
  /** deadline for the same state hash everywhere after the last acknowledged write (default 60 s) */
  convergeTimeoutMs?: number;
  /** the SDK's deadline per call (default 30 s) */
  callTimeoutMs?: number;
  log?: (line: string) => void;
}

interface Payload {
  channel: string;
  direction: string;
  bytes: number;
}

interface Traffic {
  bytesIn: number;
  bytesOut: number;
  gossipIn: number;
  payload: Payload[];
  mesh: number;
  peers: number;
}

export interface ScaleResult {
  nodes: number;
  writes: number;
  /** from the first write sent to the last one acknowledged */
  writeMs: number;
  /** from the last acknowledged write to the same state hash on every node */
  convergeMs: number;
  /** nodes where every key read back with its value */
  nodesWithEveryKey: number;
  /** resident memory per node after the run, MiB, and the peak each reached */
  rssMiB: number[];
  peakRssMiB: number[];
  /** per write, summed over all nodes: payload sent by channel, and connection bytes sent */
  perWrite: { payloadOut: Record<string, number>; bytesOut: number; gossipDelivered: number };
  /** gossipsub mesh size and connected peers on the context topic, per node */
  mesh: number[];
  topicPeers: number[];
  /** the delta of one write as gossiped (median payload bytes of one gossip message) */
  gossipMessageBytes: number;
  loadAverage: number[];
}

const UNINITIALIZED = 'f'.repeat(64);

async function rssOf(node: ClusterNode): Promise<{ rss: number; peak: number }> {
  const pid = node.process?.child.pid;
  if (!pid) return { rss: 0, peak: 0 };
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

async function trafficOf(node: ClusterNode, topic: string): Promise<Traffic> {
  const s = (await node.client.admin.networkStatus()) as unknown as {
    bytes: { in: number; out: number };
    gossip: { in: number };
    payload?: Payload[];
    topics: { topic: string; peers: number; mesh?: number }[];
  };
  const t = s.topics.find((x) => x.topic === topic);
  return { bytesIn: s.bytes.in, bytesOut: s.bytes.out, gossipIn: s.gossip.in, payload: s.payload ?? [], mesh: t?.mesh ?? 0, peers: t?.peers ?? 0 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export async function runScale(opts: ScaleOptions): Promise<ScaleResult> {
  const log = opts.log ?? (() => undefined);
  const parallel = opts.parallel ?? 8;
  const cluster: Cluster = await startCluster(opts.nodes, { callTimeoutMs: opts.callTimeoutMs ?? 30_000, startConcurrency: 2, startTimeoutMs: 180_000 });
  const nodes = cluster.nodes;
  const first = nodes[0]!;
  try {
    log(`${nodes.length} nodes started`);
    const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv.scale' });
    let appId = '';
    await inBatches(nodes, 4, async (n) => {
      appId = (await n.client.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
    });
    const ns = (await first.client.namespaces.create({ applicationId: appId })).namespaceId;
    const ctx = (await first.client.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
    // join, then sync at once, as a real client does: no retry of the sync
    await inBatches(nodes.slice(1), 4, (n) => joinContext(first, n, ns, ctx, 120_000));
    log('every node joined the context');
    const hashes = () => Promise.all(nodes.map(async (n) => (await n.client.contexts.get(ctx)).contextStateHash));
    const same = async () => {
      const hs = await hashes();
      return hs.every((h) => h === hs[0] && h !== UNINITIALIZED);
    };
    await eventually('every node holds the initial state', same, 120_000);
    // the gossip mesh forms over a few heartbeats once every node has subscribed
    await eventually('every node has a mesh on the context topic', async () => (await Promise.all(nodes.map((n) => trafficOf(n, ctx)))).every((t) => t.mesh > 0), 60_000);
    const before = await Promise.all(nodes.map((n) => trafficOf(n, ctx)));

    const t0 = performance.now();
    let next = 0;
    let retried = 0;
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        for (let i = next++; i < opts.writes; i = next++) {
          // a call past the runtime's 5 s deadline (a loaded machine) commits nothing, and one past the
          // SDK's may have committed: either is tried again (setting the same value twice is harmless)
          for (let attempt = 1; ; attempt++) {
            try {
              await nodes[i % nodes.length]!.client.rpc.execute(ctx, 'set', { key: `k${i}`, value: `v${i}` });
              break;
            } catch (err) {
              if (attempt >= 5 || !/deadline|timed out/.test(String((err as { data?: unknown }).data ?? (err as Error).message))) throw err;
              retried++;
            }
          }
        }
      }),
    );
    const lastAck = performance.now();
    log(`${opts.writes} writes acknowledged in ${((lastAck - t0) / 1000).toFixed(1)} s (${retried} tried again past the runtime's deadline)`);
    await eventually('the same state hash on every node', same, opts.convergeTimeoutMs ?? 60_000);
    const convergeMs = performance.now() - lastAck;
    log(`converged ${(convergeMs / 1000).toFixed(2)} s after the last acknowledged write`);

    const after = await Promise.all(nodes.map((n) => trafficOf(n, ctx)));
    let nodesWithEveryKey = 0;
    await inBatches(nodes, 4, async (n) => {
      // key by key with `get`: the kv test app's `entries` traps past ~2,000 keys (an app limit, not
      // replication's); each read tried up to three times (the runtime's 5 s deadline under load)
      let ok = true;
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let i = next++; i < opts.writes && ok; i = next++) {
            for (let attempt = 1; ; attempt++) {
              try {
                if ((await n.client.rpc.execute<string | null>(ctx, 'get', { key: `k${i}` })) !== `v${i}`) ok = false;
                break;
              } catch (err) {
                if (attempt >= 3) {
                  log(`${n.name}: get k${i} failed: ${(err as Error).message}`);
                  ok = false;
                  break;
                }
              }
            }
          }
        }),
      );
      if (ok) nodesWithEveryKey++;
    });
    const memory = await Promise.all(nodes.map(rssOf));

    const payloadOut: Record<string, number> = {};
    for (const [i, a] of after.entries()) {
      for (const p of a.payload) {
        if (p.direction !== 'out') continue;
        const was = before[i]!.payload.find((q) => q.channel === p.channel && q.direction === 'out')?.bytes ?? 0;
        payloadOut[p.channel] = (payloadOut[p.channel] ?? 0) + (p.bytes - was) / opts.writes;
      }
    }
    const sum = (f: (t: Traffic) => number) => after.reduce((n, a, i) => n + f(a) - f(before[i]!), 0);
    const gossipBytesIn = after.reduce((n, a, i) => {
      const inBytes = (t: Traffic) => t.payload.find((p) => p.channel === 'gossip' && p.direction === 'in')?.bytes ?? 0;
      return n + inBytes(a) - inBytes(before[i]!);
    }, 0);
    const delivered = sum((t) => t.gossipIn);
    return {
      nodes: nodes.length,
      writes: opts.writes,
      writeMs: lastAck - t0,
      convergeMs,
      nodesWithEveryKey,
      rssMiB: memory.map((m) => m.rss),
      peakRssMiB: memory.map((m) => m.peak),
      perWrite: { payloadOut, bytesOut: sum((t) => t.bytesOut) / opts.writes, gossipDelivered: delivered / opts.writes },
      mesh: after.map((a) => a.mesh),
      topicPeers: after.map((a) => a.peers),
      gossipMessageBytes: delivered > 0 ? gossipBytesIn / delivered : 0,
      loadAverage: loadavg(),
    };
  } finally {
    await cluster.destroy();
  }
}

/** The figures of a run, one per line. */
export function describeScale(r: ScaleResult): string[] {
  const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
  const channels = Object.entries(r.perWrite.payloadOut)
    .filter(([, v]) => v > 0)
    .map(([c, v]) => `${c} ${kib(v)}`)
    .join(', ');
  return [
    `${r.nodes} nodes, ${r.writes} writes: acknowledged in ${(r.writeMs / 1000).toFixed(1)} s; same state hash everywhere ${(r.convergeMs / 1000).toFixed(2)} s after the last acknowledged write`,
    `every key read back on ${r.nodesWithEveryKey}/${r.nodes} nodes`,
    `memory per node (RSS): median ${median(r.rssMiB).toFixed(0)} MiB, max ${Math.max(...r.rssMiB).toFixed(0)} MiB; peak max ${Math.max(...r.peakRssMiB).toFixed(0)} MiB`,
    `per write, summed over all nodes: payload sent ${channels || 'none'}; connection bytes sent ${kib(r.perWrite.bytesOut)} (${kib(r.perWrite.bytesOut / r.nodes)} per node); gossip messages delivered ${r.perWrite.gossipDelivered.toFixed(1)}`,
    `one gossiped delta ≈ ${r.gossipMessageBytes.toFixed(0)} B; mesh on the context topic: median ${median(r.mesh)} (min ${Math.min(...r.mesh)}, max ${Math.max(...r.mesh)}) of median ${median(r.topicPeers)} topic peers`,
    `load average ${r.loadAverage.map((x) => x.toFixed(2)).join(' ')}`,
  ];
}
