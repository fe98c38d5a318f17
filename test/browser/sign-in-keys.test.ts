/**
 * Dashboard sign-ins do not pile up client keys (issue #34 §3): signing in again from the same
 * browser reuses the key this browser's dashboard session holds (refreshed when its access token
 * lapsed) instead of minting one, and a sign-in session's key left unused expires after
 * `auth.sign_in_key_idle_secs` (one hour here; the node's clock is moved instead of sleeping),
 * while one in use stays valid. A real node and a real browser, through the node's login page.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard } from '../../scripts/build-web.ts';
import { createClient, MemoryTokenStore, type ClientKey } from '../../src/client/index.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

const IDLE_SECS = 3600;
const MIN = 60_000;

let node: TestNode;
/** added to the node's clock */
let skewMs = 0;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const [, started, launched] = await Promise.all([
    buildDashboard({ ifStale: true }),
    startTestNode({ clock: { now: () => Date.now() + skewMs }, configure: (cfg) => void (cfg.auth.signInKeyIdleSecs = IDLE_SECS) }),
    launchChromium(),
  ]);
  node = started;
  browser = launched;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await node?.destroy();
});

/** The node's client keys, read with a fresh admin session (the clock moves between reads). */
async function clientKeys(): Promise<ClientKey[]> {
  const client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await client.auth.login({ username: node.adminUser, password: node.adminPassword });
  return client.auth.listClientKeysWithDetails();
}

const validIds = async () => (await clientKeys()).filter((k) => k.is_valid).map((k) => k.client_id);

/** Opens the login page with the dashboard as callback, signs in, and answers the key id the dashboard holds. */
async function signIn(page: Page): Promise<string> {
  const params = new URLSearchParams({ 'callback-url': `${node.url}/admin-dashboard/`, permissions: 'admin' });
  await page.goto(`${node.url}/auth/login?${params}`);
  await page.getByLabel('Username', { exact: true }).fill(node.adminUser);
  await page.getByLabel('Password', { exact: true }).fill(node.adminPassword);
  await Promise.all([page.waitForURL((u) => u.pathname.startsWith('/admin-dashboard')), page.getByRole('button', { name: 'Sign in' }).click()]);
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  const raw = await page.evaluate(() => localStorage.getItem('hearth.dashboard.tokens'));
  const access = (JSON.parse(raw ?? '{}') as { accessToken?: string }).accessToken ?? '';
  return JSON.parse(Buffer.from(access.split('.')[1] ?? '', 'base64url').toString()).sub as string;
}

async function newPage(): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  return context.newPage();
}

describe('dashboard sign-in keys', { timeout: 120_000 }, () => {
  it('signing in again from the same browser reuses its key, refreshed once its access token lapsed', async () => {
    const page = await newPage();
    const first = await signIn(page);
    expect(await validIds()).toEqual([first]);
    const minted = (await clientKeys()).find((k) => k.client_id === first)!;
    // a sign-in session's key expires when unused: IDLE_SECS from now, not the 30-day default
    expect(minted.expires_at).toBeLessThanOrEqual(Math.floor((Date.now() + skewMs) / 1000) + IDLE_SECS + 5);

    expect(await signIn(page)).toBe(first);
    expect(await signIn(page)).toBe(first);
    expect((await clientKeys()).map((k) => k.client_id)).toEqual([first]);

    // past the access token's 15 minutes: the login page refreshes the session instead of minting
    const before = await page.evaluate(() => localStorage.getItem('hearth.dashboard.tokens'));
    skewMs += 20 * MIN;
    expect(await signIn(page)).toBe(first);
    expect(await page.evaluate(() => localStorage.getItem('hearth.dashboard.tokens'))).not.toBe(before);
    expect((await clientKeys()).map((k) => k.client_id)).toEqual([first]);
    await page.context().close();
  });

  it('a sign-in session’s key left unused expires; one in use stays valid', async () => {
    const used = await newPage();
    const usedKey = await signIn(used);
    // another browser: its own session, its own key, then closed (an open dashboard refreshes its tokens)
    const idle = await newPage();
    const idleKey = await signIn(idle);
    const idleTokens = JSON.parse((await idle.evaluate(() => localStorage.getItem('hearth.dashboard.tokens'))) ?? '{}') as { accessToken: string; refreshToken: string };
    await idle.context().close();
    expect(idleKey).not.toBe(usedKey);
    expect(await validIds()).toEqual(expect.arrayContaining([usedKey, idleKey]));

    // 50 minutes on, the first browser's dashboard is used again (its access token lapsed: refreshed)
    skewMs += 50 * MIN;
    expect(await signIn(used)).toBe(usedKey);
    // 30 more minutes: the idle key was unused for 80 minutes (> 60), the other for 30
    skewMs += 30 * MIN;
    const keys = await clientKeys();
    expect(keys.find((k) => k.client_id === idleKey)?.is_valid).toBe(false);
    expect(keys.find((k) => k.client_id === usedKey)?.is_valid).toBe(true);
    // the idle session cannot be revived: its refresh token is refused, naming the expiry
    const res = await fetch(`${node.url}/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: idleTokens.accessToken, refresh_token: idleTokens.refreshToken }),
    });
    expect(res.status).toBe(401);
    expect(JSON.stringify(await res.json())).toContain('Key has expired');
  });
});
