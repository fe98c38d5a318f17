/**
 * The dashboard in a real browser against a real node (issue #16): `/` leads to sign-in and back,
 * every page loads without an error, and the main flows work end to end — install an application
 * from a file (with progress), create a context, call it and see its event arrive in the live log,
 * see its sync status (and none on a node without a network), upload and download a blob, manage
 * a group's capabilities, see the node's network (a peer connecting, and a standalone node saying it
 * has none), read the metrics, refresh an expired token without the user noticing,
 * and revoke this session's key (which sends the user to the login page with the reason).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard } from '../../scripts/build-web.ts';
import { createClient, HttpError, MemoryTokenStore } from '../../src/client/index.ts';
import { makeBundle } from '../helpers/bundles.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';
import { buildTestApp } from '../helpers/wasm-apps.ts';

let node: TestNode;
/** added to the node's clock: moves the node past an access token's lifetime */
let skewMs = 0;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let work: string;
let bundlePath: string;
const pageErrors: string[] = [];

const PAGES = [
  ['Overview', 'Overview'],
  ['Applications', 'Applications'],
  ['Contexts', 'Contexts'],
  ['Namespaces & groups', 'Namespaces and groups'],
  ['Blobs', 'Blobs'],
  ['Keys', 'Keys'],
  ['Event log', 'Event log'],
  ['Network', 'Network'],
  ['Metrics', 'Metrics'],
] as const;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'hearth-dashboard-'));
  const [, started, launched, wasm] = await Promise.all([buildDashboard({ ifStale: true }), startTestNode({ clock: { now: () => Date.now() + skewMs } }), launchChromium(), buildTestApp('kv')]);
  node = started;
  browser = launched;
  const bundle = await makeBundle({ wasm, package: 'com.example.kv', version: '1.0.0', name: 'Key-value store', dir: work });
  bundlePath = bundle.path;
  context = await browser.newContext({ acceptDownloads: true });
  page = await context.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('dialog', (dialog) => void dialog.accept());
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await node?.destroy();
  await rm(work, { recursive: true, force: true });
});

async function signIn(p: Page, to: TestNode = node): Promise<void> {
  await p.waitForURL((u) => u.pathname === '/auth/login');
  await p.getByLabel('Username', { exact: true }).fill(to.adminUser);
  await p.getByLabel('Password', { exact: true }).fill(to.adminPassword);
  await Promise.all([p.waitForURL((u) => u.pathname.startsWith('/admin-dashboard')), p.getByRole('button', { name: 'Sign in' }).click()]);
}

