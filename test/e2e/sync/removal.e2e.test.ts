/**
 * Issue 23 §3 end to end: three node processes (A, B, C, bootstrapped to each other) running the
 * kv-store test application, and a fourth, D, that was never a member and knows none of them. An
 * admin on A removes C: C's status says `removed`, its writes are refused with a 403 and its
 * `hearth context status` says so; C's join with an invitation minted before its removal is refused,
 * and no node lists C again; a new invitation lets C back and its writes replicate again. D replaying
 * an invitation B already used, or one A revoked (through the SDK, or the CLI), is refused.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { HttpError } from '../../../src/client/index.ts';
import { CliUser } from '../../helpers/cli.ts';
import { eventually, kvContextOn, startCluster, type Cluster, type ClusterNode } from '../../helpers/cluster.ts';
import { ADMIN_PASSWORD, ADMIN_USER } from '../../helpers/node.ts';

let cluster: Cluster;
let stranger: Cluster;
let a: ClusterNode, b: ClusterNode, c: ClusterNode, d: ClusterNode;
let ns: string;
let ctx: string;

const accountOf = async (n: ClusterNode) => (await n.client.http.data<{ accountId: string }>('/admin-api/identity')).accountId;
/** Whether `n` lists `account` as a member (a node that is itself no member is answered 404: it lists nobody). */
const lists = async (n: ClusterNode, account: string) => {
  const members = await n.client.groups.members(ns).catch((e: unknown) => {
    if (e instanceof HttpError && e.status === 404) return [];
    throw e;
  });
  return members.some((m) => m.identity === account);
};
const statusOf = (e: unknown) => (e instanceof HttpError ? e.status : e);

beforeAll(async () => {
  [cluster, stranger] = await Promise.all([startCluster(3), startCluster(1)]);
  [a, b, c] = cluster.nodes as [ClusterNode, ClusterNode, ClusterNode];
  d = stranger.nodes[0]!;
  ({ ns, ctx } = await kvContextOn(cluster.nodes, a, 'com.hearth.kv.removal'));
  await a.client.rpc.execute(ctx, 'set', { key: 'seed', value: 'a' });
}, 180_000);

afterAll(async () => {
  await Promise.all([cluster?.destroy(), stranger?.destroy()]);
});

