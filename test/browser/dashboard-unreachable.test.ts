/**
 * The dashboard tells the truth when the node is down (issue #25 §4): a page that finds no node
 * shows one banner "node at … is not answering since hh:mm:ss, retrying" — no `Failed to fetch`,
 * and no empty-state message ("No applications installed yet.") that would be false — and when the
 * node answers again the banner goes and the page loads by itself. Screenshots of both states go to
 * build/test-output/ (git-ignored).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildDashboard } from '../../scripts/build-web.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { ROOT, startTestNode, type TestNode } from '../helpers/node.ts';

const OUT = join(ROOT, 'build', 'test-output');
let node: TestNode;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  const [, started, launched] = await Promise.all([buildDashboard({ ifStale: true }), startTestNode(), launchChromium()]);
  node = started;
  browser = launched;
  page = await (await browser.newContext()).newPage();
  await mkdir(OUT, { recursive: true });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await node?.destroy();
});

async function open(name: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'pages' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

it('says the node is not answering instead of showing false empty lists, and recovers by itself', { timeout: 120_000 }, async () => {
  await page.goto(`${node.url}/admin-dashboard/`);
  await page.waitForURL((u) => u.pathname === '/auth/login');
  await page.getByLabel('Username', { exact: true }).fill(node.adminUser);
  await page.getByLabel('Password', { exact: true }).fill(node.adminPassword);
  await Promise.all([page.waitForURL((u) => u.pathname.startsWith('/admin-dashboard')), page.getByRole('button', { name: 'Sign in' }).click()]);
  // the overview names the node's own version, not the auth component
  await expect.poll(() => page.getByTestId('version').locator('strong').textContent()).toMatch(/^hearth \d+\.\d+\.\d+/);
  await open('Applications', 'Applications');
  await page.getByText('No applications installed yet.').waitFor();

  await node.stop();
  const before = new Date();
  await open('Contexts', 'Contexts');
  const banner = page.getByRole('alert').filter({ hasText: 'is not answering' });
  await banner.waitFor({ timeout: 15_000 });
  const text = (await banner.textContent())!;
  expect(text).toMatch(new RegExp(`^node at ${node.url.replace(/\./g, '\\.')} is not answering since \\d\\d:\\d\\d:\\d\\d, retrying$`));
  const [h, m] = text.match(/since (\d\d):(\d\d)/)!.slice(1).map(Number);
  expect(h! * 60 + m!).toBeGreaterThanOrEqual(before.getHours() * 60 + before.getMinutes() - 1);
  await open('Applications', 'Applications');
  await page.getByText('Not known: the node is not answering.').waitFor();
  expect(await page.getByText('No applications installed yet.').count()).toBe(0);
  expect(await page.getByText('Failed to fetch').count()).toBe(0);
  await page.screenshot({ path: join(OUT, 'dashboard-node-not-answering.png'), fullPage: true });

  node = await node.restart();
  await banner.waitFor({ state: 'detached', timeout: 20_000 });
  await page.getByText('No applications installed yet.').waitFor({ timeout: 20_000 });
  await page.screenshot({ path: join(OUT, 'dashboard-node-back.png'), fullPage: true });
});
