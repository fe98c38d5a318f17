/**
 * The dashboard's call form (issue #25 §4): it starts on a read method (never one that writes, such
 * as `clear`), fills the arguments from the ABI's parameters, and asks before running a method that
 * writes — declining runs nothing. Screenshot in build/test-output/.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildDashboard } from '../../scripts/build-web.ts';
import { createClient, MemoryTokenStore, type Client } from '../../src/client/index.ts';
import { makeBundle } from '../helpers/bundles.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { ROOT, startTestNode, type TestNode } from '../helpers/node.ts';
import { buildTestApp } from '../helpers/wasm-apps.ts';

const OUT = join(ROOT, 'build', 'test-output');
let node: TestNode;
let sdk: Client;
let browser: Browser;
let page: Page;
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'hearth-call-form-'));
  const [, started, launched, wasm] = await Promise.all([buildDashboard({ ifStale: true }), startTestNode(), launchChromium(), buildTestApp('kv')]);
  node = started;
  browser = launched;
  sdk = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await sdk.auth.login({ username: node.adminUser, password: node.adminPassword });
  await sdk.applications.installDev((await makeBundle({ wasm, package: 'com.example.kv', version: '1.0.0', dir: work })).path);
  page = await (await browser.newContext()).newPage();
  await mkdir(OUT, { recursive: true });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await node?.destroy();
  await rm(work, { recursive: true, force: true });
});

it('starts on a read method with its arguments filled in, and asks before a method that writes', { timeout: 120_000 }, async () => {
  await page.goto(`${node.url}/admin-dashboard/contexts`);
  await page.waitForURL((u) => u.pathname === '/auth/login');
  await page.getByLabel('Username', { exact: true }).fill(node.adminUser);
  await page.getByLabel('Password', { exact: true }).fill(node.adminPassword);
  await Promise.all([page.waitForURL((u) => u.pathname.startsWith('/admin-dashboard')), page.getByRole('button', { name: 'Sign in' }).click()]);
  await page.getByRole('heading', { level: 1, name: 'Contexts' }).waitFor();
  await page.getByRole('form', { name: 'create a context' }).getByRole('button', { name: 'Create context' }).click();
  await page.locator('#selected-context').waitFor();

  const call = page.getByRole('form', { name: 'call a method' });
  const method = call.getByLabel('Method');
  const args = call.getByLabel('Arguments (JSON)');
  await expect.poll(() => method.inputValue()).toBe('get'); // the kv app's first read-only method, not set or clear
  expect(await args.inputValue()).toBe('{"key":""}');
  await method.selectOption('set');
  expect(await args.inputValue()).toBe('{"key":"","value":""}');
  await args.fill('{"key":"greeting","value":"hello"}');
  const [ctx] = await sdk.contexts.list();

  // declined: nothing runs
  page.once('dialog', (d) => {
    expect(d.message()).toBe("Call set? It may change the context's state for every member.");
    void d.dismiss();
  });
  await call.getByRole('button', { name: 'Call' }).click();
  await page.waitForTimeout(500);
  expect(await sdk.contexts.query(ctx!.id, 'get', { key: 'greeting' })).toBeNull();
  await page.screenshot({ path: join(OUT, 'dashboard-call-form.png'), fullPage: true });

  // accepted: it runs
  page.once('dialog', (d) => void d.accept());
  await call.getByRole('button', { name: 'Call' }).click();
  await page.getByRole('status', { name: 'call result' }).getByText('set returned nothing').waitFor();
  expect(await sdk.contexts.query(ctx!.id, 'get', { key: 'greeting' })).toBe('hello');

  // a read method runs without asking
  await method.selectOption('get');
  await args.fill('{"key":"greeting"}');
  await call.getByRole('button', { name: 'Call' }).click();
  await page.getByRole('status', { name: 'call result' }).getByText('hello', { exact: true }).waitFor();
});
