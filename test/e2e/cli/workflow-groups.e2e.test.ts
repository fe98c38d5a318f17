/**
 * `hearth workflow run` (issue #36) on four nodes, and `--keep`: the step types the first file
 * (workflow.e2e.test.ts beside it) leaves out — installs from a URL (the test serves the bundles and a
 * raw `.wasm` on 127.0.0.1), adding, removing and leaving subgroup members, joining through
 * inheritance, detaching and resyncing contexts, a refused signing key, an upgrade of a subgroup
 * then a cascade over the namespace with every status, migration and polling step, leaving and
 * deleting namespaces — in one workflow on four nodes (test/fixtures/workflows/groups-four-nodes.yml),
 * a node kept up after its steps (the last one failing, its signing key withheld) until Ctrl-C, and
 * on two nodes (migration-two-nodes.yml) an upgrade whose migration each member reports to the
 * other, a signing key of the node's own registered (read by a script whose output is marked secret,
 * so it shows nowhere in what the run printed), and merobox's `requester` key.
 */
import { createPrivateKey } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, MemoryTokenStore } from '../../../src/client/index.ts';
import { rawPrivateSeed } from '../../../src/crypto/keys.ts';
import { makeBundle, signingKey } from '../../helpers/bundles.ts';
import { APPS_DIR, buildTestApp } from '../../helpers/wasm-apps.ts';
import { tail, unreachable, workflow, workflowDir } from '../../helpers/workflow.ts';

const PKG = 'com.hearth.workflow-groups';
let dir: string;
let server: Server;
/** how many times each served file was fetched */
const fetched: Record<string, number> = {};

/** The fixture with the served port in place of PORT (and `homes`, when given, in place of HOMES). */
async function withPort(name: string, homes?: string): Promise<string> {
  const port = (server.address() as { port: number }).port;
  const file = join(dir, `served-${name}`);
  let text = (await readFile(join(dir, name), 'utf8')).replace('http://127.0.0.1:PORT', `http://127.0.0.1:${port}`);
  if (homes) text = text.replace('homes: HOMES', `homes: ${JSON.stringify(homes)}`);
  await writeFile(file, text);
  return file;
}

