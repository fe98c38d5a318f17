/**
 * Issue #32 §3: QUIC where Node.js has it. Node processes on 127.0.0.1, three of them on Node.js 26
 * (helpers/node-lines.ts; skipped, saying why, when no Node.js 26 binary is there) and one on the
 * test run's own Node.js 20:
 *
 * - H (26) has both transports and knows nobody;
 * - Q (26) is given only H's QUIC address, T (20) only H's TCP address: both reach H, each over
 *   what it was given (T cannot run QUIC at all);
 * - P (26) knows nobody and joins on H's invitation, which offers H's QUIC and TCP addresses: it
 *   reaches H over QUIC (the preferred transport) and the context replicates over it.
 *
 * Every node joins H's context and reads H's write; H reads each one's write. The DHT is off, so
 * the connections are only those the configuration and the invitation make.
 *
 * On the test run's Node.js 20 (no other binary needed): a QUIC boot address is refused by `init`
 * and by `run` with one line naming the requirement, and a node says once that QUIC needs 22.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCluster } from '../../../src/cli/dev-cluster.ts';
import { loadConfig, saveConfig } from '../../../src/config/config.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { ClusterNode, eventually, freePortRun, joinContext } from '../../helpers/cluster.ts';
import { nodeLine } from '../../helpers/node-lines.ts';
import { runCli, spawnNode } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

const line = nodeLine(26);
if ('why' in line) console.warn(`quic.e2e.test.ts skipped: ${line.why}`);

interface Status {
  localPeerId: string;
  listenAddrs: string[];
  externalAddrs: string[];
  connections: { peerId: string; remoteAddr: string; direction: string }[];
}
const status = async (n: ClusterNode) => (await n.client.admin.networkStatus()) as unknown as Status;
/** the remote addresses of `n`'s connections to `peerId` */
const linksTo = async (n: ClusterNode, peerId: string) => (await status(n)).connections.filter((c) => c.peerId === peerId).map((c) => c.remoteAddr);

let root: string;
let h: ClusterNode, q: ClusterNode, t: ClusterNode, p: ClusterNode;
const ids: Record<string, string> = {};
let swarmH = 0;

beforeAll(async () => {
  if (!line.binary) return;
  root = await mkdtemp(join(tmpdir(), 'hearth-quic-'));
  const base = await freePortRun(4);
  const members = await prepareCluster({ nodes: 4, home: root, node: 'n', port: base, swarmPort: base + 1000 });
  const [mh, mq, mt, mp] = members as [(typeof members)[0], (typeof members)[0], (typeof members)[0], (typeof members)[0]];
  swarmH = mh.swarmPort;
  const boot = { [mh.name]: [], [mq.name]: [`/ip4/127.0.0.1/udp/${mh.swarmPort}/quic-v1/p2p/${mh.peerId}`], [mt.name]: [`/ip4/127.0.0.1/tcp/${mh.swarmPort}/p2p/${mh.peerId}`], [mp.name]: [] };
  for (const m of members) {
    const cfg = await loadConfig(m.paths.config, m.name);
    cfg.bootstrap.nodes = boot[m.name]!;
    cfg.network.dht = false; // its table upkeep would connect the nodes to each other by other ways
    await saveConfig(m.paths.config, cfg);
    ids[m.name] = m.peerId;
  }
  const on = (m: (typeof members)[0], binary: string) => new ClusterNode(m.name, root, m.swarmPort, [], 20_000, 90_000, binary);
  [h, q, t, p] = [on(mh, line.binary), on(mq, line.binary), on(mt, process.execPath), on(mp, line.binary)];
  await h.start();
  await Promise.all([q.start(), t.start(), p.start()]);
}, 240_000);

afterAll(async () => {
  await Promise.allSettled([h, q, t, p].map((n) => n?.stop()));
  if (root) await rm(root, { recursive: true, force: true });
}, 60_000);

