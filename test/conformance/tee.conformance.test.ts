/**
 * Conformance: the TEE routes through the SDK, on a node with a provider plugged in (so each answers
 * successfully) and on one without (the 501 carries the error body).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MemoryTokenStore } from '../../src/client/index.ts';
import { Conformance } from '../helpers/conformance.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { statusOf } from '../helpers/status.ts';
import { writeFakeTeeProvider } from '../helpers/tee.ts';

const NONCE = '5a'.repeat(32);
let tmp: string;
let node: TestNode;
let bare: TestNode;
let conformance: Conformance;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'hearth-tee-conformance-'));
  const provider = await writeFakeTeeProvider(tmp);
  [node, bare] = await Promise.all([startTestNode({ configure: (cfg) => void (cfg.tee.provider = provider) }), startTestNode()]);
  conformance = await Conformance.load(node.url);
});
afterAll(async () => {
  await Promise.all([node?.destroy(), bare?.destroy()]);
  await rm(tmp, { recursive: true, force: true });
});

it('answers every TEE route as documented', async () => {
  const anonymous = conformance.client();
  expect(Object.keys(await anonymous.tee.info()).sort()).toEqual(['cloudProvider', 'mrtd', 'osImage']);
  expect((await anonymous.tee.attest({ nonce: NONCE, bindNodeKey: true, includeCollateral: true })).boundPublicKey).toMatch(/^[0-9a-f]{64}$/);
  const admin = conformance.client({ tokenStore: new MemoryTokenStore() });
  await admin.auth.login({ username: node.adminUser, password: node.adminPassword });
  expect((await admin.tee.registrationAttest({ nonce: NONCE })).quoteB64).toEqual(expect.any(String));

  // The same document describes a node without a TEE: info and attestation are a 501 naming why.
  const none = await Conformance.load(bare.url);
  expect(await statusOf(none.client().tee.info())).toBe(501);
  expect(await statusOf(none.client().tee.attest({ nonce: NONCE }))).toBe(501);

  conformance.assertAreaCovered('tee');
});
