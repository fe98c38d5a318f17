/**
 * `hearth namespace` (issue #6 CLI) against real nodes: create, list, get, create-group, groups,
 * invite on one node and join on another (@file and stdin), delete and leave with confirmation —
 * in human and JSON output — and the exit codes of parse-time, node and permission failures.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryTokenStore, type Client } from '../../../src/client/index.ts';
import { CliUser } from '../../helpers/cli.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';
import { statusOf } from '../../helpers/status.ts';

const APP = 'a'.repeat(64);
const OTHER = 'e'.repeat(64);
const HEX = /^[0-9a-f]{64}$/;

let a: TestNode;
let b: TestNode;
let userA: CliUser;
let userB: CliUser;
let sdk: Client;
let accountB: string;
let tmp: string;

/** A namespace this node's account still belongs to but no longer owns (OTHER owns it). */
async function handedOver(): Promise<string> {
  const { namespaceId } = await sdk.namespaces.create({ applicationId: APP, name: 'handed-over' });
  await sdk.groups.addMembers(namespaceId, [{ identity: OTHER, role: 'Admin' }]);
  await sdk.owner.transferOwnership(namespaceId, { newOwner: OTHER });
  return namespaceId;
}

beforeAll(async () => {
  [a, b] = await Promise.all([startTestNode(), startTestNode()]);
  [userA, userB] = await Promise.all([CliUser.create(a.url), CliUser.create(b.url)]);
  await Promise.all([userA.login(a.adminUser, a.adminPassword), userB.login(b.adminUser, b.adminPassword)]);
  sdk = createClient({ baseUrl: a.url, tokenStore: new MemoryTokenStore() });
  await sdk.auth.login({ username: a.adminUser, password: a.adminPassword });
  const sdkB = createClient({ baseUrl: b.url, tokenStore: new MemoryTokenStore() });
  await sdkB.auth.login({ username: b.adminUser, password: b.adminPassword });
  accountB = (await sdkB.accounts.identity()).accountId;
  tmp = await mkdtemp(join(tmpdir(), 'hearth-cli-ns-'));
}, 60_000);

afterAll(async () => {
  await Promise.all([userA?.destroy(), userB?.destroy(), rm(tmp, { recursive: true, force: true })]);
  await Promise.all([a?.destroy(), b?.destroy()]);
});

