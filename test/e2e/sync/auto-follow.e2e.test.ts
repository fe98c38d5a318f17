/**
 * Issue 21 §1 end to end: auto-follow on three node processes (127.0.0.1) running the kv-store test
 * application, driven through the SDK, with no `POST /contexts/{id}/join` anywhere unless a step
 * says so. B and C join a namespace by invitation; A creates one context before their joins and one
 * after, and writes to both; B and C list both and read A's writes. A member with auto-follow off
 * does not join a new context (and joins it, with its stream reporting it, once the flag is on
 * again); an open subgroup's context is followed only with `autoFollowSubgroups`; a node killed -9
 * during the passes that follow a namespace of many contexts holds and reads all of them after its
 * restart; the explicit join stays idempotent with the same member key; the CLI sets the flag.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStream } from '../../../src/client/index.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { CliUser } from '../../helpers/cli.ts';
import { eventually, startCluster, type Cluster, type ClusterNode } from '../../helpers/cluster.ts';
import { ADMIN_PASSWORD, ADMIN_USER } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

let cluster: Cluster;
let a: ClusterNode, b: ClusterNode, c: ClusterNode;
let appId: string;
let ns: string;
const accounts = new Map<ClusterNode, string>();

const get = (n: ClusterNode, ctx: string, key: string) => n.client.rpc.execute<string | null>(ctx, 'get', { key });
const holds = async (n: ClusterNode, ctx: string) => (await n.client.contexts.list()).some((x) => x.id === ctx);
const reads = (n: ClusterNode, ctx: string, key: string, value: string) => async () => (await get(n, ctx, key)) === value;
const knows = (n: ClusterNode, group: string, ctx: string) => async () => (await n.client.groups.contexts(group)).some((x) => x.contextId === ctx);

async function create(groupId: string, value: string): Promise<string> {
  const ctx = (await a.client.contexts.create({ groupId, initializationParams: [] })).contextId;
  await a.client.rpc.execute(ctx, 'set', { key: 'k', value });
  return ctx;
}

async function joinNamespace(n: ClusterNode, namespaceId: string): Promise<string> {
  const { invitation } = await a.client.invitations.inviteToNamespace(namespaceId);
  return (await n.client.invitations.joinNamespace(namespaceId, invitation)).memberAccount;
}

beforeAll(async () => {
  cluster = await startCluster(3);
  [a, b, c] = cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
  const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.kv.follow' });
  for (const n of cluster.nodes) {
    appId = (await n.client.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
  }
  ns = (await a.client.namespaces.create({ applicationId: appId })).namespaceId;
}, 180_000);

afterAll(async () => {
  await cluster?.destroy();
});

describe('auto-follow across three node processes', { timeout: 120_000 }, () => {
  let first: string, second: string;

  it('joiners by invitation list and read both contexts (created before and after their joins) without a join call', async () => {
    first = await create(ns, 'one');
    expect(await holds(b, first)).toBe(false);
    accounts.set(b, await joinNamespace(b, ns));
    accounts.set(c, await joinNamespace(c, ns));
    second = await create(ns, 'two');
    for (const n of [b, c]) {
      await eventually(`${n.name} reads the first context`, reads(n, first, 'k', 'one'), 30_000);
      await eventually(`${n.name} reads the second context`, reads(n, second, 'k', 'two'), 30_000);
      const listed = (await n.client.contexts.list()).map((x) => x.id);
      expect(listed).toEqual(expect.arrayContaining([first, second]));
      const rootOf = async (x: ClusterNode) => (await x.client.contexts.get(second)).contextStateHash;
      await eventually(`${n.name} has A's root`, async () => (await rootOf(n)) === (await rootOf(a)));
    }
    // writes of a joiner that never called join reach A
    await c.client.rpc.execute(first, 'set', { key: 'from-c', value: 'c' });
    await eventually('A reads C’s write', reads(a, first, 'from-c', 'c'));
    // the explicit join keeps working: idempotent, with the key auto-follow took
    const owned = (await b.client.contexts.identitiesOwned(second)).identities;
    expect(owned).toHaveLength(1);
    expect(await b.client.contexts.join(second)).toEqual({ contextId: second, memberPublicKey: owned[0] });
    expect((await b.client.contexts.identitiesOwned(second)).identities).toEqual(owned);
  });

  it('a member with auto-follow off does not join a new context; on again, it joins and its stream reports the context', async () => {
    // through the CLI: a bad switch is one line naming the option, then the real call
    const cli = await CliUser.create(c.url);
    try {
      await cli.login(ADMIN_USER, ADMIN_PASSWORD);
      const bad = await cli.run(['group', 'members', 'set-auto-follow', ns, accounts.get(c)!, '--contexts', 'maybe']);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      expect(bad.stderr).toMatch(/--contexts.*expected on or off/);
      const set = await cli.json(['group', 'members', 'set-auto-follow', ns, accounts.get(c)!, '--contexts', 'off']);
      expect(set).toEqual({ groupId: ns, account: accounts.get(c), autoFollowContexts: false, autoFollowSubgroups: false });
    } finally {
      await cli.destroy();
    }
    // C applied its own flag before answering: whatever order the ops reach the nodes in, C's state
    // has the flag off when it learns of the next context
    const thirdCtx = await create(ns, 'three');
    await eventually('B reads the third context', reads(b, thirdCtx, 'k', 'three'), 30_000);
    await eventually('C knows the third context', knows(c, ns, thirdCtx));
    await new Promise((r) => setTimeout(r, 1_000)); // a pass C would run has had time to run
    expect(await holds(c, thirdCtx)).toBe(false);
    await expect(c.client.contexts.get(thirdCtx)).rejects.toMatchObject({ status: 404 });
    expect(await holds(c, first)).toBe(true); // joined before the flag went off: stays joined

    const stream = new EventStream(c.client.http);
    const frames: unknown[] = [];
    stream.on('frame', (f) => frames.push(f));
    const open = new Promise<void>((resolve) => stream.on('connect', () => resolve()));
    await stream.subscribe({ contextIds: [thirdCtx] });
    stream.start();
    try {
      await open;
      await c.client.groups.setAutoFollow(ns, accounts.get(c)!, { autoFollowContexts: true, autoFollowSubgroups: false });
      await eventually('C reads the third context', reads(c, thirdCtx, 'k', 'three'), 30_000);
      await eventually('C’s stream reported the context', async () => frames.some((f) => JSON.stringify(f).includes(thirdCtx) && JSON.stringify(f).includes('SyncStatus')));
    } finally {
      stream.stop();
    }
  });

  it('an open subgroup’s context is followed with autoFollowSubgroups only', async () => {
    const sub = (await a.client.namespaces.createGroup(ns, { groupName: 'open-sub', visibility: 'open' })).groupId;
    const inSub = await create(sub, 'sub');
    await b.client.groups.setAutoFollow(ns, accounts.get(b)!, { autoFollowContexts: true, autoFollowSubgroups: true });
    await eventually('B reads the subgroup’s context', reads(b, inSub, 'k', 'sub'), 30_000);
    await eventually('C knows the subgroup’s context', knows(c, sub, inSub));
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await holds(c, inSub)).toBe(false); // C's autoFollowSubgroups is false (the default)
  });

  it('a node killed -9 during its auto-follow passes holds and reads every context after its restart', async () => {
    const many = (await a.client.namespaces.create({ applicationId: appId })).namespaceId;
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push(await create(many, `m${i}`));
    await joinNamespace(b, many);
    // kill B as soon as it holds any of them (the passes are still running unless they were faster than this poll)
    let heldAtKill = 0;
    await eventually('B starts following', async () => {
      heldAtKill = (await b.client.contexts.list()).filter((x) => ids.includes(x.id)).length;
      return heldAtKill > 0;
    });
    await b.kill();
    console.log(`auto-follow restart: B held ${heldAtKill} of ${ids.length} contexts when it was killed`);
    expect(heldAtKill, 'B was killed in the middle of its passes').toBeLessThan(ids.length);
    await b.start();
    for (const [i, id] of ids.entries()) await eventually(`B reads context ${i}`, reads(b, id, 'k', `m${i}`), 60_000);
    expect((await b.client.contexts.list()).filter((x) => ids.includes(x.id))).toHaveLength(ids.length);
  });
});
