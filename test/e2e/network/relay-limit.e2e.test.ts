/**
 * Issue #24: "replication keeps working over the relay when the upgrade fails (bounded relay data;
 * sync falls back to pulling in batches)". The NAT lab of nat-relay.e2e.test.ts
 * (test/helpers/nat-lab.ts, used through its API): R a public relay whose circuits carry at most
 * 256 KiB (`relay_data_limit_bytes`), A and B each behind its own NAT, knowing only R, so every
 * connection between them is a circuit through R. A writes a kv context more than twice as large as
 * one circuit's limit; R cuts circuit after circuit, B redials A through R and pulls the rest in
 * batches (whole 64 KiB frames kept across cuts, docs/sync.md), and both converge.
 *
 * Skipped, saying why, without root, `ip` or `iptables`. It was opt-in for a while: it failed 4 of 6
 * full-suite or side-by-side runs (after ~30 cut circuits B and A stayed apart). The causes, all
 * fixed in the product (docs/network.md "Relay limits and abuse"): a kept relayed address's redial
 * backoff doubled on every cut circuit (bootstrap.ts: a circuit spent at its data limit is progress,
 * however short); R's guard counted the circuits it had itself cut (relay-guard.ts); every request
 * to a peer reached only through R opened a new circuit that libp2p then dropped as a duplicate,
 * and A refused past 5 relayed connections a second from R's address (dial-retry.ts: streams open
 * on the connection already there); gossipsub lost its stream to a peer when one of two relayed
 * connections was cut (gossip-service.ts). Since: 6 of 6 passed in a row beside the other NAT-lab
 * files, and 5 of 5 beside six other e2e files, with two busy loops on this 2-core machine (load 3–7). On failure it says where it stood (`whereItStood`);
 * HEARTH_E2E_LOG_DIR=<dir> keeps the three nodes' whole logs (`rlim-r.log`, …; startNatLab; with
 * LAB_LOG=debug and DEBUG=libp2p:circuit-relay*,libp2p:connection-manager* for libp2p's own).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, joinContext, kvContextOn, type ClusterNode } from '../../helpers/cluster.ts';
import { NatLab, startNatLab } from '../../helpers/nat-lab.ts';

const LIMIT = 256 * 1024;
const lab = new NatLab('rlim');
let unavailable: string | undefined;
let r: ClusterNode, a: ClusterNode, b: ClusterNode;

interface Status {
  localPeerId: string;
  relays: { peerId: string }[];
  connections: { peerId: string; remoteAddr: string }[];
}
const net = async (n: ClusterNode) => (await n.client.admin.networkStatus()) as unknown as Status;

/** a sample of R's `/metrics` (0 when absent) */
async function metric(n: ClusterNode, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${n.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/**
 * What decides a failure, for the next one to say (issue #24's note): A's and B's reservations,
 * advertised addresses, connections, penalties and bans; R's reservations held, guard counters and
 * relay metrics; B's sync view of the context (its last dial error in full); the nodes' libp2p and
 * hearth logs about dials, circuits and refusals (HEARTH_E2E_LOG_DIR keeps the whole logs).
 */
async function whereItStood(ctx: string): Promise<string> {
  const out: string[] = [];
  const short = (id: string) => id.slice(-6);
  for (const n of [r, a, b]) {
    try {
      const s = (await n.client.admin.networkStatus()) as unknown as Record<string, unknown> & Status & { externalAddrs: string[]; banned: unknown[]; penalties: unknown; internet?: unknown };
      const conns = s.connections.map((c) => `${short(c.peerId)} ${(c as { direction?: string }).direction} ${c.remoteAddr.replace(/\/p2p\/12D3KooW\w+/g, (m) => `/p2p/…${m.slice(-6)}`)}`);
      out.push(`${n.name} (${short(s.localPeerId)}): relays ${JSON.stringify(s.relays)}; external ${JSON.stringify(s.externalAddrs)}; connections ${JSON.stringify(conns)}; penalties ${JSON.stringify(s.penalties)}; banned ${JSON.stringify(s.banned)}; internet ${JSON.stringify(s.internet)}`);
    } catch (e) {
      out.push(`${n.name}: no network status (${(e as Error).message})`);
    }
  }
  const metrics = (await (await fetch(`${r.url}/metrics`)).text()).split('\n').filter((l) => l.startsWith('hearth_relay') || l.includes('relay_abuse'));
  out.push(`R's relay metrics: ${metrics.join('; ')}`);
  out.push(`B's sync: ${JSON.stringify(await b.client.contexts.syncStatus(ctx).catch((e: Error) => e.message))}`);
  const interesting = /backfill|pull|circuit|relay|dial|cut|refused|denied|reservation|bootstrap/i;
  for (const n of [a, b]) out.push(`${n.name}'s log:\n${(n.process?.output() ?? '').split('\n').filter((l) => interesting.test(l)).slice(-40).join('\n')}`);
  return out.join('\n');
}

beforeAll(async () => {
  ({ unavailable, r, a, b } = await startNatLab(lab, 'relay-limit.e2e.test.ts', {
    configure: (name, cfg) => {
      if (name === 'r') cfg.network.relayDataLimitBytes = LIMIT;
    },
  }));
}, 120_000);
afterAll(() => lab.tearDown(), 60_000);

describe('replication through a relay with a small data limit', { timeout: 420_000 }, () => {
  it('a context several times the limit converges across cut circuits', async (t) => {
    t.skip(unavailable !== undefined, `cannot build the NAT lab: ${unavailable}`);
    const rId = (await net(r)).localPeerId;
    for (const n of [a, b]) await eventually(`${n.name} holds a reservation on R`, async () => (await net(n)).relays.some((x) => x.peerId === rId), 90_000);

    const { ns, ctx } = await kvContextOn([a, b], a, 'com.hearth.kv.rlim');
    await joinContext(a, b, ns, ctx);
    const root = async (n: ClusterNode) => (await n.client.contexts.get(ctx)).contextStateHash;
    await eventually('B holds the context state', async () => (await root(b)) !== 'f'.repeat(64) && (await root(b)) === (await root(a)), 90_000);

    // 640 KiB of values (2 KiB each: the test app panics on a 16 KiB one), more than twice what one
    // circuit may carry, and deltas carry more than their values
    const value = 'x'.repeat(2 * 1024);
    const writes = 320;
    for (let i = 0; i < writes; i++) await a.client.rpc.execute(ctx, 'set', { key: `k${i}`, value: `${i}:${value}` });
    await b.client.rpc.execute(ctx, 'set', { key: 'from-b', value: 'b' });

    try {
      // 240 s: beside six other e2e files and two busy loops it took up to ~100 s (each cut aborts
      // every pull in flight on the circuit: R cut 23–127 circuits of 256 KiB for 640 KiB, docs/network.md)
      await eventually('the same root hash on A and B', async () => (await root(a)) === (await root(b)), 240_000);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${await whereItStood(ctx)}`);
    }
    // read key by key: the test app panics answering `entries` of 640 KiB
    for (let i = 0; i < writes; i += 7) expect(await b.client.rpc.execute(ctx, 'get', { key: `k${i}` })).toBe(`${i}:${value}`);
    expect(await b.client.rpc.execute(ctx, 'get', { key: `k${writes - 1}` })).toBe(`${writes - 1}:${value}`);
    expect(await a.client.rpc.execute(ctx, 'get', { key: 'from-b' })).toBe('b');

    // what it took, for the docs' figures (circuits opened, cut, closed otherwise)
    const relayMetrics = (await (await fetch(`${r.url}/metrics`)).text()).split('\n').filter((l) => l.startsWith('hearth_relay_circuits_total'));
    console.info(`relay-limit: converged; R's circuits: ${relayMetrics.map((l) => l.replace('hearth_relay_circuits_total', '')).join(', ')}`);
    // it went through R, and R cut circuits at the limit on the way
    const aId = (await net(a)).localPeerId;
    for (const c of (await net(b)).connections.filter((x) => x.peerId === aId)) expect(c.remoteAddr).toContain('/p2p-circuit');
    expect(await metric(r, 'hearth_relay_circuits_total', 'outcome="data_limit"')).toBeGreaterThanOrEqual(2);
    // every value crossed R: into it from a circuit's source (A dialed) or out of it to one (B dialed)
    const relayed = (await metric(r, 'hearth_relay_bytes_total', 'direction="in"')) + (await metric(r, 'hearth_relay_bytes_total', 'direction="out"'));
    expect(relayed).toBeGreaterThan(writes * 2 * 1024);
    expect(await metric(r, 'hearth_network_penalties_total', 'reason="relay_abuse"')).toBe(0);
  });
});