describe('hearth namespace create | list | get | create-group | groups', { timeout: 120_000 }, () => {
  let ns: string;

  it('creates a namespace and shows it in both formats', async () => {
    const created = await userA.json(['namespace', 'create', '--application', APP, '--name', 'proj']);
    expect(created.namespaceId).toMatch(HEX);
    expect(created.founding.founderAccountId).toMatch(HEX);
    ns = created.namespaceId;

    const human = await userA.human(['ns', 'create', '--application', APP.toUpperCase(), '--name', 'second']);
    const second = /^created namespace ([0-9a-f]{64}) \(second\)\nfounder: [0-9a-f]{64}\nsalt: +[0-9a-f]+\n$/.exec(human);
    expect(second, human).not.toBeNull();

    const list = await userA.json(['namespace', 'list']);
    expect(list.map((n: { namespaceId: string }) => n.namespaceId).sort()).toEqual([ns, second![1]].sort());
    expect(list.find((n: { namespaceId: string }) => n.namespaceId === ns)).toMatchObject({ name: 'proj', memberCount: 1, targetApplicationId: APP });
    const table = await userA.human(['ns', 'ls', '--wide']);
    expect(table).toMatch(/^NAMESPACE\s+NAME\s+MEMBERS\s+CONTEXTS\s+SUBGROUPS\s+CREATED\n/);
    expect(table).toMatch(new RegExp(`${ns}\\s+proj\\s+1\\s+0\\s+0\\s+\\d{4}-`));

    expect(await userA.json(['namespace', 'get', ns])).toMatchObject({ namespaceId: ns, name: 'proj', targetApplicationId: APP });
    const shown = await userA.human(['namespace', 'get', ns]);
    expect(shown).toContain(`namespace:    ${ns}\nname:         proj\napplication:  ${APP}`);
    expect(shown).toContain('members:      1');
  });

  it('creates subgroups below the root and lists them in both formats', async () => {
    const team = await userA.json(['namespace', 'create-group', ns, '--name', 'team']);
    expect(team.groupId).toMatch(HEX);
    const human = await userA.human(['ns', 'create-group', ns, '--name', 'ops', '--visibility', 'Restricted']);
    const ops = /^created group ([0-9a-f]{64}) \(ops\) in namespace/.exec(human)![1];
    expect((await sdk.groups.info(ops)).subgroupVisibility).toBe('restricted');

    const groups = await userA.json(['namespace', 'groups', ns]);
    expect(groups).toEqual(expect.arrayContaining([{ groupId: team.groupId, name: 'team' }, { groupId: ops, name: 'ops' }]));
    expect(await userA.human(['ns', 'groups', ns])).toMatch(new RegExp(`^GROUP\\s+NAME\\n(.*\\n)*${team.groupId}  team\\n`));
  });

  it('refuses bad input at parse time (exit 2) and reports node errors with the node\'s message (exit 1)', async () => {
    const bad = await userA.run(['namespace', 'get', 'not-an-id']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('not a namespace id: expected 64 hex characters');
    const missing = await userA.run(['namespace', 'create', '--name', 'x']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--application');
    const visibility = await userA.run(['ns', 'create-group', ns, '--visibility', 'secret']);
    expect(visibility.code).toBe(2);
    expect(visibility.stderr).toContain('expected open or restricted');

    const unknown = 'f'.repeat(64);
    const human = await userA.run(['namespace', 'get', unknown]);
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/^hearth: .*not found.*\(HTTP 404\)\n$/i);
    const json = await userA.run(['namespace', 'get', unknown, '--output', 'json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toMatchObject({ exitCode: 1, status: 404 });
    expect(json.stdout).toBe('');
  });
});

describe('hearth namespace invite | join', { timeout: 120_000 }, () => {
  let ns: string;
  let other: string;

  beforeAll(async () => {
    ns = (await sdk.namespaces.create({ applicationId: APP, name: 'shared' })).namespaceId;
    other = (await sdk.namespaces.create({ applicationId: APP, name: 'other' })).namespaceId;
    await sdk.namespaces.createGroup(ns, { groupName: 'team' });
  });

  it('prints an invitation on one node that the other node joins from a file (human) and from stdin (json)', async () => {
    const human = await userA.run(['namespace', 'invite', ns, '--expires-in', '600']);
    expect(human.code, human.stderr).toBe(0);
    // one compact line (issue #25 §3): inv1. and base64url of the JSON with byte fields as hex
    expect(human.stdout).toMatch(/^inv1\.[A-Za-z0-9_-]+\n$/);
    const signed = JSON.parse(Buffer.from(human.stdout.trim().slice(5), 'base64url').toString('utf8'));
    expect(signed.invitation.group_id).toBe(ns);
    expect(signed.inviter_signature).toMatch(/^[0-9a-f]{128}$/);
    expect(signed.invitation.expiration_timestamp - Date.now() / 1000).toBeLessThanOrEqual(601);
    expect(human.stderr).toContain('a credential');
    expect(human.stderr).toContain('on the joining node run: hearth namespace join <this line>');
    const file = join(tmp, 'invitation.txt');
    await writeFile(file, human.stdout);

    const joined = await userB.human(['namespace', 'join', ns, `@${file}`]);
    expect(joined).toMatch(new RegExp(`^joined namespace ${ns}\\naccount: +${accountB}\\nmember identity: +[0-9a-f]{64}\\n$`));

    const answer = await userA.json(['ns', 'invite', other]);
    expect(answer.groupName).toBe('other');
    expect(answer.invitation.inviter_signature).toMatch(/^[0-9a-f]{128}$/);
    const viaStdin = await userB.json(['ns', 'join', other, '-'], { input: JSON.stringify(answer) });
    expect(viaStdin).toEqual({ namespaceId: other, memberIdentity: expect.stringMatching(HEX), memberAccount: accountB });
  });

  it('writes an invitation under the home root with --out and no file name, never into the working tree', async () => {
    const r = await userA.run(['ns', 'invite', ns, '--out']);
    expect(r.code, r.stderr).toBe(0);
    const m = /^invitation written to (\S+) \(mode 0600; it is a credential until .+\)\n$/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    const path = m![1]!;
    expect(path.startsWith(join(userA.root, 'invitations', `${ns.slice(0, 12)}-`))).toBe(true);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(userA.root, 'invitations'))).mode & 0o777).toBe(0o700);
    expect(r.stderr).toBe(`on the joining node run: hearth namespace join @${path}\n`);
    expect(await readFile(path, 'utf8')).toMatch(/^inv1\.[A-Za-z0-9_-]+\n$/);
    // a second one a moment later gets a name of its own
    const again = await userA.json(['ns', 'invite', ns, '--out']);
    expect(again.file).not.toBe(path);
  });

  it('invites recursively, one invitation per group', async () => {
    const recursive = await userA.json(['namespace', 'invite', ns, '--recursive', '--admitter', OTHER]);
    expect(recursive.invitations).toHaveLength(2);
    expect(recursive.invitations.map((i: { groupId: string }) => i.groupId)).toContain(ns);
    expect(recursive.invitations[0].invitation.invitation.admitters).toEqual([OTHER]);
    const human = await userA.run(['namespace', 'invite', ns, '--recursive']);
    expect(JSON.parse(Buffer.from(human.stdout.trim().slice(5), 'base64url').toString('utf8')).invitations).toHaveLength(2);
    expect(human.stderr).toContain('2 invitations valid until');
  });

  it('refuses an invitation that is not JSON (exit 2) and one for another namespace (exit 1, node message)', async () => {
    const garbage = await userB.run(['namespace', 'join', ns, '{not json']);
    expect(garbage.code).toBe(2);
    expect(garbage.stderr).toContain('invitation from the argument is neither an inv1. line nor JSON');
    const cut = await userB.run(['namespace', 'join', ns, 'inv1.eyJpbnZ']);
    expect(cut.code).toBe(2);
    expect(cut.stderr).toContain('not an invitation');
    const noFile = await userB.run(['namespace', 'join', ns, `@${join(tmp, 'missing.json')}`]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain('no such file or directory');

    const { invitation } = await sdk.invitations.inviteToNamespace(other);
    const mismatch = await userB.run(['namespace', 'join', ns, JSON.stringify(invitation), '--output', 'json']);
    expect(mismatch.code).toBe(1);
    expect(JSON.parse(mismatch.stderr)).toMatchObject({ status: 400, error: expect.stringContaining('does not match') });
  });
});

describe('hearth namespace delete | leave', { timeout: 120_000 }, () => {
  it('delete asks first: without --yes and without a terminal it exits 2 and deletes nothing', async () => {
    const { namespaceId } = await sdk.namespaces.create({ applicationId: APP, name: 'doomed' });
    const refused = await userA.run(['namespace', 'delete', namespaceId]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('pass --yes to confirm');
    expect((await sdk.namespaces.get(namespaceId)).namespaceId).toBe(namespaceId);

    expect(await userA.json(['namespace', 'delete', namespaceId, '--yes'])).toEqual({ namespaceId, isDeleted: true });
    expect(await statusOf(sdk.namespaces.get(namespaceId))).toBe(404);

    const second = (await sdk.namespaces.create({ applicationId: APP })).namespaceId;
    expect(await userA.human(['ns', 'del', second, '-y'])).toBe(`deleted namespace ${second}\n`);
    expect(await statusOf(sdk.namespaces.get(second))).toBe(404);
  });

  it('leave asks first, then leaves in both formats; the owner is refused with the node\'s reason (exit 3)', async () => {
    const one = await handedOver();
    const refused = await userA.run(['namespace', 'leave', one]);
    expect(refused.code).toBe(2);
    expect((await sdk.namespaces.get(one)).namespaceId).toBe(one);
    expect(await userA.human(['namespace', 'leave', one, '--yes'])).toBe(`left namespace ${one}\n`);
    expect(await statusOf(sdk.namespaces.get(one))).toBe(404);

    const two = await handedOver();
    expect(await userA.json(['ns', 'leave', two, '--yes'])).toEqual({ namespaceId: two, left: true });

    const owned = (await sdk.namespaces.create({ applicationId: APP })).namespaceId;
    const owner = await userA.run(['namespace', 'leave', owned, '--yes']);
    expect(owner.code).toBe(1); // a domain rule's 403, not an auth failure
    expect(owner.stderr).toMatch(/^hearth: .*\(HTTP 403\)\n$/);
    expect((await sdk.namespaces.get(owned)).namespaceId).toBe(owned);
  });
});
