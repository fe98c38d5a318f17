/**
 * Conformance: the delegated-execution routes through the SDK, each answer checked against the node's
 * OpenAPI document. A member's device (test/helpers/delegation.ts) signs one warrant of each kind
 * for this node, which holds CAN_AUTHOR_ON_BEHALF in the namespace.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Client } from '../../src/client/index.ts';
import { CAPABILITIES } from '../../src/client/settings.ts';
import { makeBundle } from '../helpers/bundles.ts';
import { startConformanceNode, type Conformance } from '../helpers/conformance.ts';
import { creationWarrant, delegableOp, governanceWarrant, intentWarrant, member } from '../helpers/delegation.ts';
import type { TestNode } from '../helpers/node.ts';
import { buildTestApp } from '../helpers/wasm-apps.ts';

let node: TestNode;
let conformance: Conformance;
let c: Client;
let setup: Client;

beforeAll(async () => {
  ({ node, conformance, client: c, setup } = await startConformanceNode());
}, 120_000);
afterAll(() => node.destroy());

it('answers every delegated-execution route as documented', { timeout: 120_000 }, async () => {
  const alice = member(0x51);
  const me = await setup.accounts.identity();
  const relay = { executor: me.accountId, executorKey: me.publicKey };
  const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.deleg-conformance' });
  const appId = (await setup.applications.installDev(bundle.path)).applicationId;
  const ns = (await setup.namespaces.create({ applicationId: appId })).namespaceId;
  const ctx = (await setup.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
  await setup.groups.addMembers(ns, [{ identity: alice.account, role: 'Member' }]);
  await setup.settings.grantMemberCapabilities(ns, me.accountId, CAPABILITIES.CAN_AUTHOR_ON_BEHALF);
  await setup.settings.grantMemberCapabilities(ns, alice.account, CAPABILITIES.CAN_CREATE_CONTEXT | CAPABILITIES.CAN_MANAGE_METADATA);
  const info = await setup.contexts.intents(ctx);

  const args = { key: 'k', value: 'v' };
  const warrant = intentWarrant(alice, { ...relay, context: ctx, releaseBytecodeId: info.releaseBytecodeId!, releaseVersion: info.releaseVersion!, method: 'set', args, nonce: 1n });
  expect((await c.delegation.performIntent(ctx, { method: 'set', argsJson: args, warrant, authorProof: alice.authorProof })).rootHash).toMatch(/^[0-9a-f]{64}$/);

  expect((await c.delegation.contextIntentInfo(ns, alice.account)).authorMayCreate).toBe(true);
  const seed = '7e'.repeat(32);
  const creation = creationWarrant(alice, { ...relay, group: ns, seed, applicationId: appId, nonce: 2n });
  expect((await c.delegation.createContextIntent(ns, { warrant: creation, authorProof: alice.authorProof, initArgs: {} })).groupId).toBe(ns);

  expect((await c.delegation.governanceIntentInfo(ns)).canActOnBehalf).toBe(true);
  const op = delegableOp({ kind: 'metadata.set', body: { target: 'group', name: 'by alice', data: {} } });
  const gov = governanceWarrant(alice, { ...relay, scope: ns, kind: 'Group', op, nonce: 3n });
  expect(await c.delegation.governanceIntent(ns, { warrant: gov, authorProof: alice.authorProof, op: op.toString('hex') })).toEqual({ groupId: ns });

  conformance.assertAreaCovered('delegation');
});
