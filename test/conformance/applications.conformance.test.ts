/**
 * Conformance: applications and packages (admin spec "Applications and packages"), through the SDK.
 * One node with a registry directory: a dev install and a registry install of two versions of one
 * package (same signer, so one application id), then every read, then uninstall. Every answer is
 * checked against the node's OpenAPI document by the recording client.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { publishToDirectory } from '../../src/applications/registry.ts';
import { HttpError } from '../../src/client/index.ts';
import { makeBundle, signingKey, testAbi, tinyWasm } from '../helpers/bundles.ts';
import { Conformance } from '../helpers/conformance.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

let work: string;
let node: TestNode;
let conformance: Conformance;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'hearth-apps-conformance-'));
  node = await startTestNode({ configure: (cfg) => void (cfg.registry.dir = join(work, 'registry')) });
  conformance = await Conformance.load(node.url);
});
afterAll(async () => {
  await node?.destroy();
  await rm(work, { recursive: true, force: true });
});

it('answers every application and package route as documented', async () => {
  const c = conformance.client();
  await c.auth.login({ username: node.adminUser, password: node.adminPassword });

  const key = signingKey();
  const abi = testAbi(['get', 'set'], ['get']);
  const v1 = await makeBundle({ wasm: tinyWasm({ abi }), abi, package: 'com.hearth.conformance', version: '1.0.0', key, dir: work });
  const v2 = await makeBundle({ wasm: tinyWasm({ abi, extra: 1 }), abi, package: 'com.hearth.conformance', version: '1.2.0', key, dir: work });
  expect(v2.applicationId).toBe(v1.applicationId); // one package and signer: one application
  const appId = v1.applicationId;

  expect(await c.applications.installDev(v1.path)).toEqual({ applicationId: appId });
  await publishToDirectory(join(work, 'registry'), v2.bytes);
  expect(await c.applications.install('com.hearth.conformance', '1.2.0')).toEqual({ applicationId: appId });

  const listed = await c.applications.list();
  expect(listed.map((a) => a.id)).toEqual([appId]);
  const app = await c.applications.get(appId);
  expect(app).toMatchObject({ id: appId, package: 'com.hearth.conformance', version: '1.2.0', size: v2.bytes.length, signer_id: v2.signerId });
  expect(JSON.parse(new TextDecoder().decode(Uint8Array.from(app.metadata)))).toMatchObject({ package: 'com.hearth.conformance' });
  expect(await c.applications.abi(appId)).toEqual(abi);
  expect((await c.applications.versions(appId)).map((v) => v.version)).toEqual(['1.2.0', '1.0.0']);

  expect(await c.applications.packages()).toEqual(['com.hearth.conformance']);
  expect(await c.applications.packageVersions('com.hearth.conformance')).toEqual(['1.2.0', '1.0.0']);
  expect(await c.applications.latest('com.hearth.conformance')).toEqual({ applicationId: appId, version: '1.2.0' });
  expect(await c.applications.latest('com.hearth.unknown')).toEqual({ applicationId: null, version: null });

  // documented errors keep their {error} shape
  const missing = await c.applications.get('e'.repeat(64)).catch((e: unknown) => e);
  expect(missing).toBeInstanceOf(HttpError);
  expect((missing as HttpError).status).toBe(404);
  const unresolvable = await c.applications.install('com.hearth.nowhere', '9.9.9').catch((e: unknown) => e);
  expect((unresolvable as HttpError).status).toBe(502);

  // hearth's upload install: the same bundle bytes sent as the body
  expect(await c.applications.installBundle(v1.bytes)).toEqual({ applicationId: appId });

  // hearth's development bundling of a raw module (issue #34 §2): a bundle back, nothing installed
  const dev = await c.applications.bundleDev(tinyWasm({ abi, extra: 2 }), { package: 'com.hearth.devbundle', version: '0.1.0' });
  expect(dev.applicationId).toMatch(/^[0-9a-f]{64}$/);
  expect(dev.bundle.length).toBeGreaterThan(0);
  expect((await c.applications.list()).map((a) => a.id)).toEqual([appId]);

  expect(await c.applications.uninstall(appId)).toEqual({ applicationId: appId });
  expect(await c.applications.list()).toEqual([]);
  expect(await c.applications.packages()).toEqual([]);

  conformance.assertAreaCovered('applications');
});