async function open(name: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'pages' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

describe('the dashboard', () => {
  it('sends / to sign-in and back, then shows the node overview', async () => {
    const res = await page.goto(`${node.url}/`);
    expect(res?.ok()).toBe(true);
    const login = new URL(page.url());
    expect(login.pathname).toBe('/auth/login');
    expect(login.searchParams.get('callback-url')).toBe(`${node.url}/admin-dashboard/`);
    await signIn(page);
    // the tokens came in the fragment and were taken out of the address bar
    expect(new URL(page.url()).hash).toBe('');
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await expect.poll(() => page.getByTestId('health').textContent()).toContain('alive, ready');
    expect(await page.getByTestId('version').textContent()).toMatch(/\d+\.\d+\.\d+/);
    expect(await page.getByTestId('peers').textContent()).toContain('0');
    await expect.poll(() => page.getByTestId('store-size').textContent()).toMatch(/\d+(\.\d)? (B|KiB|MiB)/);
    expect(await page.getByTestId('uptime').textContent()).toMatch(/\d+ (s|min|h|d)/);
  });

  it('loads every page without an error', async () => {
    for (const [link, heading] of PAGES) {
      await open(link, heading);
      // lists say "Loading…" until their data arrived (the event stream keeps the network busy)
      await expect.poll(() => page.getByText('Loading…').count()).toBe(0);
      expect(await page.getByRole('alert').count(), `${heading} shows an error`).toBe(0);
    }
    expect(pageErrors).toEqual([]);
  });

  it('says on a fresh node that a namespace needs an installed application, with a labelled, disabled choice', async () => {
    await open('Namespaces & groups', 'Namespaces and groups');
    await expect.poll(() => page.getByTestId('no-applications').count()).toBe(1);
    expect(await page.getByTestId('no-applications').textContent()).toMatch(/none is installed on this node yet: install one on the Applications page first/);
    const select = page.getByLabel('Application', { exact: true });
    expect(await select.isDisabled()).toBe(true);
    expect(await select.locator('option').allTextContents()).toEqual(['(none installed)']);
    expect(await page.getByRole('button', { name: 'Create namespace' }).isDisabled()).toBe(true);
  });

  it('offers to bundle a raw .wasm for development with the node’s key, then installs and lists it', async () => {
    await open('Applications', 'Applications');
    const wasm = join(work, 'Raw Store.wasm');
    await writeFile(wasm, await buildTestApp('kv'));
    await page.locator('input[type=file][accept=".mpk,.wasm"]').setInputFiles(wasm);
    await page.getByRole('button', { name: 'Install' }).click();
    const offer = page.getByRole('region', { name: 'bundle for development' });
    await offer.waitFor();
    expect(await offer.textContent()).toContain('raw WebAssembly module');
    expect(await offer.getByLabel('Package').inputValue()).toBe('dev.local.raw-store');
    await offer.getByLabel('Version').fill('0.2.0');
    await offer.getByRole('button', { name: 'Bundle and install' }).click();
    const done = page.getByRole('status').filter({ hasText: 'Bundled for development and installed application' });
    await done.waitFor();
    expect(await offer.count()).toBe(0);
    // listed, and the node holds it as a signed bundle of the package, signed by its development key
    const apps = await node.node.applications.list();
    const dev = apps.find((a) => a.package === 'dev.local.raw-store');
    expect(dev).toMatchObject({ version: '0.2.0' });
    await page.getByRole('table', { name: 'installed applications' }).getByText('dev.local.raw-store').first().waitFor();
    await expect(readFile(join(node.paths.dir, 'dev-signing-key.pem'), 'utf8')).resolves.toContain('BEGIN PRIVATE KEY');
    // the node itself still refuses the raw module on an install
    const admin = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
    await admin.auth.login({ username: node.adminUser, password: node.adminPassword });
    const refused = await admin.applications.installBundle(await readFile(wasm)).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(HttpError);
    expect((refused as HttpError).message).toContain('hearth app bundle --wasm <file>');
    await admin.applications.uninstall(dev!.id);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor();
  });

  it('installs an application from a file with a progress bar', async () => {
    await open('Applications', 'Applications');
    await page.locator('input[type=file][accept=".mpk,.wasm"]').setInputFiles(bundlePath);
    await page.getByRole('button', { name: 'Install' }).click();
    await page.getByRole('status').filter({ hasText: 'Installed application' }).waitFor();
    expect(await page.getByRole('progressbar', { name: 'upload' }).getAttribute('value')).toBe(String((await readFile(bundlePath)).length));
    await page.getByRole('table', { name: 'installed applications' }).getByText('Key-value store').waitFor();
  });

  it('creates a context, names it, calls it and shows the event in the live log', async () => {
    await open('Contexts', 'Contexts');
    const form = page.getByRole('form', { name: 'create a context' });
    await form.getByLabel('Name (optional)').fill('main');
    await form.getByRole('button', { name: 'Create context' }).click();
    const selected = page.locator('#selected-context');
    await selected.waitFor();
    await selected.getByLabel('new alias').fill('kv-main');
    await selected.getByRole('button', { name: 'Add alias' }).click();
    // the list shows the alias as the context's name
    await page.getByRole('table', { name: 'contexts' }).getByText('kv-main', { exact: true }).waitFor();

    const call = page.getByRole('form', { name: 'call a method' });
    await call.getByLabel('Method').selectOption('set');
    await call.getByLabel('Arguments (JSON)').fill('{"key":"greeting","value":"hello"}');
    await call.getByRole('button', { name: 'Call' }).click();
    await page.getByRole('status', { name: 'call result' }).getByText('set returned nothing').waitFor();

    await call.getByLabel('Method').selectOption('get');
    await call.getByLabel('Arguments (JSON)').fill('{"key":"greeting"}');
    await call.getByRole('button', { name: 'Call' }).click();
    await page.getByRole('status', { name: 'call result' }).getByText('hello', { exact: true }).waitFor();
    await expect.poll(() => page.getByTestId('state-size').textContent()).toMatch(/\d+ B|KiB/);

    await open('Event log', 'Event log');
    const frame = page.getByRole('list', { name: 'events' }).locator('li[data-type=StateMutation]').first();
    await frame.waitFor();
    // the event's bytes are shown as the text they are
    expect(await frame.textContent()).toContain('Inserted {"key":"greeting","value":"hello"}');
    expect(await page.getByTestId('stream-status').textContent()).toBe('live');
  });

  it('resumes the event log after a reload, with the events that happened meanwhile', async () => {
    const contextId = (await page.evaluate(async () => {
      const tokens = JSON.parse(localStorage.getItem('hearth.dashboard.tokens') ?? '{}');
      const res = await fetch('/admin-api/contexts', { headers: { authorization: `Bearer ${tokens.accessToken}` } });
      return (await res.json()).data.contexts[0].id as string;
    })) as string;
    // a call made from elsewhere while the page reloads
    const other = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
    await other.auth.login({ username: node.adminUser, password: node.adminPassword });
    await page.reload();
    await other.rpc.execute(contextId, 'set', { key: 'during', value: 'reload' });
    await page.getByRole('heading', { level: 1, name: 'Event log' }).waitFor();
    await page.getByRole('list', { name: 'events' }).getByText('Inserted {"key":"during","value":"reload"}').waitFor();
    await page.getByRole('list', { name: 'events' }).getByText('resumed the previous session', { exact: false }).waitFor();
  });

  it("shows each context's sync status: a node with a network and no peers says so", async () => {
    expect(node.node.network).toBeDefined(); // libp2p on 127.0.0.1, nothing to dial
    await open('Contexts', 'Contexts');
    const table = page.getByRole('table', { name: 'contexts' });
    await table.getByRole('columnheader', { name: 'Sync', exact: true }).waitFor();
    const row = table.getByRole('row').filter({ hasText: 'kv-main' });
    expect(await row.getByTestId('sync-badge').textContent()).toBe('no peers');
    await row.getByRole('button', { name: 'Open' }).click();
    const panel = page.getByRole('region', { name: 'Sync', exact: true });
    await panel.getByTestId('sync-panel').waitFor();
    expect(await panel.getByTestId('sync-badge').textContent()).toBe('no peers');
    expect(await panel.getByTestId('sync-state').textContent()).toBe('idle');
    expect(await panel.getByRole('list', { name: 'sync reasons' }).locator('li[data-reason=no_peers]').textContent()).toContain('no connected peer holds this context');
    expect(await panel.getByTestId('sync-no-peers').textContent()).toBe('none yet');
    expect(await panel.getByTestId('sync-last').textContent()).toBe('never');
    // asking to sync with nobody to ask changes nothing, and says nothing went wrong
    await panel.getByRole('button', { name: 'Sync now' }).click();
    await panel.getByRole('button', { name: 'Sync now' }).waitFor({ state: 'visible' });
    await expect.poll(() => panel.getByRole('button', { name: 'Sync now' }).isEnabled()).toBe(true);
    expect(await panel.getByTestId('sync-badge').textContent()).toBe('no peers');
    expect(await panel.getByRole('alert').count()).toBe(0);
  });

  it('shows no sync status where the node reports none (a node without a network)', async () => {
    const standalone = await startTestNode({ network: null });
    const other = await browser.newContext();
    try {
      const client = createClient({ baseUrl: standalone.url, tokenStore: new MemoryTokenStore() });
      await client.auth.login({ username: standalone.adminUser, password: standalone.adminPassword });
      const { applicationId } = await client.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundlePath, metadata: [] } });
      const { namespaceId } = await client.namespaces.create({ applicationId });
      const { contextId } = await client.contexts.create({ groupId: namespaceId, initializationParams: [] });
      expect(await client.contexts.get(contextId)).not.toHaveProperty('sync');
      const noNetwork = await client.contexts.syncStatus(contextId).catch((e: unknown) => e);
      expect(noNetwork).toBeInstanceOf(HttpError);
      expect((noNetwork as HttpError).status).toBe(503);
      const p = await other.newPage();
      p.on('pageerror', (err) => pageErrors.push(err.message));
      await p.goto(`${standalone.url}/admin-dashboard/contexts`);
      await signIn(p, standalone);
      const table = p.getByRole('table', { name: 'contexts' });
      await table.getByRole('button', { name: `open ${contextId}` }).click();
      await p.locator('#selected-context').getByRole('region', { name: 'State', exact: true }).waitFor();
      expect(await table.getByRole('columnheader', { name: 'Sync', exact: true }).count()).toBe(0);
      expect(await p.getByTestId('sync-badge').count()).toBe(0);
      expect(await p.getByRole('region', { name: 'Sync', exact: true }).count()).toBe(0);

      // its Network page says it has no network, instead of empty tables
      const status = await client.admin.networkStatus();
      expect(status.standalone).toBe(true);
      await p.getByRole('navigation', { name: 'pages' }).getByRole('link', { name: 'Network', exact: true }).click();
      await p.getByTestId('network-summary').waitFor();
      expect(await p.getByTestId('network-summary').textContent()).toMatch(/^This node runs without a network/);
      expect(await p.getByTestId('local-peer-id').locator('code').getAttribute('data-id')).toBe(status.localPeerId);
      expect(await p.getByRole('table').count()).toBe(0);
      expect(await p.getByRole('region', { name: 'Connected peers' }).count()).toBe(0);
      expect(await p.getByRole('alert').count()).toBe(0);
    } finally {
      await other.close();
      await standalone.destroy();
    }
  });

  it("shows the node's network: its peer id and addresses, a peer that connects, and the topics of what it holds", async () => {
    const client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
    await client.auth.login({ username: node.adminUser, password: node.adminPassword });
    const status = await client.admin.networkStatus();
    expect(status.standalone).toBe(false);
    expect(status.externalAddrs.length).toBeGreaterThan(0);
    await open('Network', 'Network');
    await page.getByTestId('local-peer-id').waitFor();
    expect(await page.getByTestId('local-peer-id').locator('code').getAttribute('data-id')).toBe(status.localPeerId);
    const addrs = page.getByRole('list', { name: 'dialable addresses' }).locator('code');
    expect(await addrs.evaluateAll((els) => els.map((e) => e.getAttribute('data-id')))).toEqual(status.externalAddrs);
    expect(await page.getByRole('list', { name: 'dialable addresses' }).getByRole('button', { name: `copy ${status.externalAddrs[0]}` }).count()).toBe(1);
    expect(await page.getByTestId('network-summary').textContent()).toMatch(/^No peer connected/);
    // the test node listens on 127.0.0.1 only: local, never "Public"
    expect(status.listenAddrs.every((a) => a.startsWith('/ip4/127.'))).toBe(true);
    expect(await page.getByTestId('reachability').textContent()).toMatch(/^Local only: /);

    // the context created above is followed: its topic row says what it is and leads to it
    const [held] = await client.contexts.list();
    const topics = page.getByRole('table', { name: 'topics' });
    const topicRow = topics.getByRole('row').filter({ has: page.locator(`code[data-topic="${held!.id}"]`) });
    await topicRow.waitFor();
    // named by the context's alias when the dashboard knows it
    await expect.poll(() => topicRow.getByRole('link').textContent()).toBe("a context's state (kv-main)");
    expect(await topics.locator(`code[data-topic="ns/${held!.groupId}"]`).count()).toBe(1);

    // a second node bootstrapping from the first address shown connects, and appears in the table
    const second = await startTestNode({ configure: (cfg) => void (cfg.bootstrap.nodes = [status.externalAddrs[0]!]) });
    try {
      const secondId = second.node.network!.status().peerId;
      const row = page.getByRole('table', { name: 'connected peers' }).getByRole('row').filter({ has: page.locator(`code[data-peer-id="${secondId}"]`) });
      await row.waitFor({ timeout: 20_000 });
      expect(await row.getByRole('cell').nth(1).textContent()).toMatch(/^\/ip4\/127\.0\.0\.1\/tcp\/\d+/);
      expect(await row.getByRole('cell').nth(2).textContent()).toBe('inbound');
      expect(await row.locator('time').textContent()).toMatch(/^\d+ s ago$/);
      await expect.poll(() => page.getByTestId('network-summary').textContent()).toMatch(/^1 peer connected/);
      // the connection's traffic is counted; nobody misbehaved
      await expect.poll(() => page.getByTestId('traffic').textContent()).toMatch(/^Bytes[1-9][\d.]* (B|KiB|MiB) in, [1-9][\d.]* (B|KiB|MiB) out/);
      expect(await page.getByTestId('no-penalties').count()).toBe(1);
      expect(await page.getByRole('region', { name: 'Penalties and bans' }).getByText('No peer is banned.').count()).toBe(1);
      expect(await page.getByRole('region', { name: 'Governance replication' }).count()).toBe(1);
      const now = await client.admin.networkStatus();
      expect(now.connections).toEqual(expect.arrayContaining([expect.objectContaining({ peerId: secondId, direction: 'inbound' })]));
    } finally {
      await second.destroy();
    }
    expect(await page.getByRole('alert').count()).toBe(0);

    await topicRow.getByRole('link').click();
    await page.getByRole('heading', { level: 1, name: 'Contexts' }).waitFor();
    expect(new URL(page.url()).searchParams.get('context')).toBe(held!.id);
    await page.locator('#selected-context').waitFor();
    expect(pageErrors).toEqual([]);
  });

  it('uploads a blob with progress and downloads it again', async () => {
    await open('Blobs', 'Blobs');
    const file = join(work, 'notes.txt');
    await writeFile(file, 'the dashboard stores this'.repeat(1000));
    await page.getByRole('form', { name: 'upload a blob' }).locator('input[type=file]').setInputFiles(file);
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByRole('status').filter({ hasText: 'Uploaded: blob' }).waitFor();
    expect(await page.getByRole('progressbar', { name: 'upload' }).getAttribute('value')).toBe('25000');
    const row = page.getByRole('table', { name: 'blobs' }).getByRole('row').filter({ hasText: '24.4 KiB' });
    const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('button', { name: 'Download' }).click()]);
    expect(await readFile((await download.path())!, 'utf8')).toBe('the dashboard stores this'.repeat(1000));
  });

  it("shows a namespace's members and changes the group's default capabilities", async () => {
    await open('Namespaces & groups', 'Namespaces and groups');
    await page.getByRole('table', { name: 'namespaces' }).getByRole('button', { name: 'Open' }).first().click();
    const group = page.locator('#selected-group');
    await group.getByRole('table', { name: 'members' }).getByRole('row').nth(1).waitFor();
    const editor = group.getByRole('form', { name: 'default capabilities' });
    const box = editor.getByLabel('create subgroup');
    const before = await box.isChecked();
    await box.setChecked(!before);
    await editor.getByRole('button', { name: 'Save capabilities' }).click();
    await expect.poll(async () => (await group.getByRole('form', { name: 'default capabilities' }).getByLabel('create subgroup').isChecked()) !== before).toBe(true);
    expect(await group.getByRole('alert').count()).toBe(0);
  });

  it("charts the node's own metrics", async () => {
    await open('Metrics', 'Metrics');
    await expect.poll(async () => Number(await page.getByTestId('requests-total').textContent()), { timeout: 15_000 }).toBeGreaterThan(0);
    expect(Number(await page.getByTestId('calls-total').textContent())).toBeGreaterThanOrEqual(2);
    // attached, not 'visible': a flat series (a steady request rate) is a line whose bounding box has no
    // height, which Playwright counts as hidden although it is drawn
    const series = page.getByTestId('chart-requests').locator('polyline');
    await series.waitFor({ state: 'attached', timeout: 15_000 });
    await expect.poll(async () => ((await series.getAttribute('points')) ?? '').trim().split(/\s+/).length, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
  });

  it('refreshes an expired access token silently', async () => {
    const before = await page.evaluate(() => JSON.parse(localStorage.getItem('hearth.dashboard.tokens') ?? '{}').accessToken as string);
    skewMs = 20 * 60 * 1000; // the access token (15 min) has expired; the refresh token (7 days) has not
    await open('Overview', 'Overview');
    await expect.poll(() => page.getByTestId('health').textContent()).toContain('alive, ready');
    expect(new URL(page.url()).pathname).toBe('/admin-dashboard/overview');
    const after = await page.evaluate(() => JSON.parse(localStorage.getItem('hearth.dashboard.tokens') ?? '{}').accessToken as string);
    expect(after).not.toBe(before);
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it("revoking this session's key sends the user to the login page with the reason", async () => {
    await open('Keys', 'Keys');
    const row = page.getByRole('table', { name: 'client keys' }).getByRole('row').filter({ hasText: 'this session' });
    await Promise.all([page.waitForURL((u) => u.pathname === '/auth/login'), row.getByRole('button', { name: 'Revoke' }).click()]);
    const url = new URL(page.url());
    expect(url.searchParams.get('reason')).toBe('token_revoked');
    expect(url.searchParams.get('callback-url')).toBe(`${node.url}/admin-dashboard/keys`);
    expect(await page.getByRole('status').filter({ hasText: 'Your session was revoked' }).count()).toBe(1);
    expect(await page.evaluate(() => localStorage.getItem('hearth.dashboard.tokens'))).toBeNull();
    expect(pageErrors).toEqual([]);
  });
});
