/**
 * Issue #24: "A blob held only by a node that is not directly connected is fetched through DHT
 * provider records." Four node processes on 127.0.0.1:
 *   S  the DHT node every other node bootstraps from; member of nothing, holds no blob;
 *   M  creates the namespace and the context and admits H and F (its invitations carry its address);
 *   H  member, holds the blob; F  member, fetches it.
 * H, F and M run the DHT as clients (`[network] dht_client = true`): they query and announce but
 * enter no routing table, so no DHT answer ever hands F the address of H (with every node a DHT
 * server, S would answer F's routing-table walk with H and F would connect to H within seconds:
 * test/e2e/network/dht-join.e2e.test.ts shows that peer routing). F is connected to S and M only, neither
 * of which has the blob; the only way to it is H's provider record on S.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareCluster } from '../../../src/cli/dev-cluster.ts';
import { loadConfig, saveConfig } from '../../../src/config/config.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { ClusterNode, eventually, freePortRun } from '../../helpers/cluster.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

let root: string;
let s: ClusterNode, m: ClusterNode, h: ClusterNode, f: ClusterNode;
let hPeerId: string;

const sha = (x: Uint8Array) => createHash('sha256').update(x).digest('hex');
const metric = async (n: ClusterNode, pattern: RegExp): Promise<number> => Number(pattern.exec(await (await fetch(`${n.url}/metrics`)).text())?.[1] ?? 0);
const connectedTo = async (n: ClusterNode) => ((await n.client.admin.networkStatus()).connections as { peerId: string }[]).map((c) => c.peerId);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hearth-dht-blobs-'));
  const base = await freePortRun(4);
  const homes = await prepareCluster({ nodes: 4, home: root, node: 'n', port: base, swarmPort: base + 1000 });
  const [hs, hm, hh, hf] = homes as [(typeof homes)[0], (typeof homes)[0], (typeof homes)[0], (typeof homes)[0]];
  const sAddr = `/ip4/127.0.0.1/tcp/${hs.swarmPort}/p2p/${hs.peerId}`;
  for (const [x, boot, client] of [
    [hs, [], false],
    [hm, [], true],
    [hh, [sAddr], true],
    [hf, [sAddr], true],
  ] as const) {
    const cfg = await loadConfig(x.paths.config, x.name);
    cfg.bootstrap.nodes = [...boot];
    cfg.network.dhtClient = client;
    await saveConfig(x.paths.config, cfg);
  }
  hPeerId = hh.peerId;
  [s, m, h, f] = homes.map((x) => new ClusterNode(x.name, root, x.swarmPort));
  await s.start();
  await Promise.all([m.start(), h.start(), f.start()]);
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([s, m, h, f].map((n) => n?.stop()));
  if (root) await rm(root, { recursive: true, force: true });
}, 60_000);

describe('a blob found through DHT provider records', { timeout: 180_000 }, () => {
  it('F, not connected to H, fetches the blob H holds through H’s provider record, and the bytes match', async () => {
    const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv.dhtblobs' });
    const appId = (await m.client.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
    const ns = (await m.client.namespaces.create({ applicationId: appId })).namespaceId;
    for (const joiner of [h, f]) {
      const { invitation } = await m.client.invitations.inviteToNamespace(ns);
      const account = (await joiner.client.invitations.joinNamespace(ns, invitation)).memberAccount;
      await eventually('M lists the joiner', async () => (await m.client.groups.members(ns)).some((x) => x.identity === account), 30_000);
    }
    const ctx = (await m.client.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
    for (const n of [h, f]) await eventually(`${n.name} knows the context`, async () => (await n.client.groups.contexts(ns)).some((c) => c.contextId === ctx), 30_000);

    const data = new Uint8Array(randomBytes(1024 * 1024 + 777)); // two chunks
    const { blob_id: blobId } = await h.client.blobs.upload(data, { contextId: ctx });
    await eventually('H announced the blob in the DHT', async () => (await metric(h, /hearth_blob_dht_announcements_total\{outcome="ok"\} (\d+)/)) >= 1, 60_000);

    // the setting this test is about: F has never been connected to H
    expect(await connectedTo(f)).not.toContain(hPeerId);
    expect(await metric(f, /hearth_blob_dht_lookups_total\{event="lookups"\} (\d+)/)).toBe(0);

    const got = await f.client.blobs.bytes(blobId, { contextId: ctx });
    expect(got.byteLength).toBe(data.byteLength);
    expect(sha(got)).toBe(sha(data));
    expect(await f.client.blobs.head(blobId)).toMatchObject({ blobId, size: data.length, hash: sha(data), source: 'local' });
    // found through the DHT: one lookup located a provider, and F is now connected to H (it dialed it)
    expect(await metric(f, /hearth_blob_dht_lookups_total\{event="located"\} (\d+)/)).toBe(1);
    expect(await connectedTo(f)).toContain(hPeerId);
    expect(await metric(h, /hearth_blob_peer_requests_served_total\{outcome="sent"\} (\d+)/)).toBe(1);
  });
});
