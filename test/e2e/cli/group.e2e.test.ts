/**
 * `hearth group` (issue #6 CLI) against a real node: get, members {list, add, remove, set-role,
 * get/set-capabilities, check-access}, settings, metadata (group, member, context), subgroups, reparent,
 * contexts {list, detach}, invite/join, leave and delete — in human and JSON output — with
 * confirmation for destructive verbs and the exit codes of parse-time, node and permission failures.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../../src/client/index.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { startCliNode, type CliNode, type CliUser } from '../../helpers/cli.ts';
import type { TestNode } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';
import { statusOf } from '../../helpers/status.ts';

const X = '1'.repeat(64);
const Y = '2'.repeat(64);
const HEX = /^[0-9a-f]{64}$/;

let cli: CliNode;
let node: TestNode;
let user: CliUser;
let sdk: Client;
let me: string;
let appId: string;
let ns: string;
let team: string;
let tmp: string;

const subgroup = async (parent: string, name: string) => (await sdk.groups.create({ applicationId: appId, parentGroupId: parent, name })).groupId;

beforeAll(async () => {
  cli = await startCliNode();
  ({ node, sdk, user } = cli);
  me = (await sdk.accounts.identity()).accountId;
  const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.cli-group' });
  appId = (await sdk.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
  ns = (await sdk.namespaces.create({ applicationId: appId, name: 'proj' })).namespaceId;
  team = await subgroup(ns, 'team');
  tmp = await mkdtemp(join(tmpdir(), 'hearth-cli-group-'));
}, 120_000);

afterAll(async () => {
  await Promise.all([cli?.destroy(), tmp ? rm(tmp, { recursive: true, force: true }) : undefined]);
});

describe('hearth group create | list | get | subgroups | reparent | settings', { timeout: 120_000 }, () => {
  it('shows a group in both formats and refuses a bad id at parse time', async () => {
    const info = await user.json(['group', 'get', ns]);
    expect(info).toMatchObject({ groupId: ns, namespaceId: ns, targetApplicationId: appId, memberCount: 1, subgroupVisibility: 'open' });
    expect(info.ownerOpCounter).toEqual(expect.any(Number));
    const human = await user.human(['group', 'get', team]);
    expect(human).toContain(`group:                ${team}\nname:                 team\nnamespace:            ${ns}\n`);
    expect(await user.human(['group', 'get', ns])).toContain('(this group is the root)');

    const bad = await user.run(['group', 'get', 'xyz']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('not a group id');
  });

  it("creates a subgroup (the parent's application by default) and lists a namespace's groups, in both formats", async () => {
    const made = await user.json(['group', 'create', '--parent', ns, '--name', 'made-by-cli']);
    expect(made).toEqual({ groupId: expect.stringMatching(HEX), parentGroupId: ns });
    expect((await sdk.groups.info(made.groupId)).targetApplicationId).toBe(appId);
    const human = await user.human(['group', 'create', '--parent', made.groupId, '--name', 'inner', '--visibility', 'restricted']);
    expect(human).toMatch(new RegExp(`^created group [0-9a-f]{64} \\(inner\\) below ${made.groupId}\n$`));
    const listed = await user.json(['group', 'list', ns]);
    expect(listed).toEqual(expect.arrayContaining([{ groupId: made.groupId, name: 'made-by-cli' }]));
    expect(await user.human(['group', 'ls', ns])).toMatch(new RegExp(`${made.groupId}  made-by-cli\n`));
    const unknownParent = await user.run(['group', 'create', '--parent', X]);
    expect(unknownParent.code).toBe(1);
    expect(unknownParent.stderr).toContain('(HTTP 404)');
  });

  it('lists subgroups and moves one below another', async () => {
    const left = await subgroup(ns, 'left');
    const right = await subgroup(ns, 'right');
    expect(await user.json(['group', 'reparent', right, left])).toEqual({ groupId: right, newParentId: left, reparented: true });
    expect(await user.json(['group', 'subgroups', left])).toEqual([{ groupId: right, name: 'right' }]);
    expect(await user.human(['group', 'subgroups', left])).toMatch(new RegExp(`^GROUP\\s+NAME\\n${right}  right\\n$`));
    expect(await user.human(['group', 'subgroups', right])).toBe(`group ${right} has no subgroups\n`);
    const back = await user.human(['group', 'reparent', right, ns]);
    expect(back).toBe(`moved group ${right} below ${ns}\n`);
    const cycle = await user.run(['group', 'reparent', ns, right, '--output', 'json']);
    expect(cycle.code).toBe(1);
    expect(JSON.parse(cycle.stderr)).toMatchObject({ status: 400, exitCode: 1 });
  });

  it('reads and sets default capabilities and subgroup visibility', async () => {
    expect(await user.json(['group', 'settings', 'get', team])).toEqual({ groupId: team, defaultCapabilities: expect.any(Number), subgroupVisibility: 'open' });
    const set = await user.json(['group', 'settings', 'set-default-caps', team, '--can-create-context', '--can-join-open-subgroups']);
    expect(set).toEqual({ groupId: team, defaultCapabilities: 5 });
    expect(await user.human(['group', 'settings', 'set-subgroup-visibility', team, 'restricted'])).toBe(`group ${team} is now restricted\n`);
    expect(await user.human(['group', 'settings', 'get', team])).toBe(
      'default capabilities: 5 (CAN_CREATE_CONTEXT, CAN_JOIN_OPEN_SUBGROUPS)\nsubgroup visibility:  restricted\n',
    );
    const info = await sdk.groups.info(team);
    expect([info.defaultCapabilities, info.subgroupVisibility]).toEqual([5, 'restricted']);
    const none = await user.run(['group', 'settings', 'set-default-capabilities', team]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--mask 0 clears them');
  });
});

describe('hearth group members', { timeout: 120_000 }, () => {
  it('adds, lists and re-roles members in both formats', async () => {
    expect(await user.json(['group', 'members', 'add', team, X])).toEqual({ groupId: team, account: X, role: 'Member', added: true });
    expect(await user.human(['group', 'members', 'add', team, Y, 'read-only'])).toBe(`added ${Y} to group ${team} as ReadOnly\n`);
    const list = await user.json(['group', 'members', 'list', team]);
    expect(list).toEqual(expect.arrayContaining([{ identity: me, role: 'Admin' }, { identity: X, role: 'Member' }, { identity: Y, role: 'ReadOnly' }]));
    const table = await user.human(['group', 'members', 'ls', team]);
    expect(table).toMatch(/^ACCOUNT\s+ROLE\s+NAME\n/);
    expect(table).toMatch(new RegExp(`${X}  Member`));

    expect(await user.json(['group', 'members', 'set-role', team, X, 'admin'])).toEqual({ groupId: team, account: X, role: 'Admin' });
    expect(await user.human(['group', 'members', 'set-role', team, X, 'member'])).toBe(`${X} is now Member in group ${team}\n`);
    expect((await sdk.groups.members(team)).find((m) => m.identity === X)?.role).toBe('Member');

    const role = await user.run(['group', 'members', 'add', team, X, 'owner']);
    expect(role.code).toBe(2);
    expect(role.stderr).toContain('expected admin, member or read-only');
  });

  it('sets and reads capabilities by name or mask', async () => {
    const set = await user.json(['group', 'members', 'set-capabilities', team, X, '--can-create-context', '--can-invite-members']);
    expect(set).toEqual({ groupId: team, account: X, capabilities: 3, names: ['CAN_CREATE_CONTEXT', 'CAN_INVITE_MEMBERS'] });
    expect(await sdk.settings.memberCapabilities(team, X)).toBe(3);
    expect(await user.json(['group', 'members', 'get-caps', team, X])).toEqual(set);
    expect(await user.human(['group', 'members', 'get-capabilities', team, X])).toBe('capabilities: 3 (CAN_CREATE_CONTEXT, CAN_INVITE_MEMBERS)\n');
    expect(await user.json(['group', 'members', 'check-access', team, X])).toEqual({ ...set, member: true, role: 'Member' });
    expect(await user.human(['group', 'members', 'check-access', team, X])).toMatch(/^role: Member\nCAN_CREATE_CONTEXT +yes\nCAN_INVITE_MEMBERS +yes\nCAN_JOIN_OPEN_SUBGROUPS +no\n/);
    expect(await user.human(['group', 'members', 'check-access', team, 'f'.repeat(64)])).toBe(`${'f'.repeat(64)} is not a member of group ${team}\n`);
    expect(await user.human(['group', 'members', 'set-caps', team, X, '--mask', '0'])).toBe(`capabilities of ${X} in group ${team}: 0 (none)\n`);
    const stranger = await user.run(['group', 'members', 'get-caps', team, 'f'.repeat(64)]);
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toMatch(/^hearth: .*\(HTTP 404\)\n$/);
  });

  it('remove asks first, then removes; removing the last admin shows the node\'s refusal', async () => {
    const refused = await user.run(['group', 'members', 'remove', team, Y]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('pass --yes to confirm');
    expect((await sdk.groups.members(team)).map((m) => m.identity)).toContain(Y);
    expect(await user.json(['group', 'members', 'remove', team, Y, '--yes'])).toEqual({ groupId: team, removed: [Y] });
    expect(await user.human(['group', 'members', 'rm', team, X, '-y'])).toBe(`removed ${X} from group ${team}\n`);
    expect((await sdk.groups.members(team)).map((m) => m.identity)).toEqual([me]);
    const last = await user.run(['group', 'members', 'set-role', team, me, 'member']);
    expect(last.code).toBe(1);
    expect(last.stderr).toContain('(HTTP 409)');
  });
});

describe('hearth group metadata | member-metadata | context-metadata | contexts', { timeout: 120_000 }, () => {
  let ctx: string;

  beforeAll(async () => {
    ctx = (await sdk.contexts.create({ groupId: team, applicationId: appId, initializationParams: [] })).contextId;
  });

  it('edits group metadata read-modify-write and prints the stored record in both formats', async () => {
    expect(await user.human(['group', 'metadata', 'get', team])).toBe(`no metadata set on group ${team}\n`);
    expect(await user.json(['group', 'metadata', 'get', team])).toBeNull();
    const set = await user.json(['group', 'metadata', 'set', team, '--name', 'Team', '--set', 'a=1', '--set', 'b=x=y']);
    expect(set).toMatchObject({ name: 'Team', data: { a: '1', b: 'x=y' }, updatedBy: me });
    const human = await user.human(['group', 'metadata', 'set', team, '--unset', 'a', '--set', 'c=3']);
    expect(human).toContain(`updated group ${team}\nname:       Team\n`);
    expect(human).toContain('  b = x=y\n  c = 3');
    const replaced = await user.json(['group', 'metadata', 'set', team, '--data', '-'], { input: '{"only":"this"}' });
    expect(replaced).toMatchObject({ name: 'Team', data: { only: 'this' } });
    expect(await sdk.settings.groupMetadata(team)).toMatchObject({ data: { only: 'this' } });
    expect(await user.human(['group', 'metadata', 'get', team])).toMatch(/^name: +Team\nupdated at: \d{4}-.*\nupdated by: [0-9a-f]{64}\ndata:\n {2}only = this\n$/);
    const nothing = await user.run(['group', 'metadata', 'set', team]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('nothing to change');
  });

  it('edits member and context metadata', async () => {
    expect(await user.json(['group', 'member-metadata', 'set', team, me, '--name', 'me'])).toMatchObject({ name: 'me', data: {} });
    expect(await user.human(['group', 'member-metadata', 'get', team, me])).toContain('name:       me');
    expect(await user.json(['group', 'context-metadata', 'set', team, ctx, '--set', 'purpose=tests'])).toMatchObject({ data: { purpose: 'tests' } });
    expect(await user.json(['group', 'context-metadata', 'get', team, ctx])).toMatchObject({ data: { purpose: 'tests' } });
    const unregistered = await user.run(['group', 'context-metadata', 'get', ns, ctx]);
    expect(unregistered.code).toBe(1);
    expect(unregistered.stderr).toContain('(HTTP 404)');
  });

  it('lists contexts and detaches one after confirmation', async () => {
    expect(await user.json(['group', 'contexts', 'list', team])).toEqual([expect.objectContaining({ contextId: ctx })]);
    expect(await user.human(['group', 'contexts', 'ls', team])).toMatch(new RegExp(`^CONTEXT\\s+NAME\\n${ctx}`));
    const refused = await user.run(['group', 'contexts', 'detach', team, ctx]);
    expect(refused.code).toBe(2);
    expect(await sdk.groups.contexts(team)).toHaveLength(1);
    expect(await user.json(['group', 'contexts', 'detach', team, ctx, '--yes'])).toEqual({ groupId: team, contextId: ctx, detached: true });
    expect(await user.human(['group', 'contexts', 'list', team])).toBe(`no contexts in group ${team}\n`);
    const again = await user.run(['group', 'contexts', 'detach', team, ctx, '--yes']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('(HTTP 404)');
  });
});

describe('hearth group invite | join | leave | delete', { timeout: 120_000 }, () => {
  it('prints a group invitation (human and json) that join takes from a file, from stdin, or inline', async () => {
    const human = await user.run(['group', 'invite', team, '--expires-in', '120']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^inv1\.[A-Za-z0-9_-]+\n$/);
    const signed = JSON.parse(Buffer.from(human.stdout.trim().slice(5), 'base64url').toString('utf8'));
    expect(signed.invitation.group_id).toBe(team);
    expect(human.stderr).toContain('hearth group join <this line>');
    expect(await user.human(['group', 'join', human.stdout.trim()])).toMatch(new RegExp(`^joined group ${team}\n`));
    const file = join(tmp, 'group-invitation.txt');
    await writeFile(file, human.stdout);
    // This node's account is already a member: the join is answered without a new op (idempotent).
    expect(await user.human(['group', 'join', `@${file}`])).toMatch(new RegExp(`^joined group ${team}\\naccount: +${me}\\n`));

    const answer = await user.json(['group', 'invite', team, '--admitter', X]);
    expect(answer.invitation.invitation.admitters).toEqual([X]);
    expect(await user.json(['group', 'join', '-'], { input: JSON.stringify(answer) })).toEqual({ groupId: team, memberIdentity: expect.stringMatching(HEX), memberAccount: me });

    const recursive = await sdk.invitations.inviteToNamespace(ns, { recursive: true });
    expect(await user.json(['group', 'join', JSON.stringify(recursive), '--group', team])).toMatchObject({ groupId: team });
    const tampered = { ...signed, inviter_signature: '00'.repeat(64) };
    const bad = await user.run(['group', 'join', JSON.stringify(tampered), '--output', 'json']);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({ status: 400, error: expect.stringContaining('invalid invitation signature') });
  });

  it('leave asks first, then leaves a group this account does not own', async () => {
    const g = await subgroup(ns, 'handed-over');
    await sdk.groups.addMembers(g, [{ identity: X, role: 'Admin' }]);
    await sdk.owner.transferOwnership(g, { newOwner: X });
    expect((await user.run(['group', 'leave', g])).code).toBe(2);
    expect((await sdk.groups.members(g)).map((m) => m.identity)).toContain(me);
    expect(await user.json(['group', 'leave', g, '--yes'])).toEqual({ groupId: g, left: true });
    // Still an inherited member through the root, but no longer a direct one: leaving again is the node's 409.
    const again = await user.run(['group', 'leave', g, '--yes']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('(HTTP 409)');

    const owned = await subgroup(ns, 'mine');
    const owner = await user.run(['group', 'leave', owned, '--yes']);
    expect(owner.code).toBe(1); // a domain rule's 403, not an auth failure
    expect(owner.stderr).toContain('(HTTP 403)');
  });

  it('delete asks first, then deletes the subtree; the root is refused with the node\'s message', async () => {
    const g = await subgroup(ns, 'doomed');
    const child = await subgroup(g, 'doomed-child');
    const refused = await user.run(['group', 'delete', g]);
    expect(refused.code).toBe(2);
    expect((await sdk.groups.info(g)).groupId).toBe(g);
    expect(await user.json(['group', 'delete', g, '--yes'])).toEqual({ groupId: g, isDeleted: true });
    expect(await statusOf(sdk.groups.info(child))).toBe(404);
    const h = await subgroup(ns, 'doomed-too');
    expect(await user.human(['group', 'del', h, '-y'])).toBe(`deleted group ${h}\n`);
    const root = await user.run(['group', 'delete', ns, '--yes']);
    expect(root.code).toBe(1);
    expect(root.stderr).toMatch(/^hearth: .*\(HTTP 400\)\n$/);
  });
});
