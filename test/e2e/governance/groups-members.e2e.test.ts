/**
 * Group membership and tree over HTTP through the SDK (admin-wire-b §4.4–§4.15, §4.18): every
 * route, its refusals reachable on one node, the group events it publishes, and restart
 * persistence.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Client } from '../../../src/client/index.ts';
import { GroupsApi } from '../../../src/client/groups.ts';
import type { NodeEvent } from '../../../src/bus.ts';
import { adminClient, startTestNode, type TestNode } from '../../helpers/node.ts';
import { statusOf } from '../../helpers/status.ts';

const APP = 'a'.repeat(64);
const X = '1'.repeat(64);
const Y = '2'.repeat(64);
let node: TestNode;
let c: Client;
let g: GroupsApi;
let me: string;
let ns: string;
const events: NodeEvent[] = [];

async function connect(): Promise<void> {
  c = await adminClient(node);
  g = c.groups;
  node.node.bus.subscribe((e) => events.push(e));
}

const subgroup = async (parentGroupId: string, name: string, visibility?: 'open' | 'restricted') =>
  (await c.http.data<{ groupId: string }>('/admin-api/groups', { method: 'POST', body: { applicationId: APP, parentGroupId, name, visibility } })).groupId;

beforeAll(async () => {
  node = await startTestNode();
  await connect();
  me = (await c.http.data<{ accountId: string }>('/admin-api/identity')).accountId;
  ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: APP } })).namespaceId;
});
afterAll(async () => node?.destroy());

it('lists members flat, adds and removes them with group events, and refuses bad requests', async () => {
  expect(await g.members(ns)).toEqual([{ identity: me, role: 'Admin' }]);
  const raw = await c.http.send(`/admin-api/groups/${ns}/members`, { method: 'POST', body: { members: [{ identity: X, role: 'Member' }] } });
  expect(raw.status).toBe(200);
  expect(raw.bodyText).toBe('');
  expect(events.at(-1)).toMatchObject({ type: 'group', groupId: ns, kind: 'MemberAdded', data: { memberAccount: X, role: 'Member' } });
  expect(await g.members(ns)).toEqual(expect.arrayContaining([{ identity: X, role: 'Member' }]));
  expect(await statusOf(g.addMembers(ns, [{ identity: Y, role: 'RelayTee' }]))).toBe(400);
  expect(await statusOf(g.addMembers(ns, [{ identity: Y, role: 'ReadOnlyTee' }]))).toBe(400);
  expect(await statusOf(g.addMembers(ns, []))).toBe(400);
  expect(await statusOf(g.addMembers(ns, [{ identity: 'nope', role: 'Member' }]))).toBe(400);
  expect(await statusOf(g.addMembers('f'.repeat(64), [{ identity: Y, role: 'Member' }]))).toBe(404);
  expect(await statusOf(g.members('zz'))).toBe(400);

  await g.removeMembers(ns, [X]);
  expect(events.at(-1)).toMatchObject({ groupId: ns, kind: 'MemberRemoved', data: { memberAccount: X } });
  expect((await g.members(ns)).map((m) => m.identity)).not.toContain(X);
  expect(await statusOf(g.removeMembers(ns, [me]))).toBe(403); // the owner is immune
  expect(await statusOf(g.removeMembers(ns, [Y]))).toBe(404);
  expect(await statusOf(g.removeMembers(ns, []))).toBe(400);
});

it('updates roles and auto-follow; TEE role 400, last admin 409, unknown member 404', async () => {
  await g.addMembers(ns, [{ identity: X, role: 'Member' }]);
  await g.setMemberRole(ns, X, 'ReadOnly');
  expect((await g.members(ns)).find((m) => m.identity === X)?.role).toBe('ReadOnly');
  expect(await statusOf(g.setMemberRole(ns, X, 'RelayTee'))).toBe(400);
  expect(await statusOf(g.setMemberRole(ns, me, 'Member'))).toBe(409);
  expect(await statusOf(g.setMemberRole(ns, Y, 'Member'))).toBe(404);
  expect(await statusOf(c.http.send(`/admin-api/groups/${ns}/members/${X}/role`, { method: 'PUT', body: { role: 'Owner' } }))).toBe(400);
  await g.setAutoFollow(ns, me, { autoFollowContexts: false, autoFollowSubgroups: true });
  expect(await statusOf(g.setAutoFollow(ns, Y, { autoFollowContexts: true, autoFollowSubgroups: true }))).toBe(404);
  expect(await statusOf(c.http.send(`/admin-api/groups/${ns}/members/${me}/auto-follow`, { method: 'PUT', body: { autoFollowContexts: true } }))).toBe(400);
  expect(await statusOf(c.http.send(`/admin-api/groups/${ns}/members/bad/auto-follow`, { method: 'PUT', body: { autoFollowContexts: true, autoFollowSubgroups: true } }))).toBe(400);
});

it('lists member devices flat with offset/limit', async () => {
  const all = await g.memberDevices(ns);
  expect(all.map((m) => m.account).sort()).toEqual([me, X].sort());
  const mine = all.find((m) => m.account === me)!;
  const identity = await c.http.data<{ deviceId: string; publicKey: string }>('/admin-api/identity');
  expect(mine.devices).toEqual([{ deviceId: identity.deviceId, signingKey: identity.publicKey }]);
  expect(await g.memberDevices(ns, { offset: 0, limit: 1 })).toHaveLength(1);
  expect(await g.memberDevices(ns, { offset: 5 })).toEqual([]);
  expect(await statusOf(g.memberDevices(ns, { offset: -1 }))).toBe(400);
  const raw = await c.http.json<Record<string, unknown>>(`/admin-api/groups/${ns}/member-devices`, { query: { offset: 0, limit: 25 } });
  expect(Object.keys(raw)).toEqual(['members']);
});

it('lists contexts enveloped and refuses to detach an unregistered context', async () => {
  expect(await c.http.json(`/admin-api/groups/${ns}/contexts`)).toEqual({ data: [] });
  expect(await statusOf(g.removeContext(ns, 'c'.repeat(64)))).toBe(404);
  expect(await statusOf(c.http.send(`/admin-api/groups/${ns}/contexts/${'c'.repeat(64)}/remove`, { method: 'POST' }))).toBe(404);
});

it('lists subgroups flat, reparents with its refusals, and deletes a subtree', async () => {
  const a = await subgroup(ns, 'a');
  const b = await subgroup(ns, 'b', 'restricted');
  const a1 = await subgroup(a, 'a1');
  expect(await c.http.json(`/admin-api/groups/${ns}/subgroups`)).toEqual({ subgroups: expect.arrayContaining([{ groupId: a, name: 'a' }, { groupId: b, name: 'b' }]) });
  expect(await g.subgroups(a)).toEqual([{ groupId: a1, name: 'a1' }]);

  expect(await c.http.json(`/admin-api/groups/${a1}/reparent`, { method: 'POST', body: { newParentId: b } })).toEqual({ reparented: true });
  expect(await g.subgroups(b)).toEqual([{ groupId: a1, name: 'a1' }]);
  expect(await statusOf(g.reparent(ns, a))).toBe(400); // the root cannot move
  expect(await statusOf(g.reparent(b, b))).toBe(400);
  expect(await statusOf(g.reparent(b, a1))).toBe(409); // a1 is below b
  expect(await statusOf(g.reparent(b, 'd'.repeat(64)))).toBe(404);
  const other = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: APP } })).namespaceId;
  expect(await statusOf(g.reparent(b, other))).toBe(400);
  expect(await statusOf(c.http.send(`/admin-api/groups/${b}/reparent`, { method: 'POST', body: { newParentId: 'x' } }))).toBe(400);

  // DELETE with no body at all; the subtree goes with it
  const raw = await c.http.json(`/admin-api/groups/${b}`, { method: 'DELETE' });
  expect(raw).toEqual({ data: { isDeleted: true } });
  expect(await statusOf(c.http.send(`/admin-api/groups/${a1}`))).toBe(404);
  expect((await g.subgroups(ns)).map((s) => s.groupId)).toEqual([a]);
  // an empty body declared as JSON, and an old client's `requester`, are accepted
  const c2 = await subgroup(ns, 'c2');
  const res = await c.http.send(`/admin-api/groups/${c2}`, { method: 'DELETE', rawBody: '', headers: { 'content-type': 'application/json' } });
  expect(res.status).toBe(200);
  const c3 = await subgroup(ns, 'c3');
  expect(await g.deleteGroup(c3)).toEqual({ isDeleted: true });
  const c4 = await subgroup(ns, 'c4');
  expect(await statusOf(c.http.send(`/admin-api/groups/${c4}`, { method: 'DELETE', body: { requester: me } }))).toBe(200);
  expect(await statusOf(g.deleteGroup(ns))).toBe(400);
  expect(await statusOf(g.deleteGroup('e'.repeat(64)))).toBe(404);
});

it('leave: a namespace root 400, the owner 403; join-via-inheritance for a direct member is a no-op', async () => {
  const s = await subgroup(ns, 'leave-me');
  expect(await statusOf(g.leave(ns))).toBe(400);
  expect(await statusOf(g.leave(s))).toBe(403);
  expect(await statusOf(g.leave('e'.repeat(64)))).toBe(404);
  const identity = await c.http.data<{ publicKey: string }>('/admin-api/identity');
  expect(await g.joinViaInheritance(s)).toEqual({ groupId: s, memberPublicKey: identity.publicKey, wasInherited: false });
  expect(await statusOf(g.joinViaInheritance('e'.repeat(64)))).toBe(404);
});

it('answers 403 once the node account is no longer an admin', async () => {
  const s = await subgroup(ns, 'demoted');
  const child = await subgroup(s, 'child');
  await g.addMembers(s, [{ identity: Y, role: 'Admin' }]);
  await g.setMemberRole(s, me, 'Member');
  expect(await statusOf(g.addMembers(s, [{ identity: X, role: 'Member' }]))).toBe(403); // lacks MANAGE_MEMBERS
  expect(await statusOf(g.removeMembers(s, [Y]))).toBe(403);
  expect(await statusOf(g.setMemberRole(s, Y, 'Member'))).toBe(403);
  expect(await statusOf(g.setAutoFollow(s, Y, { autoFollowContexts: true, autoFollowSubgroups: true }))).toBe(403);
  await g.setAutoFollow(s, me, { autoFollowContexts: true, autoFollowSubgroups: true }); // own row: allowed
  expect(await g.memberDevices(s)).toEqual([expect.objectContaining({ account: me })]); // a plain member sees itself only
  expect((await g.members(s)).find((m) => m.identity === me)?.role).toBe('Member');
  // still a namespace admin, so the tree routes pass through the ancestor
  expect(await g.subgroups(s)).toEqual([{ groupId: child, name: 'child' }]);
});

it('keeps membership, roles and the tree across a restart', async () => {
  const before = { members: await g.members(ns), subgroups: await g.subgroups(ns) };
  node = await node.restart();
  await connect();
  expect(await g.members(ns)).toEqual(before.members);
  expect(await g.subgroups(ns)).toEqual(before.subgroups);
  expect((await g.members(ns)).find((m) => m.identity === X)?.role).toBe('ReadOnly');
});
