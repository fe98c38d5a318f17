/**
 * The login page in a real browser against a real node (product.md B7, A15): the hand-off of a
 * client key to an application's callback, the node's error on a wrong password, and the refusal
 * of a callback address that may not receive tokens. One Chromium per file; a context per case.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const claimsOf = (jwt: string): Record<string, unknown> => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());

let node: TestNode;
let browser: Browser;
let context: BrowserContext;
let callbackServer: Server;
let callbackBase: string;
/** paths (without fragment: browsers never send it) the callback server was asked for */
const callbackHits: string[] = [];

beforeAll(async () => {
  callbackServer = createServer((req, res) => {
    callbackHits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>app</title><p>back in the app</p>');
  });
  await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
  callbackBase = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}`;
  [node, browser] = await Promise.all([
    startTestNode(),
    launchChromium(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => callbackServer?.close(resolve));
  await node?.destroy();
});

beforeEach(async () => {
  context = await browser.newContext();
});
afterEach(async () => {
  await context.close();
});

const loginUrl = (params: Record<string, string>) => `${node.url}/auth/login?${new URLSearchParams(params)}`;

describe('the login page', () => {
  it('signs in and hands a fresh client key to an allowed callback in the URL fragment', async () => {
    const page = await context.newPage();
    const cb = `${callbackBase}/cb`;
    const res = await page.goto(loginUrl({ 'callback-url': cb, permissions: 'admin' }));
    expect(res?.status()).toBe(200);
    expect(res?.headers()['cache-control']).toBe('no-cache, no-store, must-revalidate');
    expect(res?.headers()['content-security-policy']).toContain("default-src 'self'");

    await page.getByLabel('Username', { exact: true }).fill(node.adminUser);
    await page.getByLabel('Password', { exact: true }).fill(node.adminPassword);
    await Promise.all([page.waitForURL((u) => u.href.startsWith(cb)), page.getByRole('button', { name: 'Sign in' }).click()]);

    expect(callbackHits).toContain('/cb');
    const fragment = new URLSearchParams(new URL(page.url()).hash.slice(1));
    const access = fragment.get('access_token') ?? '';
    const refresh = fragment.get('refresh_token') ?? '';
    expect(access).not.toBe('');
    expect(refresh).not.toBe('');
    expect(fragment.get('node_url')).toBe(node.url);

    // The handed token works against the node, and it is a client key's (sub = UUID), not the
    // admin's root session.
    const validate = await fetch(`${node.url}/auth/validate`, { method: 'HEAD', headers: { authorization: `Bearer ${access}` } });
    expect(validate.status).toBe(200);
    const claims = claimsOf(access);
    expect(claims.sub).toMatch(UUID);
    expect(claims.permissions).toContain('admin');
    expect(claimsOf(refresh).sub).toBe(claims.sub);
  });

  it('shows the node’s error on a wrong password and stays on the page', async () => {
    const page = await context.newPage();
    const before = callbackHits.length;
    await page.goto(loginUrl({ 'callback-url': `${callbackBase}/cb2` }));
    await page.getByLabel('Username', { exact: true }).fill(node.adminUser);
    await page.getByLabel('Password', { exact: true }).fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();

    const error = page.getByRole('alert').filter({ hasText: 'Invalid username or password' });
    await error.waitFor({ state: 'visible' });
    expect(await error.textContent()).toContain('Authentication failed');
    expect(new URL(page.url()).pathname).toBe('/auth/login');
    expect(callbackHits.length).toBe(before);
    expect(await page.getByRole('button', { name: 'Sign in' }).isEnabled()).toBe(true);
  });

  it('refuses a callback that may not receive tokens with a 400 page and no form', async () => {
    const page = await context.newPage();
    const res = await page.goto(loginUrl({ 'callback-url': 'https://evil.example/cb', permissions: 'admin' }));
    expect(res?.status()).toBe(400);
    expect(res?.headers()['content-type']).toBe('text/html; charset=utf-8');
    await expect(page.getByRole('alert').textContent()).resolves.toContain(
      "This application's address is not allowed to receive tokens: https://evil.example",
    );
    expect(await page.locator('form').count()).toBe(0);
    expect(await page.locator('input[type=password]').count()).toBe(0);
  });

  it('without a callback keeps the session in the browser and shows the key id', async () => {
    const page = await context.newPage();
    await page.goto(`${node.url}/auth/login`);
    await page.getByLabel('Username', { exact: true }).fill(node.adminUser);
    await page.getByLabel('Password', { exact: true }).fill(node.adminPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.getByRole('heading', { name: 'Signed in' }).waitFor();
    const stored = await page.evaluate(() => [localStorage.getItem('calimero_access_token'), localStorage.getItem('calimero_refresh_token')]);
    expect(stored[0]).toBeTruthy();
    expect(stored[1]).toBeTruthy();
    expect(await page.locator('#key-id').textContent()).toBe(claimsOf(stored[0] as string).sub);
  });

  it('says why the user was sent back, in its own words only', async () => {
    const page = await context.newPage();
    await page.goto(loginUrl({ 'callback-url': `${callbackBase}/cb`, reason: 'token_revoked' }));
    expect(await page.getByRole('status').filter({ hasText: 'Your session was revoked' }).count()).toBe(1);
    await page.goto(loginUrl({ 'callback-url': `${callbackBase}/cb`, reason: 'Your account is locked: call +1 555' }));
    expect(await page.locator('#notice').isHidden()).toBe(true);
    expect(await page.content()).not.toContain('call +1 555');
  });
});