beforeAll(async () => {
  dir = await workflowDir();
  const key = signingKey();
  const kv = await buildTestApp('kv');
  const kv2 = await buildTestApp('kv_v2');
  // 3.0.0 is 2.0.0's code declaring a migration from 2.0.0 as well: the cascade meets a subgroup
  // already moved to 2.0.0 beside the namespace's contexts still on 1.0.0
  const abi2 = JSON.parse(await readFile(join(APPS_DIR, 'kv_v2.abi.json'), 'utf8'));
  const abi3 = { ...abi2, migrations: [...abi2.migrations, { from: '2.0.0', method: 'migrate' }] };
  const files: Record<string, Uint8Array> = {
    'kv.wasm': kv,
    'kv-1.0.0.mpk': (await makeBundle({ wasm: kv, package: PKG, version: '1.0.0', key, dir })).bytes,
    'kv-2.0.0.mpk': (await makeBundle({ wasm: kv2, package: PKG, version: '2.0.0', key, dir })).bytes,
    'kv-3.0.0.mpk': (await makeBundle({ wasm: await buildTestApp('kv_v2', { noAbi: true }), abi: abi3, package: PKG, version: '3.0.0', key, dir })).bytes,
  };
  server = createServer((req, res) => {
    const name = (req.url ?? '').slice(1);
    fetched[name] = (fetched[name] ?? 0) + 1;
    const body = files[name];
    if (!body) return res.writeHead(404).end('not here');
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
}, 180_000);
afterAll(async () => {
  await new Promise((done) => server?.close(done));
  await rm(dir, { recursive: true, force: true });
});

it('runs membership, context, upgrade, migration and namespace steps on four nodes', { timeout: 420_000 }, async () => {
  const started = Date.now();
  const run = await workflow([await withPort('groups-four-nodes.yml'), '--output', 'json']);
  console.log(`four-node workflow: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  expect(run.code, tail(run)).toBe(0);
  const summary = JSON.parse(run.stdout);
  expect(summary.nodes).toHaveLength(4);
  const types = new Set(summary.steps.map((s: { type: string }) => s.type));
  for (const t of [
    'install_application', 'add_group_members', 'remove_group_members', 'leave_group', 'join_subgroup_inheritance', 'detach_context_from_group',
    'resync_context', 'register_group_signing_key', 'upgrade_group', 'get_group_upgrade_status', 'retry_group_upgrade', 'cascade_namespace_application',
    'assert_cascade_complete', 'get_cascade_status', 'assert_migration_complete', 'get_migration_status', 'abort_migration', 'leave_namespace', 'delete_namespace',
  ]) {
    expect(types, t).toContain(t);
  }
  const status = (name: string) => summary.steps.find((s: { name: string }) => s.name === name)?.status;
  expect(status('A key that speaks for no one is refused')).toBe('expected_failure');
  expect(status('Nothing failed, so nothing to retry')).toBe('expected_failure');
  expect(status('Every member reports its migration to node 1')).toBe('passed');
  // the signing key's secret is kept out of everything the run printed
  expect(run.stdout + run.stderr).not.toContain('9f1c6a3e5b7d2f4a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f3a');
  expect(summary.exported).toMatchObject({ team_size: 3, team_left: 1, inherited: true, resync: true, team_from: '1.0.0', team_to: '2.0.0', team_status: 'completed', cascade_done: true, all_migrated: true, migrated: 4, unknown: 0, aborted: false, left4: [], ns3_deleted: true });
  // each node fetched each version once
  expect(fetched).toMatchObject({ 'kv-1.0.0.mpk': 4, 'kv-2.0.0.mpk': 4, 'kv-3.0.0.mpk': 4 });
  await unreachable(summary.nodes.map((n: { url: string }) => n.url));
});

it('on two nodes: every member reports its migration, a key of its own registers, and requester goes along', { timeout: 300_000 }, async () => {
  const homes = join(dir, 'mig-homes');
  const run = await workflow([await withPort('migration-two-nodes.yml', homes), '--nodes-dir', homes, '--output', 'json']);
  expect(run.code, tail(run)).toBe(0);
  const summary = JSON.parse(run.stdout);
  const byType = (type: string) => summary.steps.filter((s: { type: string }) => s.type === type);
  expect(byType('assert_migration_complete').map((s: { status: string }) => s.status)).toEqual(['passed', 'passed']);
  expect(byType('register_group_signing_key')[0]).toMatchObject({ status: 'passed' });
  expect(summary.exported).toMatchObject({ registered: true, registered_key: summary.exported.key1, migrated1: 2, unknown1: 0, total1: 2, migrated2: 2, group_deleted: true, ctx_deleted: true, ns_deleted: true });
  // own-key.sh's output is marked secret: the node's signing secret shows nowhere in what the run printed
  const nodeSecret = rawPrivateSeed(createPrivateKey(await readFile(join(homes, 'mig-1', 'node-key.pem')))).toString('hex');
  expect(run.stdout + run.stderr).not.toContain(nodeSecret);
  expect(summary.exported.secret1).toBe('<secret withheld>');
  await unreachable(summary.nodes.map((n: { url: string }) => n.url));
});

it('keeps the node up after a failing step with --keep until Ctrl-C, its state reachable with the printed admin', { timeout: 180_000 }, async () => {
  let kept: Record<string, any> | undefined;
  let namespaces: unknown[] = [];
  let seen: Promise<void> = Promise.resolve();
  const run = await workflow([await withPort('keep.yml'), '--keep', '--output', 'json'], (e, child) => {
    if (e.event !== 'kept') return;
    kept = e;
    seen = (async () => {
      try {
        const sdk = createClient({ baseUrl: e.nodes[0].url, tokenStore: new MemoryTokenStore() });
        await sdk.auth.login({ username: e.admin.username, password: e.admin.password });
        namespaces = await sdk.namespaces.list();
      } finally {
        child.kill('SIGINT');
      }
    })();
  });
  await seen;
  // the failing step's code, once Ctrl-C has stopped the kept node
  expect(run.code, tail(run)).toBe(1);
  expect(kept?.nodes).toHaveLength(1);
  const summary = JSON.parse(run.stdout);
  expect(namespaces).toEqual([expect.objectContaining({ namespaceId: summary.exported.ns })]);
  expect(summary.steps[0]).toMatchObject({ name: 'A URL that is not there', status: 'expected_failure' });
  expect(summary.steps[0].error).toMatch(/\/missing\.mpk answered 404/);
  // the raw .wasm was bundled by the runner: another application than the signed bundle of the same code
  expect(summary.exported.dev_app).not.toBe(summary.exported.app_id);
  expect(run.events.find((e) => e.event === 'note' && /dev: true with a raw \.wasm/.test(e.text))).toBeDefined();
  // the failing request is shown, its secret is not
  expect(summary.failed).toMatchObject({ name: 'A signing key that speaks for no one', type: 'register_group_signing_key', request: `POST /admin-api/groups/${summary.exported.ns}/signing-key <secret withheld>` });
  expect(summary.failed.answer).toMatch(/^403 /);
  expect(run.stdout + run.stderr).not.toContain('4d2c8e6a0b3f5d7c9e1a2b4c6d8e0f1a3b5c7d9e2f4a6b8c0d1e3f5a7b9c2d4e');
  await unreachable(kept!.nodes.map((n: { url: string }) => n.url));
});