describe('QUIC on Node.js 26 beside TCP', { timeout: 240_000 }, () => {
  it.skipIf(!line.binary)(`H lists /udp/<swarm port>/quic-v1 beside TCP; the Node.js 20 node lists TCP only (Node.js ${line.binary ? line.version : 'none'})`, async () => {
    const sh = await status(h);
    expect(sh.listenAddrs).toEqual([`/ip4/127.0.0.1/tcp/${swarmH}`, `/ip4/127.0.0.1/udp/${swarmH}/quic-v1`]);
    expect(sh.externalAddrs).toContain(`/ip4/127.0.0.1/udp/${swarmH}/quic-v1/p2p/${sh.localPeerId}`);
    const st = await status(t);
    expect(st.listenAddrs).toHaveLength(1);
    expect(st.listenAddrs[0]).toMatch(/^\/ip4\/127\.0\.0\.1\/tcp\/\d+$/);
    expect(st.externalAddrs.join(' ')).not.toContain('quic');
  });

  it.skipIf(!line.binary)('a peer given H’s QUIC address and a Node.js 20 peer given its TCP address both reach H, each over its own transport', async () => {
    await eventually('Q and T connected to H', async () => (await linksTo(q, ids[h.name]!)).length > 0 && (await linksTo(t, ids[h.name]!)).length > 0, 60_000);
    for (const a of await linksTo(q, ids[h.name]!)) expect(a).toMatch(new RegExp(`^/ip4/127\\.0\\.0\\.1/udp/${swarmH}/quic-v1/p2p/`));
    for (const a of await linksTo(t, ids[h.name]!)) expect(a).toMatch(new RegExp(`^/ip4/127\\.0\\.0\\.1/tcp/${swarmH}/p2p/`));
    // and H sees them so: Q's over UDP, T's over TCP
    for (const a of await linksTo(h, ids[q.name]!)) expect(a).toContain('/quic-v1/');
    const fromT = await linksTo(h, ids[t.name]!);
    expect(fromT.length).toBeGreaterThan(0);
    for (const a of fromT) expect(a).toContain('/tcp/');
  });

  it.skipIf(!line.binary)('P joins on H’s invitation over QUIC (offered both), and a context replicates between all four', async () => {
    const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv.quic' });
    let appId = '';
    for (const n of [h, q, t, p]) appId = (await n.client.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
    const ns = (await h.client.namespaces.create({ applicationId: appId })).namespaceId;
    const ctx = (await h.client.contexts.create({ groupId: ns, initializationParams: [] })).contextId;
    await h.client.rpc.execute(ctx, 'set', { key: 'h', value: 'from H' });

    const { invitation } = await h.client.invitations.inviteToNamespace(ns);
    const offered = invitation.admitter_addrs ?? [];
    expect(offered.some((a) => a.includes(`/udp/${swarmH}/quic-v1/`))).toBe(true);
    expect(offered.some((a) => a.includes(`/tcp/${swarmH}/`))).toBe(true);
    await p.client.invitations.joinNamespace(ns, invitation);
    const links = await linksTo(p, ids[h.name]!);
    expect(links.length).toBeGreaterThan(0);
    for (const a of links) expect(a).toContain(`/udp/${swarmH}/quic-v1/`);
    await p.client.groups.sync(ns);
    await eventually('P lists the context', async () => (await p.client.groups.contexts(ns)).some((x) => x.contextId === ctx), 30_000);
    await p.client.contexts.join(ctx);

    // Q and T join the same way (T, on Node.js 20, reaches H over TCP from the same invitation)
    await joinContext(h, q, ns, ctx, 30_000);
    await joinContext(h, t, ns, ctx, 30_000);
    for (const a of await linksTo(t, ids[h.name]!)) expect(a).toContain('/tcp/');

    const entries = (n: ClusterNode) => n.client.rpc.execute<Record<string, string>>(ctx, 'entries', {});
    for (const n of [p, q, t]) await eventually(`${n.name} reads H’s write`, async () => (await entries(n))['h'] === 'from H', 60_000);
    for (const n of [p, q, t]) await n.client.rpc.execute(ctx, 'set', { key: n.name, value: `from ${n.name}` });
    await eventually('H reads the writes of P, Q and T', async () => {
      const e = await entries(h);
      return [p, q, t].every((n) => e[n.name] === `from ${n.name}`);
    }, 60_000);
    // P's link to H stayed QUIC throughout
    for (const a of await linksTo(p, ids[h.name]!)) expect(a).toContain('/quic-v1/');
  });
});

describe('QUIC addresses on Node.js 20', { timeout: 120_000 }, () => {
  const PEER = '12D3KooWShNVPbjfqyhSM2E9dJKVdT5tCLvdKajRVUapAXrVGNph';
  const QUIC = `/ip4/127.0.0.1/udp/2428/quic-v1/p2p/${PEER}`;
  let dir: string;
  beforeAll(async () => void (dir = await mkdtemp(join(tmpdir(), 'hearth-quic20-'))));
  afterAll(async () => rm(dir, { recursive: true, force: true }));
  const oneLine = (stderr: string) => stderr.trim().split('\n');

  it(`init --boot-nodes <quic address> is refused with one line naming Node.js 22 (this is Node.js ${process.versions.node})`, async () => {
    const r = await runCli(['init', '--home', join(dir, 'a'), '--boot-nodes', `/ip4/127.0.0.1/tcp/2428/p2p/${PEER}`, QUIC]);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toEqual([`hearth: --boot-nodes: ${QUIC} is a QUIC address: QUIC needs Node.js 22 or later, this is Node.js ${process.versions.node} (give a /tcp/ address, or run the node on Node.js 22+)`]);
    const again = await runCli(['init', '--home', join(dir, 'a'), '--boot-nodes', `/ip4/127.0.0.1/udp/2428/quic/p2p/${PEER}`]);
    expect(again.code).toBe(2);
    expect(oneLine(again.stderr)).toEqual([expect.stringMatching(/draft-29 \(\/quic\) is not supported; use \/udp\/<port>\/quic-v1$/)]);
  });

  it('run with a QUIC address in [bootstrap] nodes exits with one line; a TCP-only node says once that QUIC needs Node.js 22', async () => {
    const home = join(dir, 'b');
    const init = await runCli(['init', '--home', home, '--dev', '--server-port', '0', '--swarm-port', '0', '--boot-nodes', `/ip4/127.0.0.1/tcp/1/p2p/${PEER}`]);
    expect(init.code, init.stderr).toBe(0);
    const config = join(home, 'default', 'config.toml');
    const cfg = await loadConfig(config, 'default');
    cfg.bootstrap.nodes = [QUIC];
    await saveConfig(config, cfg);
    const env = { MERO_AUTH_ADMIN_USER: 'dev', MERO_AUTH_ADMIN_PASSWORD: 'dev-password' };
    const r = await runCli(['run', '--home', home], env);
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toEqual([`hearth: [bootstrap] nodes: ${QUIC} is a QUIC address: QUIC needs Node.js 22 or later, this is Node.js ${process.versions.node} (give a /tcp/ address, or run the node on Node.js 22+)`]);

    cfg.bootstrap.nodes = [];
    await saveConfig(config, cfg);
    const node = await spawnNode(['run', '--home', home, '--port', '0', '--log-format', 'json'], { ...env, HEARTH_LOG: 'info' });
    try {
      const told = node.output().split('\n').filter((l) => l.includes('QUIC needs Node.js 22 or later'));
      expect(told).toHaveLength(1);
      expect(node.output()).toMatch(/"msg":"network: listening"/);
      expect(node.output()).not.toContain('quic-v1');
    } finally {
      node.child.kill('SIGTERM');
      await node.exited;
    }
  });

  it.skipIf(!line.binary)('init --boot-nodes <quic address> is accepted on Node.js 26', async () => {
    const r = await runCli(['init', '--home', join(dir, 'c'), '--boot-nodes', QUIC], {}, { nodeBinary: line.binary });
    expect(r.code, r.stderr).toBe(0);
    expect((await loadConfig(join(dir, 'c', 'default', 'config.toml'), 'default')).bootstrap.nodes).toEqual([QUIC]);
  });
});
