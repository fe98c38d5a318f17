/**
 * The SDK works in a browser (issue #6): src/client bundled for the browser platform (esbuild
 * fails the build on any Node-only import) and driven in Debian Chromium against a real node —
 * login, guarded reads with u64-exact decoding, a typed HTTP error, and the logout procedure.
 */
import { build } from 'esbuild';
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.ts';
import { startTestNode, type TestNode } from '../helpers/node.ts';

let node: TestNode;
let browser: Browser;
let bundle: string;

beforeAll(async () => {
  const out = await build({
    entryPoints: [new URL('../../src/client/index.ts', import.meta.url).pathname],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'Hearth',
    write: false,
    logLevel: 'silent',
  });
  bundle = out.outputFiles[0].text;
  [node, browser] = await Promise.all([
    startTestNode(),
    launchChromium(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await node?.destroy();
});

it('bundles for the browser without Node built-ins', () => {
  expect(bundle.length).toBeGreaterThan(10_000);
  expect(bundle).not.toMatch(/require\(["']node:/);
});

it('logs in, reads guarded routes, reports typed errors and logs out inside Chromium', async () => {
  const page = await browser.newPage();
  try {
    await page.goto(`${node.url}/admin-api/health`); // same origin as the node
    await page.addScriptTag({ content: bundle });
    const result = await page.evaluate(
      async ({ username, password }) => {
        const H = (globalThis as any).Hearth;
        const client = H.createClient({ baseUrl: location.origin });
        await client.auth.login({ username, password });
        const identity = await client.accounts.identity();
        const peers = await client.admin.peers();
        const apps = await client.applications.list();
        let missing: unknown;
        try {
          await client.contexts.get('11'.repeat(32));
        } catch (err) {
          missing = { isHttpError: err instanceof H.HttpError, status: (err as any).status };
        }
        const big = H.parseJson('{"n":18446744073709551615}').n;
        const logout = await client.auth.logout();
        const afterLogout = await client.tokenStore.get();
        return { accountId: identity.accountId, peers, apps, missing, big: String(big), loggedOut: logout.loggedOut, afterLogout };
      },
      { username: node.adminUser, password: node.adminPassword },
    );
    expect(result.accountId).toMatch(/^[0-9a-f]{64}$/);
    expect(result.peers).toEqual({ count: 0 });
    expect(result.apps).toEqual([]);
    expect(result.missing).toEqual({ isHttpError: true, status: 404 });
    expect(result.big).toBe('18446744073709551615');
    expect(result.loggedOut).toBe(true);
    expect(result.afterLogout).toBeNull();
  } finally {
    await page.close();
  }
});
