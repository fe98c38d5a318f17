/**
 * Delegated execution end to end (issue #15), through the SDK against a real node acting as the
 * relay: a member's device mints warrants (reference layouts; test/helpers/delegation.ts) and the
 * node runs intents, creates contexts and publishes governance ops for the member — with the
 * refusals the spec and the reference name: a bad or rc.41 warrant, a spent nonce (also after a
 * refusal), the wrong release, the relay's or the member's missing capability. With
 * `admin.delegated_access` the routes need no token. The warrant-nonce routes stay absent.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryTokenStore, type Client, type IntentRelayInfo } from '../../../src/client/index.ts';
import { CAPABILITIES } from '../../../src/client/settings.ts';
import { keyFromSeed } from '../../../src/crypto/seeded-keys.ts';
import { subgroupIdOf } from '../../../src/crypto/ids.ts';
import { RC41_WARRANT_BYTES } from '../../../src/delegation/warrants.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { creationWarrant, delegableOp, governanceWarrant, intentWarrant, member, type Member } from '../../helpers/delegation.ts';
import { CliUser } from '../../helpers/cli.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';
import { RawStream, subscribeRaw } from '../../helpers/sse.ts';
import { httpError } from '../../helpers/status.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

let node: TestNode;
let c: Client;
let token: string;
let appId: string;
let me: { accountId: string; publicKey: string };
let ns: string;
let ctx: string;
let relay: IntentRelayInfo;
const alice = member(0x31);
const bob = member(0x41);
let nonce = 0n;
const next = () => ++nonce;

async function refusal(p: Promise<unknown>): Promise<[number, string]> {
  const e = await httpError(p);
  return [e.status, e.errorText ?? ''];
}

/** An intent by `m` for `ctx` naming this relay, with the terms overridden as given. */
function intent(m: Member, method: string, args: unknown, over: Partial<Parameters<typeof intentWarrant>[1]> = {}) {
  const warrant = intentWarrant(m, {
    context: ctx,
    executor: relay.executorAccount,
    executorKey: relay.executorKey,
    releaseBytecodeId: relay.releaseBytecodeId!,
    releaseVersion: relay.releaseVersion!,
    method,
    args,
    nonce: next(),
    ...over,
  });
  return { method, argsJson: args, warrant, authorProof: m.authorProof };
}

