/**
 * `POST /groups/{g}/signing-key` end to end (issue #15): the node takes its own signing secret for a
 * group and answers its public key; a key of no device of its account is 403, a malformed one 400
 * without the secret in the answer, an unknown group 404. Through the SDK and `hearth group
 * signing-key --key-file`.
 */
import { createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Client } from '../../../src/client/index.ts';
import { adminSdk, CliUser, installTestApp } from '../../helpers/cli.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';
import { httpError } from '../../helpers/status.ts';
import { rawPrivateSeed } from '../../../src/crypto/keys.ts';

let node: TestNode;
let c: Client;
let ns: string;
let seed: string;
let tmp: string;

beforeAll(async () => {
  node = await startTestNode();
  c = await adminSdk(node);
  ({ ns } = await installTestApp(c, 'kv', 'com.hearth.sk'));
  // the node's own Ed25519 secret, as its operator holds it in the home directory
  seed = rawPrivateSeed(createPrivateKey(await readFile(node.paths.nodeKey))).toString('hex');
  tmp = await mkdtemp(join(tmpdir(), 'hearth-sk-'));
}, 120_000);
afterAll(async () => {
  await node?.destroy();
  await rm(tmp, { recursive: true, force: true });
});

it("registers the node's own signing key and refuses keys it may not hold", { timeout: 120_000 }, async () => {
  const me = await c.accounts.identity();
  expect(await c.groups.registerSigningKey(ns, { signingKey: seed })).toEqual({ publicKey: me.publicKey });

  const foreign = await httpError(c.groups.registerSigningKey(ns, { signingKey: '42'.repeat(32) }));
  expect(foreign.status).toBe(403);
  expect(foreign.errorText).toContain(`not a signing key of this node's account ${me.accountId}`);

  const malformed = await httpError(c.groups.registerSigningKey(ns, { signingKey: `${seed.slice(0, 60)}zz` }));
  expect(malformed.status).toBe(400);
  expect(JSON.stringify(malformed.body)).not.toContain(seed.slice(0, 60));
  expect((await httpError(c.groups.registerSigningKey(ns, {} as never))).status).toBe(400);
  expect((await httpError(c.groups.registerSigningKey('9'.repeat(64), { signingKey: seed }))).status).toBe(404);

  const user = await CliUser.create(node.url);
  try {
    await user.login(node.adminUser, node.adminPassword);
    const file = join(tmp, 'key');
    await writeFile(file, `${seed}\n`, { mode: 0o600 });
    expect(await user.json(['group', 'signing-key', ns, '--key-file', file])).toEqual({ groupId: ns, publicKey: me.publicKey });
    const bare = await user.run(['group', 'signing-key', ns]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('--key-file');
  } finally {
    await user.destroy();
  }
});
