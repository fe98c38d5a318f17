/**
 * `hearth group upgrade | upgrade-status | upgrade-retry | migration-status | cascade-status |
 * migration-abort` against a real node (issue #15): the progress lines while contexts migrate, the
 * exit code and next step when one fails, JSON output, and the abort's confirmation.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Client } from '../../../src/client/index.ts';
import { makeBundle, signingKey } from '../../helpers/bundles.ts';
import { startCliNode, type CliNode, type CliUser } from '../../helpers/cli.ts';
import type { TestNode } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

const PKG = 'com.hearth.cli-upgrade';
const LINES = { HEARTH_PROGRESS: 'lines' };

let cli: CliNode;
let node: TestNode;
let user: CliUser;
let sdk: Client;
let appId: string;
let v1Blob: string;

/** A namespace pinned to 1.0.0 with `n` contexts; the first holds `block` when `blocked`. */
async function namespace(n: number, blocked: boolean): Promise<{ ns: string; contexts: string[] }> {
  const ns = (await sdk.namespaces.create({ applicationId: appId, appKey: v1Blob })).namespaceId;
  const contexts: string[] = [];
  for (let i = 0; i < n; i++) contexts.push((await sdk.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId);
  if (blocked) await sdk.rpc.execute(contexts[0], 'set', { key: 'block', value: 'yes' });
  return { ns, contexts };
}

beforeAll(async () => {
  cli = await startCliNode();
  ({ node, sdk, user } = cli);
  const key = signingKey();
  const v1 = await makeBundle({ wasm: await buildTestApp('kv'), package: PKG, version: '1.0.0', key });
  const v2 = await makeBundle({ wasm: await buildTestApp('kv_v2'), package: PKG, version: '2.0.0', key });
  appId = (await sdk.applications.installDev(v1.path)).applicationId;
  await sdk.applications.installDev(v2.path);
  v1Blob = (await sdk.applications.versions(appId)).find((v) => v.version === '1.0.0')!.blobId;
}, 120_000);
afterAll(() => cli?.destroy());

it('upgrades with a progress bar of contexts and prints the outcome', { timeout: 120_000 }, async () => {
  const { ns, contexts } = await namespace(2, false);
  const res = await user.run(['group', 'upgrade', ns], { env: LINES });
  expect(res.code, res.stderr).toBe(0);
  expect(res.stderr).toMatch(/upgrading [0-9a-f]{12}…: (completed|\d\/2 contexts)/);
  expect(res.stdout.trim()).toBe('1.0.0 → 2.0.0: completed');
  expect((await sdk.contexts.get(contexts[1])).applicationVersion).toBe('2.0.0');
  expect(await user.json(['group', 'upgrade-status', ns])).toMatchObject({ status: 'completed', localContextsTotal: null, completedAt: expect.any(Number) });
});

it('exits 1 naming the next step when a context fails, then retries, reports and aborts', { timeout: 120_000 }, async () => {
  const { ns, contexts } = await namespace(2, true);
  const failed = await user.run(['group', 'upgrade', ns, '--output', 'json'], { env: LINES });
  expect(failed.code).toBe(1);
  expect(JSON.parse(failed.stdout)).toMatchObject({ groupId: ns, upgrade: { status: 'in_progress', localContextsSwapped: 1, localContextsFailed: 1 } });
  expect(JSON.parse(failed.stderr.trim().split('\n').pop()!)).toMatchObject({ exitCode: 1, error: expect.stringContaining(`hearth group upgrade-retry ${ns}`) });

  expect((await user.run(['group', 'upgrade-retry', ns])).code).toBe(1);
  expect(await user.human(['group', 'migration-status', ns])).toContain('0 migrated, 0 in progress, 1 failed, 0 unknown (of 1)');
  expect(await user.human(['group', 'cascade-status', ns, '--wide'])).toContain('1.0.0 → 2.0.0: in_progress, 1/2 contexts moved, 1 failed'); // --wide: tables fit 100 columns otherwise

  const refused = await user.run(['group', 'migration-abort', ns]);
  expect(refused.code).toBe(2);
  expect(await user.json(['group', 'migration-abort', ns, '--yes'])).toEqual({ namespaceId: ns, aborted: true });
  expect((await sdk.contexts.get(contexts[0])).applicationVersion).toBe('1.0.0');
  expect(await user.human(['group', 'upgrade-status', ns])).toContain('1.0.0 → 2.0.0: aborted');
});
