/**
 * The dashboard runs the multi-node workflow and tells the truth (issue #25 §4), in Chromium
 * against two in-process nodes on one in-memory network: invite on one node's dashboard and join
 * with the pasted string on the other's, remove the member; a banner instead of `Failed to fetch`
 * when the node does not answer. Each step saves a screenshot under test-output/browser/ (not
 * committed: .gitignore) for a person to look at.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard } from '../../scripts/build-web.ts';
import { createClient, invitationFromText, MemoryTokenStore, type Client, type SignedGroupOpenInvitation } from '../../src/client/index.ts';
import { loadConfig } from '../../src/config/config.ts';
import { MemoryHub } from '../../src/network/memory.ts';
import { makeBundle } from '../helpers/bundles.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { memoryNetwork, startTestNode, type TestNode } from '../helpers/node.ts';
import { buildTestApp } from '../helpers/wasm-apps.ts';

const SHOTS = fileURLToPath(new URL('../../test-output/browser/dashboard-workflow/', import.meta.url));
const hub = new MemoryHub();
let a: TestNode;
let b: TestNode;
let clientA: Client;
let clientB: Client;
let browser: Browser;
let ctxA: BrowserContext;
let ctxB: BrowserContext;
let pageA: Page;
let pageB: Page;
let work: string;
let applicationId: string;
let namespaceId: string;
let contextId: string;
const pageErrors: string[] = [];
/** the questions the pages asked (confirm), and whether the next one is answered no */
const questions: string[] = [];
let refuseNext = false;

async function login(node: TestNode): Promise<Client> {
  const client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await client.auth.login({ username: node.adminUser, password: node.adminPassword });
  return client;
}

async function signIn(p: Page, node: TestNode, path = 'overview'): Promise<void> {
  await p.goto(`${node.url}/admin-dashboard/${path}`);
  await p.waitForURL((u) => u.pathname === '/auth/login');
  await p.getByLabel('Username', { exact: true }).fill(node.adminUser);
  await p.getByLabel('Password', { exact: true }).fill(node.adminPassword);
  await Promise.all([p.waitForURL((u) => u.pathname.startsWith('/admin-dashboard')), p.getByRole('button', { name: 'Sign in' }).click()]);
}

async function open(p: Page, name: string, heading: string): Promise<void> {
  await p.getByRole('navigation', { name: 'pages' }).getByRole('link', { name, exact: true }).click();
  await p.getByRole('heading', { level: 1, name: heading }).waitFor();
}

const shot = (p: Page, name: string) => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'hearth-dashboard-flow-'));
  await mkdir(SHOTS, { recursive: true });
  const [, na, nb, launched, wasm] = await Promise.all([
    buildDashboard({ ifStale: true }),
    startTestNode({ network: memoryNetwork(hub) }),
    startTestNode({ network: memoryNetwork(hub) }),
    launchChromium(),
    buildTestApp('kv'),
  ]);
  [a, b, browser] = [na, nb, launched];
  const bundle = await makeBundle({ wasm, package: 'com.example.kv', version: '1.0.0', name: 'Key-value store', dir: work });
  [clientA, clientB] = await Promise.all([login(a), login(b)]);
  // both nodes have the application (installing it is the Applications page's test)
  for (const c of [clientA, clientB]) {
    ({ applicationId } = await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } }));
  }
  ({ namespaceId } = await clientA.namespaces.create({ applicationId, name: 'team' }));
  ({ contextId } = await clientA.contexts.create({ groupId: namespaceId, applicationId, initializationParams: [], name: 'notes' }));
  await clientA.aliases.create('context', 'team-notes', contextId);
  await clientA.rpc.execute(contextId, 'set', { key: 'greeting', value: 'hello' });
  ctxA = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  ctxB = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await ctxA.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: a.url });
  [pageA, pageB] = await Promise.all([ctxA.newPage(), ctxB.newPage()]);
  for (const p of [pageA, pageB]) {
    p.on('pageerror', (err) => pageErrors.push(err.message));
    p.on('dialog', (dialog) => {
      questions.push(dialog.message());
      void (refuseNext ? dialog.dismiss() : dialog.accept());
      refuseNext = false;
    });
  }
  await Promise.all([signIn(pageA, a), signIn(pageB, b)]);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([a?.destroy(), b?.destroy()]);
  await rm(work, { recursive: true, force: true });
});