beforeAll(async () => {
  node = await startTestNode();
  c = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await c.auth.login({ username: node.adminUser, password: node.adminPassword });
  token = (await c.tokenStore.get())!.accessToken;
  me = await c.accounts.identity();
  const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.deleg' });
  appId = (await c.applications.installDev(bundle.path)).applicationId;
  ns = (await c.namespaces.create({ applicationId: appId, name: 'deleg' })).namespaceId;
  ctx = (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
  await c.groups.addMembers(ns, [{ identity: alice.account, role: 'Member' }]);
  relay = await c.contexts.intents(ctx);
}, 120_000);
afterAll(() => node?.destroy());

describe('POST /contexts/{id}/intents', { timeout: 120_000 }, () => {
  it('refuses while the relay lacks CAN_AUTHOR_ON_BEHALF, and that refusal spends the nonce', async () => {
    expect(relay).toMatchObject({ executorAccount: me.accountId, executorKey: me.publicKey, releaseVersion: '1.0.0', canAuthorOnBehalf: false, groupId: ns });
    expect(relay.grantedOnGroupId).toBeUndefined();
    const body = intent(alice, 'set', { key: 'k', value: 'v' });
    expect(await refusal(c.delegation.performIntent(ctx, body))).toEqual([403, expect.stringContaining('grant CAN_AUTHOR_ON_BEHALF')]);

    await c.settings.grantMemberCapabilities(ns, me.accountId, CAPABILITIES.CAN_AUTHOR_ON_BEHALF);
    expect(await c.contexts.intents(ctx)).toMatchObject({ canAuthorOnBehalf: true, grantedOnGroupId: ns });
    expect(await refusal(c.delegation.performIntent(ctx, body))).toEqual([400, expect.stringContaining('already spent')]);
  });

  it("runs the member's intent through the execution path: committed, on the stream, attributed to the member's device", async () => {
    const stream = await RawStream.open(node.url, token);
    try {
      await stream.until((f) => f.length >= 1);
      await subscribeRaw(node.url, token, { id: stream.sessionId, method: 'subscribe', params: { contextIds: [ctx] } });
      const r = await c.delegation.performIntent(ctx, intent(alice, 'set', { key: 'k', value: 'by alice' }));
      expect(r.returns).toBeNull();
      expect(r.rootHash).toBe((await c.contexts.get(ctx)).contextStateHash);
      expect(await c.rpc.execute(ctx, 'get', { key: 'k' })).toBe('by alice');
      const [frame] = (await stream.until((f) => f.some((x) => x.data.result?.type === 'StateMutation'))).filter((x) => x.data.result);
      expect(frame.data.result).toMatchObject({ contextId: ctx, type: 'StateMutation', data: { newRoot: r.rootHash } });
    } finally {
      stream.close();
    }
    const deltas = [];
    for await (const [, d] of node.node.contexts.records.deltas.entries({ prefix: `${ctx}/` })) deltas.push(d);
    const head = (await c.contexts.get(ctx)).contextStateHash;
    const mine = deltas.find((d) => d.rootHash === head)!;
    expect(mine).toMatchObject({ author: alice.device.publicKey, delegation: { executorKey: me.publicKey, warrant: expect.stringMatching(/^[0-9a-f]+$/) } });

  });

  it('refuses a warrant naming another release, and spends its nonce', async () => {
    const n = next();
    const wrong = intent(alice, 'set', { key: 'x', value: '1' }, { releaseVersion: '9.9.9', nonce: n });
    expect(await refusal(c.delegation.performIntent(ctx, wrong))).toEqual([403, expect.stringContaining('names release 9.9.9')]);
    const right = intent(alice, 'set', { key: 'x', value: '1' }, { nonce: n });
    expect(await refusal(c.delegation.performIntent(ctx, right))).toEqual([400, expect.stringContaining(`nonce ${n} is already spent`)]);
    expect(await refusal(c.delegation.performIntent(ctx, intent(alice, 'set', { key: 'x', value: '1' }, { executorKey: '5'.repeat(64) })))).toEqual([403, expect.stringContaining('executor key')]);
    expect(await refusal(c.delegation.performIntent(ctx, intent(alice, 'set', { key: 'x', value: '1' }, { executor: '5'.repeat(64) })))).toEqual([403, expect.stringContaining('executor account')]);
  });

  it('refuses bad warrants: unsigned, garbage, rc.41, another intent, expired, another context, a non-member', async () => {
    const forged = intent(alice, 'set', { key: 'x', value: '1' }, { sign: bob });
    expect(await refusal(c.delegation.performIntent(ctx, forged))).toEqual([400, expect.stringContaining('not signed by the author device')]);
    expect(await refusal(c.delegation.performIntent(ctx, { ...forged, warrant: 'zz' }))).toEqual([400, expect.stringContaining('not hex')]);
    expect(await refusal(c.delegation.performIntent(ctx, { ...forged, warrant: '00'.repeat(RC41_WARRANT_BYTES) }))).toEqual([400, expect.stringContaining('rc.41')]);
    expect(await refusal(c.delegation.performIntent(ctx, { ...forged, authorProof: '00' }))).toEqual([400, expect.stringContaining('authorProof')]);
    const other = intent(alice, 'set', { key: 'x', value: '1' });
    expect(await refusal(c.delegation.performIntent(ctx, { ...other, argsJson: { key: 'x', value: '2' } }))).toEqual([403, expect.stringContaining('does not cover the intent')]);
    const expired = intent(alice, 'set', { key: 'x', value: '1' }, { notAfter: 1_000n });
    expect(await refusal(c.delegation.performIntent(ctx, expired))).toEqual([403, expect.stringContaining('expired')]);
    const elsewhere = intent(alice, 'set', { key: 'x', value: '1' }, { context: '6'.repeat(64) });
    expect(await refusal(c.delegation.performIntent(ctx, elsewhere))).toEqual([403, expect.stringContaining('different context')]);
    expect(await refusal(c.delegation.performIntent(ctx, intent(bob, 'set', { key: 'x', value: '1' })))).toEqual([403, expect.stringContaining('not a member')]);
    expect(await refusal(c.delegation.performIntent('6'.repeat(64), intent(alice, 'set', {})))).toEqual([404, expect.any(String)]);
    expect(await c.rpc.execute(ctx, 'get', { key: 'x' })).toBeNull();

    // a read-only method answers its value; u64 nonces are exact (and leave every lower one stale)
    const read = await c.delegation.performIntent(ctx, intent(alice, 'get', { key: 'k' }, { nonce: 2n ** 64n - 1n }));
    expect(read.returns).toBe('by alice');
    expect(await refusal(c.delegation.performIntent(ctx, intent(alice, 'get', { key: 'k' })))).toEqual([400, expect.stringContaining('already spent')]);
  });
});

describe('GET/POST /groups/{g}/context-intents', { timeout: 120_000 }, () => {
  const seed = '3c'.repeat(32);
  const create = (m: Member, over: Partial<Parameters<typeof creationWarrant>[1]> = {}, initArgs: unknown = {}) => ({
    warrant: creationWarrant(m, { group: ns, seed, applicationId: appId, name: 'general', executor: me.accountId, executorKey: me.publicKey, nonce: next(), initArgs, ...over }),
    authorProof: m.authorProof,
    initArgs,
  });

  it("creates a context for the member once the member may create contexts, checked against the member's capabilities", async () => {
    expect(await c.delegation.contextIntentInfo(ns, alice.account)).toEqual({ executorAccount: me.accountId, executorKey: me.publicKey, groupId: ns, canCreateOnBehalf: true, authorMayCreate: false });
    expect(await refusal(c.delegation.createContextIntent(ns, create(alice)))).toEqual([403, expect.stringContaining('CAN_CREATE_CONTEXT')]);
    await c.settings.grantMemberCapabilities(ns, alice.account, CAPABILITIES.CAN_CREATE_CONTEXT);
    expect((await c.delegation.contextIntentInfo(ns, alice.account)).authorMayCreate).toBe(true);

    expect(await refusal(c.delegation.createContextIntent(ns, { ...create(alice), initArgs: { other: 1 } }))).toEqual([403, expect.stringContaining('initArgs')]);
    expect(await refusal(c.delegation.createContextIntent(ns, create(alice, { applicationId: '8'.repeat(64) })))).toEqual([403, expect.stringContaining('names application')]);
    const created = await c.delegation.createContextIntent(ns, create(alice));
    expect(created).toEqual({ contextId: keyFromSeed(Buffer.from(seed, 'hex')).publicKey, groupId: ns, memberPublicKey: me.publicKey });
    expect(await c.groups.contexts(ns)).toContainEqual({ contextId: created.contextId, name: 'general' });
    expect(await c.rpc.execute(created.contextId, 'len')).toBe(0);
    expect(await refusal(c.delegation.createContextIntent(ns, create(alice)))).toEqual([409, expect.stringContaining('already exists')]);
  });
});

describe('GET/POST /groups/{g}/governance-intents', { timeout: 120_000 }, () => {
  const carol = '9c'.repeat(32);
  const govern = (m: Member, kind: 'Group' | 'Root', op: Buffer, over: Partial<Parameters<typeof governanceWarrant>[1]> = {}) => ({
    warrant: governanceWarrant(m, { scope: ns, kind, op, executor: me.accountId, executorKey: me.publicKey, nonce: next(), ...over }),
    authorProof: m.authorProof,
    op: op.toString('hex'),
  });
  const addCarol = delegableOp({ kind: 'group.member_added', body: { members: [{ account: carol, role: 'Member' }] } });

  it("applies the member's op with the member's authority", async () => {
    expect(await c.delegation.governanceIntentInfo(ns)).toEqual({ executorAccount: me.accountId, executorKey: me.publicKey, groupId: ns, canActOnBehalf: true });
    expect(await refusal(c.delegation.governanceIntent(ns, govern(alice, 'Group', addCarol)))).toEqual([403, expect.stringContaining(alice.account)]);
    await c.settings.grantMemberCapabilities(ns, alice.account, CAPABILITIES.MANAGE_MEMBERS);
    expect(await c.delegation.governanceIntent(ns, govern(alice, 'Group', addCarol))).toEqual({ groupId: ns });
    expect((await c.groups.members(ns)).map((m) => m.identity)).toContain(carol);

    await c.settings.grantMemberCapabilities(ns, alice.account, CAPABILITIES.CAN_CREATE_SUBGROUP);
    const salt = '5a'.repeat(32);
    const sub = subgroupIdOf(alice.account, ns, false, salt);
    const create = delegableOp({ kind: 'group.created', groupId: ns, body: { groupId: sub, parentId: ns, salt, visibility: 'open', name: 'alices' } });
    expect(await c.delegation.governanceIntent(ns, govern(alice, 'Root', create))).toEqual({ groupId: sub });
    expect(await c.groups.members(sub)).toContainEqual({ identity: alice.account, role: 'Admin' });
  });

  it('refuses an op the warrant does not cover, ops that are not delegable or on the other plane, bad bodies and spent nonces', async () => {
    const n = next();
    const w = govern(alice, 'Group', addCarol, { nonce: n });
    const removeCarol = delegableOp({ kind: 'group.member_removed', body: { members: [carol] } });
    expect(await refusal(c.delegation.governanceIntent(ns, { ...w, op: removeCarol.toString('hex') }))).toEqual([403, expect.stringContaining('does not cover the op')]);
    expect(await refusal(c.delegation.governanceIntent(ns, govern(alice, 'Group', delegableOp({ kind: 'namespace.deleted', body: {} }))))).toEqual([403, expect.stringContaining('not delegable')]);
    expect(await refusal(c.delegation.governanceIntent(ns, govern(alice, 'Group', delegableOp({ kind: 'group.created', body: {} }))))).toEqual([403, expect.stringContaining('Root plane')]);
    expect(await refusal(c.delegation.governanceIntent(ns, govern(alice, 'Group', delegableOp({ kind: 'group.member_added', body: { members: 'x' } }))))).toEqual([400, expect.stringContaining('op.body')]);
    expect(await refusal(c.delegation.governanceIntent(ns, govern(alice, 'Group', Buffer.from('not json'))))).toEqual([400, expect.stringContaining('not a delegable op')]);
    expect(await c.delegation.governanceIntent(ns, w)).toEqual({ groupId: ns }); // carol is already a member: adding again is accepted
    expect(await refusal(c.delegation.governanceIntent(ns, w))).toEqual([400, expect.stringContaining(`nonce ${n} is already spent`)]);
    expect(await refusal(c.delegation.governanceIntent(ns, govern(bob, 'Group', addCarol, { scope: '4'.repeat(64) })))).toEqual([403, expect.stringContaining('scoped to')]);
  });
});

describe('admin.delegated_access', { timeout: 120_000 }, () => {
  it('serves the four delegated routes without a token when set, and guards them otherwise', async () => {
    const anonymous = createClient({ baseUrl: node.url });
    expect((await httpError(anonymous.contexts.intents(ctx))).status).toBe(401);
    expect((await httpError(anonymous.delegation.governanceIntentInfo(ns))).status).toBe(401);

    const open = await startTestNode({ configure: (cfg) => void (cfg.admin.delegatedAccess = true) });
    try {
      const owner = createClient({ baseUrl: open.url, tokenStore: new MemoryTokenStore() });
      await owner.auth.login({ username: open.adminUser, password: open.adminPassword });
      const relayMe = await owner.accounts.identity();
      const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.deleg-open' });
      const app = (await owner.applications.installDev(bundle.path)).applicationId;
      const space = (await owner.namespaces.create({ applicationId: app })).namespaceId;
      const context = (await owner.contexts.create({ groupId: space, applicationId: app, initializationParams: [] })).contextId;
      await owner.groups.addMembers(space, [{ identity: alice.account, role: 'Member' }]);
      await owner.settings.grantMemberCapabilities(space, relayMe.accountId, CAPABILITIES.CAN_AUTHOR_ON_BEHALF);

      const anon = createClient({ baseUrl: open.url });
      const info = await anon.contexts.intents(context);
      expect(info.canAuthorOnBehalf).toBe(true);
      expect((await anon.delegation.contextIntentInfo(space)).canCreateOnBehalf).toBe(true);
      expect((await anon.delegation.governanceIntentInfo(space)).canActOnBehalf).toBe(true);
      const warrant = intentWarrant(alice, { context, executor: info.executorAccount, executorKey: info.executorKey, releaseBytecodeId: info.releaseBytecodeId!, releaseVersion: info.releaseVersion!, method: 'set', args: { key: 'open', value: 'yes' }, nonce: 1n });
      await anon.delegation.performIntent(context, { method: 'set', argsJson: { key: 'open', value: 'yes' }, warrant, authorProof: alice.authorProof });
      expect(await owner.rpc.execute(context, 'get', { key: 'open' })).toBe('yes');
      // the warrant is the credential: without a valid one the public route still refuses
      expect((await httpError(anon.delegation.performIntent(context, { method: 'set', warrant, authorProof: alice.authorProof }))).status).toBe(400);
      // everything else stays guarded
      expect((await httpError(anon.contexts.get(context))).status).toBe(401);
      expect((await httpError(anon.upgrades.status(space))).status).toBe(401);
      const doc = await anon.admin.openApi();
      expect((doc as any).paths['/admin-api/contexts/{contextId}/intents'].post.security).toBeUndefined();
      expect((doc as any).paths['/admin-api/contexts/{contextId}'].get.security).toEqual([{ bearer: [] }]);
    } finally {
      await open.destroy();
    }
  });
});

describe('hearth context intent | group intents | group governance-intent', { timeout: 120_000 }, () => {
  it('relays for a member from the command line', async () => {
    const user = await CliUser.create(node.url);
    const dir = await mkdtemp(join(tmpdir(), 'hearth-deleg-cli-'));
    try {
      await user.login(node.adminUser, node.adminPassword);
      // a fresh context: the exact-u64 test above left alice's nonces in `ctx` all spent
      const fresh = (await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
      expect(await user.json(['context', 'intent', 'info', fresh])).toMatchObject({ executorAccount: me.accountId, canAuthorOnBehalf: true, groupId: ns });
      const body = intent(alice, 'set', { key: 'cli', value: 'yes' }, { context: fresh });
      const proofFile = join(dir, 'proof');
      await writeFile(proofFile, `${body.authorProof}\n`);
      const out = await user.json(['context', 'intent', 'perform', fresh, 'set', '--args', JSON.stringify(body.argsJson), '--warrant', body.warrant, '--author-proof', `@${proofFile}`]);
      expect(out).toEqual({ rootHash: expect.stringMatching(/^[0-9a-f]{64}$/), returns: null });
      expect(await c.rpc.execute(fresh, 'get', { key: 'cli' })).toBe('yes');
      const replay = await user.run(['context', 'intent', 'perform', fresh, 'set', '--args', JSON.stringify(body.argsJson), '--warrant', body.warrant, '--author-proof', body.authorProof]);
      expect([replay.code, replay.stderr]).toEqual([1, expect.stringContaining('already spent')]);
      expect((await user.run(['context', 'intent', 'perform', fresh, 'set', '--warrant', 'xyz', '--author-proof', body.authorProof])).code).toBe(2);

      expect(await user.json(['group', 'intents', ns, '--author', alice.account])).toMatchObject({ contexts: { canCreateOnBehalf: true, authorMayCreate: true }, governance: { canActOnBehalf: true } });
      const op = delegableOp({ kind: 'metadata.set', body: { target: 'group', name: 'from the cli', data: {} } });
      const w = governanceWarrant(alice, { scope: ns, kind: 'Group', op, executor: me.accountId, executorKey: me.publicKey, nonce: next() });
      await c.settings.grantMemberCapabilities(ns, alice.account, CAPABILITIES.CAN_MANAGE_METADATA);
      expect(await user.json(['group', 'governance-intent', ns, '--warrant', w, '--author-proof', alice.authorProof, '--op', op.toString('hex')])).toEqual({ groupId: ns });
      expect((await c.groups.info(ns)).metadata).toMatchObject({ name: 'from the cli', updatedBy: alice.account });
    } finally {
      await user.destroy();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('warrant-nonce routes', () => {
  // Admin spec "Contexts" rule 2: "The warrant-nonce routes are absent from node release rc.83 and
  // answer 404; callers then fall back to their own counter." A client that found them would trust
  // the relay's view of its nonces; rc.83 clients keep their own counter, so hearth must not serve them.
  it('answers 404, as rc.83 does, so clients fall back to their own counter', async () => {
    expect((await httpError(c.http.data(`/admin-api/contexts/${ctx}/warrant-nonce/${alice.device.publicKey}`))).status).toBe(404);
    expect((await httpError(c.http.data(`/admin-api/contexts/${ctx}/warrant-nonce`, { method: 'POST', body: { authorProof: alice.authorProof } }))).status).toBe(404);
  });
});
