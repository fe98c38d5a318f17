/**
 * Deleting a group or a namespace forgets its contexts' local state (issue #17 finding 10): at
 * once through the bus, or at the next start for a node stopped in between. A detached context
 * keeps its state.
 */
import { describe, expect, it } from 'vitest';
import type { Principal } from '../auth/service.ts';
import { GroupService } from '../governance/groups/service.ts';
import { MembersService } from '../governance/groups/members-service.ts';
import { NamespaceManageService } from '../governance/namespaces/manage-service.ts';
import { NamespaceService } from '../governance/namespaces/service.ts';
import { collect } from '../store/store.ts';
import { APP_ID, world, type World } from './testkit.ts';

const owner: Principal = { keyId: 'k', keyType: 'root', rootKeyId: 'k', permissions: ['admin'], binding: { contexts: [], groups: [], applications: [] } };
const clock = { now: () => Date.now() };

async function setup() {
  const w = await world();
  w.reaper.start();
  const namespaces = new NamespaceService({ governance: w.governance, identity: w.identity, clock });
  const groups = new GroupService({ governance: w.governance, identity: w.identity, namespaces });
  const members = new MembersService({ governance: w.governance, identity: w.identity });
  const manage = new NamespaceManageService({ governance: w.governance, namespaces, groups, identity: w.identity, clock });
  const subgroup = () => groups.create({ applicationId: APP_ID, parentGroupId: w.namespaceId });
  const context = async (groupId: string) => {
    const id = (await w.contexts.create({ groupId, initializationParams: new Uint8Array() })).contextId;
    await w.calls.execute({ contextId: id, method: 'set', argsJson: { key: 'k', value: 'v' } }, owner);
    return id;
  };
  return { w, members, manage, subgroup, context };
}

/** Every stored key that mentions the context, across the contexts domain's spaces. */
async function traces(w: World, id: string): Promise<string[]> {
  const out: string[] = [];
  for (const [name, codec] of [['ctx.meta', 'json'], ['ctx.members', 'json'], ['ctx.deltas', 'json'], ['ctx.state', 'bytes'], ['ctx.private', 'bytes']] as const) {
    for (const [k] of await collect(w.store.space<unknown>(name, codec).entries())) if (k.startsWith(id)) out.push(`${name}/${k}`);
  }
  return out;
}

describe('contexts of a deleted group or namespace', () => {
  it('deleting a subgroup (and its subtree) drops its contexts’ local state, not others’', async () => {
    const { w, members, subgroup, context } = await setup();
    const sub = await subgroup();
    const doomed = await context(sub);
    const kept = await context(w.namespaceId);
    expect((await traces(w, doomed)).length).toBeGreaterThan(3);
    await members.deleteGroup(sub);
    await w.reaper.settled();
    expect(await traces(w, doomed)).toEqual([]);
    expect(await w.contexts.get(kept)).toMatchObject({ id: kept });
  });

  it('deleting a namespace drops the local state of every context in it', async () => {
    const { w, manage, subgroup, context } = await setup();
    const ids = [await context(w.namespaceId), await context(await subgroup())];
    await manage.delete(w.namespaceId);
    await w.reaper.settled();
    for (const id of ids) expect(await traces(w, id)).toEqual([]);
  });

  it('a detached context keeps its state', async () => {
    const { w, members, context } = await setup();
    const id = await context(w.namespaceId);
    await members.removeContext(w.namespaceId, id);
    await w.reaper.settled();
    expect((await traces(w, id)).length).toBeGreaterThan(3);
  });

  it('a node that stopped before dropping them drops them at its next start', async () => {
    const { w, members, subgroup, context } = await setup();
    const sub = await subgroup();
    const id = await context(sub);
    w.reaper.stop(); // as if the node stopped right after the deletion
    await members.deleteGroup(sub);
    expect((await traces(w, id)).length).toBeGreaterThan(3);
    expect(await w.reaper.sweep()).toEqual([id]);
    expect(await traces(w, id)).toEqual([]);
  });
});