describe('the dashboard across two nodes', () => {
  it('invites on one node, joins with the pasted string on the other, follows the context, and removes the member', async () => {
    // A: open the namespace, create an invitation, copy it as one string
    await open(pageA, 'Namespaces & groups', 'Namespaces and groups');
    await pageA.getByRole('table', { name: 'namespaces' }).getByRole('row').filter({ hasText: 'team' }).getByRole('button', { name: 'Open' }).click();
    const groupA = pageA.locator('#selected-group');
    await groupA.getByRole('form', { name: 'create an invitation' }).getByRole('button', { name: 'Create invitation' }).click();
    const text = await groupA.getByRole('textbox', { name: 'invitation' }).inputValue();
    expect(text).toMatch(/^inv1\.[A-Za-z0-9_-]{200,}$/); // one line, the CLI's inv1. form
    const decoded = invitationFromText(text) as { invitation: { group_id: number[] } };
    expect(Buffer.from(decoded.invitation.group_id).toString('hex')).toBe(namespaceId);
    await groupA.getByRole('button', { name: 'Copy invitation' }).click();
    await groupA.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await pageA.evaluate(() => navigator.clipboard.readText())).toBe(text);
    expect(await groupA.textContent()).toContain('This string is a credential');
    await shot(pageA, '1-invitation-created');

    // B: a wrong paste is named, the right one previewed and joined
    await open(pageB, 'Namespaces & groups', 'Namespaces and groups');
    const joinForm = pageB.getByRole('form', { name: 'join a namespace' });
    await joinForm.getByLabel('Invitation').fill('not an invitation');
    expect(await joinForm.getByRole('alert').textContent()).toMatch(/not an invitation/);
    expect(await joinForm.getByRole('button', { name: 'Join' }).isDisabled()).toBe(true);
    await joinForm.getByLabel('Invitation').fill(text);
    expect(await pageB.getByTestId('invitation-preview').textContent()).toContain(`namespace ${namespaceId.slice(0, 12)}…, as Member`);
    await joinForm.getByRole('button', { name: 'Join' }).click();
    await pageB.getByRole('status').filter({ hasText: 'Joined namespace' }).waitFor({ timeout: 20_000 });
    const accountB = (await clientB.accounts.identity()).accountId;
    // the namespace is open on B: its members (B marked "this node") and its contexts
    const groupB = pageB.locator('#selected-group');
    await groupB.getByRole('table', { name: 'members' }).getByRole('row').filter({ hasText: 'this node' }).locator(`code[data-id="${accountB}"]`).waitFor();
    const ctxRow = groupB.getByRole('table', { name: 'group contexts' }).getByRole('row').filter({ has: pageB.locator(`code[data-id="${contextId}"]`) });
    await ctxRow.waitFor({ timeout: 20_000 });
    // auto-follow takes it by itself where the node does that; otherwise Join takes it now
    const held = ctxRow.getByRole('link', { name: 'held: open' });
    if (!(await held.isVisible())) {
      const joinButton = ctxRow.getByRole('button', { name: /^join / });
      if (await joinButton.isVisible()) await joinButton.click();
    }
    await held.waitFor({ timeout: 20_000 });
    await shot(pageB, '2-joined-namespace-and-context');
    // the context's state arrives on B
    await expect.poll(async () => (await clientB.contexts.query(contextId, 'get', { key: 'greeting' }).catch(() => null)) as unknown, { timeout: 20_000 }).toBe('hello');
    await held.click();
    await pageB.getByRole('heading', { level: 1, name: 'Contexts' }).waitFor();
    await pageB.locator('#selected-context').waitFor();

    // A: B appears among the members without a reload, then A removes it
    const membersA = groupA.getByRole('table', { name: 'members' });
    const rowB = membersA.getByRole('row').filter({ has: pageA.locator(`code[data-id="${accountB}"]`) });
    await rowB.waitFor({ timeout: 20_000 });
    await shot(pageA, '3-member-joined');
    await rowB.getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => rowB.count(), { timeout: 20_000 }).toBe(0);
    await expect.poll(async () => (await clientA.groups.members(namespaceId)).some((m) => m.identity === accountB)).toBe(false);
    await shot(pageA, '4-member-removed');
    expect(await groupA.getByRole('alert').count()).toBe(0);

    // A: a new invitation, revoked from the page; B (removed, so an invitation issued after its
    // removal would let it back) is refused with it
    await groupA.getByRole('form', { name: 'create an invitation' }).getByRole('button', { name: 'Create invitation' }).click();
    await expect.poll(async () => groupA.getByRole('textbox', { name: 'invitation' }).inputValue()).not.toBe(text);
    const revokedText = await groupA.getByRole('textbox', { name: 'invitation' }).inputValue();
    const asked = questions.length;
    await groupA.getByRole('button', { name: 'Revoke invitation' }).click();
    await groupA.getByRole('button', { name: 'Revoked' }).waitFor();
    expect(questions[asked]).toMatch(/Revoke this invitation\?/);
    expect(await groupA.getByRole('status').textContent()).toContain('every member node refuses this invitation now');
    expect(await groupA.getByRole('button', { name: 'Copy invitation' }).isDisabled()).toBe(true);
    await shot(pageA, '4b-invitation-revoked');
    const revoked = invitationFromText(revokedText) as SignedGroupOpenInvitation;
    await expect(clientB.invitations.joinNamespace(namespaceId, revoked)).rejects.toThrow(/revoked/i);
    expect(pageErrors).toEqual([]);
  });

  it('says the node is not answering, and since when, instead of "Failed to fetch" and false empty lists', async () => {
    await open(pageA, 'Overview', 'Overview');
    // every call to the node fails as if it were down
    await pageA.route('**/admin-api/**', (route) => void route.abort('connectionrefused'));
    await open(pageA, 'Contexts', 'Contexts');
    const banner = pageA.getByTestId('node-down');
    await banner.waitFor();
    const host = new URL(a.url).host;
    expect(await banner.textContent()).toMatch(new RegExp(`^The node at ${host.replace(/\./g, '\\.')} is not answering since \\d\\d:\\d\\d:\\d\\d, retrying every 3 s\\.`));
    await pageA.getByTestId('not-known').first().waitFor();
    expect(await pageA.getByText('No contexts yet', { exact: false }).count()).toBe(0);
    expect(await pageA.getByText('Failed to fetch', { exact: false }).count()).toBe(0);
    expect(await pageA.getByRole('alert').count()).toBe(1); // the banner, once
    await shot(pageA, '5-node-not-answering');
    // the node answers again: the banner goes and the page loads by itself
    await pageA.unroute('**/admin-api/**');
    await banner.waitFor({ state: 'detached', timeout: 15_000 });
    await pageA.getByRole('table', { name: 'contexts' }).getByText('team-notes', { exact: true }).waitFor();
    await shot(pageA, '6-node-back');
    expect(pageErrors).toEqual([]);
  });

  it('keeps the event log across a reload, resumes after the last event it showed, and says how many were missed while away', async () => {
    await open(pageA, 'Event log', 'Event log');
    const log = pageA.getByRole('list', { name: 'events' });
    await clientA.rpc.execute(contextId, 'set', { key: 'before', value: 'away' });
    await log.getByText('Inserted {"key":"before","value":"away"}').waitFor();
    // a plain reload: the same history, then the stream resumes from the last frame shown
    await pageA.reload();
    await pageA.getByRole('heading', { level: 1, name: 'Event log' }).waitFor();
    await log.getByText('the page was reloaded', { exact: false }).waitFor();
    expect(await log.getByText('Inserted {"key":"before","value":"away"}').count()).toBe(1);
    await log.getByText('resumed the previous session', { exact: false }).first().waitFor();
    await shot(pageA, '7-event-log-after-reload');
    // away for longer than the node keeps (1024 frames per session): it says how many were missed
    await pageA.goto('about:blank');
    const writes = 1100;
    for (let i = 0; i < writes; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, writes - i) }, (_, j) => clientA.rpc.execute(contextId, 'set', { key: `k${i + j}`, value: 'x' })));
    }
    await pageA.goto(`${a.url}/admin-dashboard/events`);
    const gap = log.getByTestId('event-gap');
    await gap.waitFor({ timeout: 20_000 });
    const missed = Number(await gap.getAttribute('data-missed'));
    expect(missed).toBeGreaterThan(0);
    expect(missed).toBeLessThanOrEqual(writes);
    expect(await gap.textContent()).toContain(`${missed} events missed while away`);
    // what was shown before is still there, below the gap
    await log.getByText('Inserted {"key":"before","value":"away"}').waitFor();
    await shot(pageA, '8-event-log-gap');
    expect(pageErrors).toEqual([]);
  }, 120_000);

  it('starts the call form on a read method with a template from the ABI, and asks before a method that writes', async () => {
    await open(pageA, 'Contexts', 'Contexts');
    await pageA.getByRole('table', { name: 'contexts' }).getByRole('button', { name: 'open team-notes' }).click();
    const call = pageA.getByRole('form', { name: 'call a method' });
    const method = call.getByLabel('Method');
    await expect.poll(() => method.inputValue()).toBe('get'); // a read method, not `clear` or `set`
    expect(JSON.parse(await call.getByLabel('Arguments (JSON)').inputValue())).toEqual({ key: '' });
    expect(await call.textContent()).toContain('read-only: runs as a query');
    await call.getByLabel('Arguments (JSON)').fill('{"key":"greeting"}');
    const asked = questions.length;
    await call.getByRole('button', { name: 'Call' }).click();
    await pageA.getByRole('status', { name: 'call result' }).getByText('hello', { exact: true }).waitFor();
    expect(questions.length).toBe(asked); // a read asks nothing
    // a write fills its own template and asks; refused, nothing runs
    await method.selectOption('set');
    expect(JSON.parse(await call.getByLabel('Arguments (JSON)').inputValue())).toEqual({ key: '', value: '' });
    await method.selectOption('clear');
    expect(await call.getByLabel('Arguments (JSON)').inputValue()).toBe('{}');
    expect(await call.textContent()).toContain('may delete state');
    refuseNext = true;
    await call.getByRole('button', { name: 'Call' }).click();
    await expect.poll(() => questions.length).toBe(asked + 1);
    expect(questions.at(-1)).toMatch(/^clear may delete state of team-notes, on every node that holds it\. Run it\?$/);
    expect(await pageA.getByRole('status', { name: 'call result' }).count()).toBe(0);
    expect(await clientA.contexts.query(contextId, 'get', { key: 'greeting' })).toBe('hello');
    await shot(pageA, '9-call-form');
    // accepted, the write runs
    await method.selectOption('set');
    await call.getByLabel('Arguments (JSON)').fill('{"key":"from","value":"the form"}');
    await call.getByRole('button', { name: 'Call' }).click();
    await pageA.getByRole('status', { name: 'call result' }).getByText('set returned nothing').waitFor();
    expect(questions.at(-1)).toMatch(/^set changes the state of team-notes/);
    expect(await clientA.contexts.query(contextId, 'get', { key: 'from' })).toBe('the form');
  });

  it("browses a context's state through the view method its ABI names, paged and read-only", async () => {
    for (let i = 0; i < 45; i += 15) {
      await Promise.all(Array.from({ length: 15 }, (_, j) => clientA.rpc.execute(contextId, 'set', { key: `page-${String(i + j).padStart(2, '0')}`, value: 'v'.repeat(i + j) })));
    }
    const all = (await clientA.contexts.query(contextId, 'entries', {})) as Record<string, string>;
    const keys = Object.keys(all);
    expect(keys.length).toBeGreaterThan(45);
    await open(pageA, 'Contexts', 'Contexts');
    await pageA.getByRole('table', { name: 'contexts' }).getByRole('button', { name: 'open team-notes' }).click();
    const panel = pageA.getByRole('region', { name: 'State entries', exact: true });
    await panel.getByRole('button', { name: 'Refresh' }).click();
    const range = panel.getByTestId('entries-range');
    await expect.poll(() => range.textContent()).toBe(`from entries(): entries 1–20 of ${keys.length}`);
    const table = panel.getByRole('table', { name: 'state entries' });
    expect(await table.getByRole('row').count()).toBe(21);
    expect(await table.getByRole('row').nth(1).getByRole('cell').first().textContent()).toBe(keys[0]);
    await panel.getByRole('button', { name: 'next page' }).click();
    await expect.poll(() => range.textContent()).toBe(`from entries(): entries 21–40 of ${keys.length}`);
    expect(await table.getByRole('row').nth(1).getByRole('cell').first().textContent()).toBe(keys[20]);
    // key, size in bytes and the value as text
    const k = 'page-07';
    const p = Math.floor(keys.indexOf(k) / 20);
    while ((await range.textContent())!.indexOf(`entries ${p * 20 + 1}–`) < 0) {
      await panel.getByRole('button', { name: p * 20 + 1 > Number(/entries (\d+)/.exec((await range.textContent())!)![1]) ? 'next page' : 'previous page' }).click();
    }
    const row = table.getByRole('row').filter({ has: pageA.getByRole('cell', { name: k, exact: true }) });
    expect(await row.getByRole('cell').allTextContents()).toEqual([k, '7 B', 'vvvvvvv']);
    // read-only: nothing in the panel writes
    expect(await panel.locator('input, textarea, select').count()).toBe(0);
    await shot(pageA, '10-state-browser');
    expect(pageErrors).toEqual([]);
  });

  it('falls back to the raw storage rows when the ABI names no listing method: paged by key, read-only, a value on demand', async () => {
    // kv_flat's ABI marks no method read-only, so it names no listing method
    const flat = await makeBundle({ wasm: await buildTestApp('kv_flat'), package: 'com.example.kv-flat', version: '1.0.0', name: 'Flat store', dir: work });
    const flatApp = (await clientA.applications.installDev(flat.path)).applicationId;
    const flatNs = (await clientA.namespaces.create({ applicationId: flatApp, name: 'flat' })).namespaceId;
    const flatCtx = (await clientA.contexts.create({ groupId: flatNs, initializationParams: [] })).contextId;
    await clientA.aliases.create('context', 'flat-store', flatCtx);
    await clientA.rpc.execute(flatCtx, 'fill', { prefix: 'k', from: 0, count: 45 });
    const all = (await clientA.contexts.rawState(flatCtx, { limit: 500 })).entries;
    expect(all).toHaveLength(47);
    const label = (hex: string) => `"${Buffer.from(hex, 'hex').toString('latin1')}"`;

    await open(pageA, 'Overview', 'Overview');
    await open(pageA, 'Contexts', 'Contexts');
    await pageA.getByRole('table', { name: 'contexts' }).getByRole('button', { name: 'open flat-store' }).click();
    const panel = pageA.getByRole('region', { name: 'State entries', exact: true });
    await panel.getByTestId('raw-state-note').waitFor();
    expect(await panel.getByTestId('raw-state-note').textContent()).toContain('raw storage rows (the application exposes no listing method)');
    const range = panel.getByTestId('entries-range');
    const table = panel.getByRole('table', { name: 'raw state rows' });
    const keysShown = async () => (await table.getByRole('row').all()).slice(1).map((r) => r.getByRole('cell').first().textContent());
    await expect.poll(() => range.textContent()).toBe('rows 1–20');
    // the range line and the rows render apart: wait for the rows themselves
    await expect.poll(async () => Promise.all(await keysShown())).toEqual(all.slice(0, 20).map((e) => label(e.key)));
    await panel.getByRole('button', { name: 'next page' }).click();
    await expect.poll(() => range.textContent()).toBe('rows 21–40');
    // the range line and the rows render apart: wait for the rows themselves
    await expect.poll(async () => Promise.all(await keysShown())).toEqual(all.slice(20, 40).map((e) => label(e.key)));
    await panel.getByRole('button', { name: 'next page' }).click();
    await expect.poll(() => range.textContent()).toBe('rows 41–47 (the last)');
    // the range line and the rows render apart: wait for the rows themselves
    await expect.poll(async () => Promise.all(await keysShown())).toEqual(all.slice(40).map((e) => label(e.key)));
    expect(await panel.getByRole('button', { name: 'next page' }).isDisabled()).toBe(true);
    // key, size and preview: text for an item, hex for the app's 32-byte root
    const item = table.getByRole('row').filter({ has: pageA.getByRole('cell', { name: '"flat:item:k9"', exact: true }) });
    expect((await item.getByRole('cell').allTextContents()).slice(0, 3)).toEqual(['"flat:item:k9"', '2 B', 'v9']);
    const root = table.getByRole('row').filter({ has: pageA.getByRole('cell', { name: '"flat:root"', exact: true }) });
    const rootCells = await root.getByRole('cell').allTextContents();
    expect(rootCells[1]).toBe('32 B');
    expect(rootCells[2]).toMatch(/^([0-9a-f]{2} ){31}[0-9a-f]{2}$/);
    // a value on demand
    await panel.getByRole('button', { name: 'view value of "flat:item:k9"' }).click();
    const value = panel.getByRole('region', { name: 'raw value' });
    await expect.poll(() => value.getByTestId('raw-value').textContent()).toBe('v9');
    await panel.getByRole('button', { name: 'view value of "flat:root"' }).click();
    await expect.poll(() => value.getByTestId('raw-value').textContent()).toBe(rootCells[2]);
    expect(await value.textContent()).toContain('32 B, as hex');
    await panel.getByRole('button', { name: 'previous page' }).click();
    await expect.poll(() => range.textContent()).toBe('rows 21–40');
    // read-only: nothing in the panel writes
    expect(await panel.locator('input, textarea, select').count()).toBe(0);
    await shot(pageA, '10b-state-browser-raw-rows');
    expect(pageErrors).toEqual([]);
  });

  it("shows the node's name, version, uptime, peers, contexts and store size, and charts metrics with axes, units and a time range", async () => {
    await open(pageA, 'Overview', 'Overview');
    const name = (await loadConfig(a.paths.config, 'unused')).node.name; // the name in the node's config
    await expect.poll(() => pageA.getByTestId('node-name').locator('strong').textContent()).toBe(name);
    const version = /hearth_build_info\{version="([^"]+)"\}/.exec(await clientA.admin.metrics())![1]!;
    expect(await pageA.getByTestId('version').locator('strong').textContent()).toBe(`hearth ${version}`);
    const service = await clientA.auth.identity();
    expect(await pageA.getByTestId('version').textContent()).not.toContain(service.service); // not the auth component's name
    expect(await pageA.getByTestId('uptime').textContent()).toMatch(/\d+ (s|min|h|d)/);
    await expect.poll(() => pageA.getByTestId('contexts').locator('strong').textContent()).toBe(String((await clientA.contexts.list()).length));
    expect(await pageA.getByTestId('peers').locator('strong').textContent()).toBe(String((await clientA.admin.peers()).count));
    expect(await pageA.getByTestId('store-size').textContent()).toMatch(/\d+(\.\d)? (B|KiB|MiB)/);
    await shot(pageA, '11-overview');

    await open(pageA, 'Metrics', 'Metrics');
    const chart = pageA.getByTestId('chart-requests');
    await chart.locator('polyline').waitFor({ state: 'attached', timeout: 15_000 });
    // the value axis names its unit and has 0 at the bottom; the time axis shows the range as hh:mm:ss
    expect(await chart.locator('svg text.unit').textContent()).toBe('requests/s');
    expect(await chart.locator('g.tick.y text').first().textContent()).toBe('0');
    const times = await chart.locator('text.tick.x').allTextContents();
    expect(times).toHaveLength(3);
    for (const t of times) expect(t).toMatch(/^\d\d:\d\d:\d\d$/);
    const span = (ts: string[]) => {
      const sec = (t: string) => t.split(':').reduce((acc, x) => acc * 60 + Number(x), 0);
      return (sec(ts[2]!) - sec(ts[0]!) + 86_400) % 86_400;
    };
    expect(span(times)).toBe(300); // 5 min by default
    await pageA.getByLabel('time range').selectOption({ label: 'last 1 min' });
    await expect.poll(async () => span(await chart.locator('text.tick.x').allTextContents())).toBe(60);
    expect(await chart.getByRole('img').getAttribute('aria-label')).toMatch(/^Requests in requests\/s, \d\d:\d\d:\d\d to \d\d:\d\d:\d\d$/);
    expect(await pageA.getByTestId('chart-latency').locator('svg text.unit').textContent()).toBe('ms');
    await shot(pageA, '12-metrics');
    expect(pageErrors).toEqual([]);
  });

  it('names contexts by their alias in the event log and the group, with the id on hover and copy', async () => {
    await open(pageA, 'Event log', 'Event log');
    await clientA.rpc.execute(contextId, 'set', { key: 'named', value: 'row' });
    const frame = pageA.getByRole('list', { name: 'events' }).locator('li[data-type=StateMutation]').filter({ hasText: '"key":"named"' });
    await frame.waitFor();
    const where = frame.locator('.where');
    await expect.poll(() => where.locator('.named').textContent()).toBe('team-notes');
    expect(await where.locator('.named').getAttribute('title')).toBe(contextId);
    expect(await where.getByRole('button', { name: `copy ${contextId}` }).count()).toBe(1);
    await shot(pageA, '13-event-log-names');
    await open(pageA, 'Namespaces & groups', 'Namespaces and groups');
    await pageA.getByRole('table', { name: 'namespaces' }).getByRole('row').filter({ hasText: 'team' }).getByRole('button', { name: 'Open' }).click();
    const row = pageA.getByRole('table', { name: 'group contexts' }).getByRole('row').filter({ has: pageA.locator(`code[data-id="${contextId}"]`) });
    await expect.poll(() => row.getByRole('cell').first().textContent()).toBe('team-notes');
    expect(pageErrors).toEqual([]);
  });
});