it('a removed member stays out until re-invited, is told so, and cannot write; a never-member cannot replay', { timeout: 240_000 }, async () => {
  const [bAccount, cAccount] = await Promise.all([accountOf(b), accountOf(c)]);
  const { invitation: forB } = await a.client.invitations.inviteToNamespace(ns);
  await b.client.invitations.joinNamespace(ns, forB);
  const { invitation: forC } = await a.client.invitations.inviteToNamespace(ns);
  await c.client.invitations.joinNamespace(ns, forC);
  await eventually('A lists B and C', async () => (await lists(a, bAccount)) && (await lists(a, cAccount)));
  for (const n of [b, c]) {
    await n.client.groups.sync(ns);
    await eventually(`${n.name} lists the context`, async () => (await n.client.groups.contexts(ns)).some((x) => x.contextId === ctx));
    await n.client.contexts.join(ctx);
  }
  await eventually('C holds the state', async () => (await c.client.rpc.execute(ctx, 'get', { key: 'seed' })) === 'a', 60_000);
  await c.client.rpc.execute(ctx, 'set', { key: 'from-c', value: 'before' });
  await eventually('A has C’s write', async () => (await a.client.rpc.execute(ctx, 'get', { key: 'from-c' })) === 'before', 60_000);

  // minted before the removal, never used: the one C would try to come back with
  const { invitation: spare } = await a.client.invitations.inviteToNamespace(ns);
  await a.client.groups.removeMembers(ns, [cAccount]);
  await eventually('every node applied the removal', async () => !(await lists(a, cAccount)) && !(await lists(b, cAccount)) && !(await lists(c, cAccount)), 60_000);

  // C is told: the status, the CLI, and a refused write
  await eventually('C’s sync status says removed', async () => (await c.client.contexts.syncStatus(ctx)).reasons.some((r) => r.reason === 'removed') === true);
  expect((await c.client.contexts.syncStatus(ctx)).caughtUp).toBe(false);
  const cli = await CliUser.create(c.url);
  try {
    await cli.login(ADMIN_USER, ADMIN_PASSWORD);
    const json = await cli.json<{ sync: { reasons: { reason: string }[] } }>(['context', 'status', ctx]);
    expect(json.sync.reasons.map((r) => r.reason)).toContain('removed');
    expect(await cli.human(['context', 'status', ctx])).toMatch(/removed\s*:?\s+yes: an admin removed this node's account/);
  } finally {
    await cli.destroy();
  }
  const write = await c.client.rpc.execute(ctx, 'set', { key: 'from-c', value: 'after' }).catch((e: unknown) => e);
  expect(statusOf(write)).toBe(403);
  expect(String((write as Error).message)).toMatch(/removed from group/);
  expect(await c.client.rpc.execute(ctx, 'get', { key: 'from-c' })).toBe('before'); // reads still answer

  // the old invitations are refused on C's node; no node lists C after them
  await expect(c.client.invitations.joinNamespace(ns, spare)).rejects.toMatchObject({ status: 403, message: expect.stringMatching(/was removed from group/) });
  await expect(c.client.invitations.joinNamespace(ns, forC)).rejects.toMatchObject({ status: 409 });
  await new Promise((r) => setTimeout(r, 2_000));
  for (const n of [a, b, c]) expect(await lists(n, cAccount)).toBe(false);

  // a never-member replaying a used invitation, or a revoked one, is refused
  await expect(d.client.invitations.joinNamespace(ns, forB)).rejects.toMatchObject({ status: 409, message: expect.stringMatching(/already used/) });
  const { invitation: withdrawn } = await a.client.invitations.inviteToNamespace(ns);
  expect(await a.client.invitations.revoke(ns, { invitation: withdrawn })).toMatchObject({ groupId: ns, revoked: true });
  await expect(d.client.invitations.joinNamespace(ns, withdrawn)).rejects.toMatchObject({ status: 403, message: expect.stringMatching(/revoked/) });
  // the CLI revokes too: the invitation on stdin, then by its id (the same answer, no second op)
  const { invitation: viaCli } = await a.client.invitations.inviteToNamespace(ns);
  const operator = await CliUser.create(a.url);
  try {
    await operator.login(ADMIN_USER, ADMIN_PASSWORD);
    const first = await operator.json<{ groupId: string; invitationId: string; revoked: boolean }>(['group', 'revoke-invite', ns, '-'], { input: JSON.stringify({ invitation: viaCli }) });
    expect(first).toMatchObject({ groupId: ns, revoked: true, invitationId: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await operator.json(['group', 'revoke-invite', ns, '--id', first.invitationId])).toEqual(first);
    const bare = await operator.run(['group', 'revoke-invite', ns]);
    expect(bare.code).not.toBe(0);
    expect(bare.stderr.trim().split('\n')).toHaveLength(1);
  } finally {
    await operator.destroy();
  }
  await expect(d.client.invitations.joinNamespace(ns, viaCli)).rejects.toMatchObject({ status: 403, message: expect.stringMatching(/revoked/) });
  const dAccount = await accountOf(d);
  for (const n of [a, b]) expect(await lists(n, dAccount)).toBe(false);

  // an explicit re-invite: C is back everywhere, no longer removed, and its writes replicate again
  const { invitation: again } = await a.client.invitations.inviteToNamespace(ns);
  await c.client.invitations.joinNamespace(ns, again);
  await eventually('every node lists C again', async () => (await lists(a, cAccount)) && (await lists(b, cAccount)), 60_000);
  expect((await c.client.contexts.syncStatus(ctx)).reasons.map((r) => r.reason)).not.toContain('removed');
  await eventually('C writes again', async () => {
    await c.client.rpc.execute(ctx, 'set', { key: 'from-c', value: 'back' });
    return true;
  });
  await eventually('A and B have C’s write after the re-invite', async () => (await a.client.rpc.execute(ctx, 'get', { key: 'from-c' })) === 'back' && (await b.client.rpc.execute(ctx, 'get', { key: 'from-c' })) === 'back', 60_000);
});
