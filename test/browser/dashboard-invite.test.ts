/**
 * The multi-node workflow in the browser (issue #25 §4): on one node's dashboard "Invite" gives a
 * namespace invitation as one `inv1.` line; pasted into "Join a namespace" on another node's
 * dashboard it joins, and the first node sees the new member; the namespace's context is then joined
 * from the second dashboard and the first node's write read there. A line cut when copied is refused
 * with a message. Screenshot in build/test-output/.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildDashboard } from '../../scripts/build-web.ts';
import { makeBundle } from '../helpers/bundles.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { buildTestApp } from '../helpers/wasm-apps.ts';
import { eventually, startCluster, type Cluster } from '../helpers/cluster.ts';
import { ADMIN_PASSWORD, ADMIN_USER, ROOT } from '../helpers/node.ts';

const OUT = join(ROOT, 'build', 'test-output');
let cluster: Cluster;
let browser: Browser;

beforeAll(async () => {
  const [, started, launched] = await Promise.all([buildDashboard({ ifStale: true }), startCluster(2), launchChromium()]);
  cluster = started;
  browser = launched;
  await mkdir(OUT, { recursive: true });
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await cluster?.destroy();
});

async function signedIn(url: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${url}/admin-dashboard/groups`);
  await page.waitForURL((u) => u.pathname === '/auth/login');
  await page.getByLabel('Username', { exact: true }).fill(ADMIN_USER);
  await page.getByLabel('Password', { exact: true }).fill(ADMIN_PASSWORD);
  await Promise.all([page.waitForURL((u) => u.pathname.startsWith('/admin-dashboard')), page.getByRole('button', { name: 'Sign in' }).click()]);
  await page.getByRole('heading', { level: 1, name: 'Namespaces and groups' }).waitFor();
  return page;
}

it('invites on one node and joins on another, with the invitation as one pasted line', { timeout: 180_000 }, async () => {
  const [a, b] = cluster.nodes as [(typeof cluster.nodes)[0], (typeof cluster.nodes)[0]];
  for (const n of [a, b]) await eventually('connected', async () => (await n.client.admin.peers()).count === 1, 30_000);
  // the same application on both nodes, a namespace and a context on the first
  const wasm = await buildTestApp('kv');
  const bundle = await makeBundle({ wasm, package: 'com.example.kv', version: '1.0.0' });
  const app = (await a.client.applications.installDev(bundle.path)).applicationId;
  await b.client.applications.installDev(bundle.path);
  const ns = (await a.client.namespaces.create({ applicationId: app, name: 'shared' })).namespaceId;
  const ctx = (await a.client.contexts.create({ groupId: ns, applicationId: app, initializationParams: [] })).contextId;
  await a.client.rpc.execute(ctx, 'set', { key: 'greeting', value: 'hello' });

  const pageA = await signedIn(a.url);
  const row = pageA.getByRole('table', { name: 'namespaces' }).getByRole('row').filter({ hasText: 'shared' });
  await row.getByRole('button', { name: 'Invite' }).click();
  const copy = pageA.getByLabel('invitation to copy');
  await copy.waitFor();
  const text = await copy.inputValue();
  expect(text).toMatch(/^inv1\.[A-Za-z0-9_-]+$/);
  await pageA.screenshot({ path: join(OUT, 'dashboard-invitation.png'), fullPage: true });

  const pageB = await signedIn(b.url);
  const form = pageB.getByRole('form', { name: 'join a namespace' });
  // a line cut when copied: refused, nothing joined
  await form.getByLabel('invitation').fill(text.slice(0, 40));
  await form.getByRole('button', { name: 'Join' }).click();
  await pageB.getByRole('alert').filter({ hasText: 'not an invitation' }).waitFor();

  await form.getByLabel('invitation').fill(text);
  await form.getByRole('button', { name: 'Join' }).click();
  await pageB.getByRole('status').filter({ hasText: 'Joined namespace' }).waitFor({ timeout: 30_000 });
  await pageB.getByRole('table', { name: 'namespaces' }).getByText('shared').waitFor();
  await pageB.screenshot({ path: join(OUT, 'dashboard-joined.png'), fullPage: true });

  // the namespace opens on the second node: its context can be joined from there
  const groupContexts = pageB.getByRole('table', { name: 'group contexts' });
  await expect
    .poll(
      async () => {
        await pageB.getByRole('button', { name: 'Refresh contexts' }).click();
        return groupContexts.getByRole('button', { name: 'Join' }).count();
      },
      { timeout: 30_000 },
    )
    .toBe(1);
  await groupContexts.getByRole('button', { name: 'Join' }).click();
  await groupContexts.getByText('joined', { exact: true }).waitFor({ timeout: 30_000 });
  await eventually('the second node reads the first one\'s write', async () => (await b.client.contexts.query(ctx, 'get', { key: 'greeting' }).catch(() => null)) === 'hello', 60_000);
  await pageB.screenshot({ path: join(OUT, 'dashboard-joined-context.png'), fullPage: true });

  const accountB = (await b.client.accounts.identity()).accountId;
  await eventually('the first node lists the new member', async () => (await a.client.groups.members(ns)).some((m) => m.identity === accountB), 30_000);
});
