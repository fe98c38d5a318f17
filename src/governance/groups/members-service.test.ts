/**
 * MembersService over a real Governance log (MemoryStore): reads as this node's account, inherited
 * members in listings, member-devices paging, and ops that survive a reload of the log's state.
 */
import { generateKeyPairSync } from 'node:crypto';
import { beforeEach, expect, it } from 'vitest';
import { NodeIdentity } from '../../identity/identity.ts';
import { EventBus } from '../../bus.ts';
import { MemoryStore } from '../../store/memory.ts';
import { Governance } from '../log.ts';
import { NamespaceService } from '../namespaces/service.ts';
import { createAppliers } from '../ops.ts';
import { GroupService } from './service.ts';
import { MembersService } from './members-service.ts';

const APP = 'ab'.repeat(32);
const B = 'b2'.repeat(32);
let store: MemoryStore;
let identity: NodeIdentity;
let governance: Governance;
let members: MembersService;
let groups: GroupService;
const clock = { now: () => 1_700_000_000_000 };

async function build(): Promise<void> {
  governance = new Governance({ store, identity, clock, bus: new EventBus(), appliers: createAppliers() });
  await governance.load();
  const namespaces = new NamespaceService({ governance, identity, clock });
  groups = new GroupService({ governance, identity, namespaces });
  members = new MembersService({ governance, identity });
}

beforeEach(async () => {
  store = new MemoryStore();
  identity = await NodeIdentity.load(store, generateKeyPairSync('ed25519').privateKey, clock.now());
  await build();
});

it('lists inherited members of an open subgroup with their anchor role', async () => {
  const ns = await groups.create({ applicationId: APP });
  const sub = await groups.create({ applicationId: APP, parentGroupId: ns });
  await members.addMembers(ns, [{ identity: B, role: 'ReadOnly' }]);
  expect(members.members(sub)).toEqual(expect.arrayContaining([{ identity: B, role: 'ReadOnly' }]));
  const closed = await groups.create({ applicationId: APP, parentGroupId: ns, visibility: 'restricted' });
  expect(members.members(closed).map((m) => m.identity)).toEqual([identity.accountId]);
});

it('pages member devices and clamps the limit', async () => {
  const ns = await groups.create({ applicationId: APP });
  await members.addMembers(ns, [{ identity: B, role: 'Member' }]);
  expect(members.memberDevices(ns, 0, 0)).toHaveLength(1); // clamped up to 1
  expect(members.memberDevices(ns, 1, 5000)).toHaveLength(1);
  expect(members.memberDevices(ns).find((m) => m.account === B)?.devices).toEqual([]);
});

it('replays to the same state after a reload', async () => {
  const ns = await groups.create({ applicationId: APP });
  const a = await groups.create({ applicationId: APP, parentGroupId: ns });
  const b = await groups.create({ applicationId: APP, parentGroupId: ns });
  await members.reparent(b, a);
  await members.addMembers(a, [{ identity: B, role: 'Member' }]);
  await build();
  expect(members.subgroups(a)).toEqual([{ groupId: b }]);
  expect(members.members(a).map((m) => m.identity)).toContain(B);
  await members.deleteGroup(a);
  await build();
  expect(governance.locate(b)).toBeUndefined();
});
