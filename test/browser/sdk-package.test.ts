/**
 * The SDK as an application ships it (issue #32 §1): the docs' first program (docs/sdk.md "A first
 * program"), bundled for the browser with esbuild and minified, runs in Chromium against a node —
 * logs in, lists the contexts and receives the event of a write — and the bundle stays within the
 * size docs/sdk.md states (40 KB gzipped at most; the figure there is this bundle's).
 */
import { type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, MemoryTokenStore, type Client } from '../../src/client/index.ts';
import { launchChromium } from '../helpers/chromium.ts';
import { ROOT, startTestNode, type TestNode } from '../helpers/node.ts';
import { bundleExample, keepWriting, kvContext, type BrowserBundle } from '../helpers/sdk-example.ts';

let node: TestNode;
let browser: Browser;
let bundle: BrowserBundle;
let client: Client;
let contextId: string;

beforeAll(async () => {
  [bundle, node, browser] = await Promise.all([
    bundleExample({ resolveDir: ROOT, sdkEntry: `${ROOT}/src/client/index.ts` }),
    startTestNode(),
    launchChromium(),
  ]);
  client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await client.auth.login({ username: node.adminUser, password: node.adminPassword });
  ({ contextId } = await kvContext(client));
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await node?.destroy();
});

it('bundles for the browser within 40 KB gzipped, without Node built-ins', () => {
  process.stdout.write(`sdk first program, browser bundle: ${bundle.bytes} bytes minified, ${bundle.gzipBytes} gzipped\n`);
  expect(bundle.code).not.toMatch(/require\(["']node:|from ?["']node:/);
  expect(bundle.gzipBytes).toBeLessThanOrEqual(40 * 1024);
});

it('logs in, lists the contexts and receives a state change inside Chromium', { timeout: 60_000 }, async () => {
  const page = await browser.newPage();
  const stop = new AbortController();
  try {
    await page.goto(`${node.url}/admin-api/health`); // same origin as the node
    await page.addScriptTag({ content: bundle.code });
    const ran = page.evaluate(
      async ({ username, password }) => {
        const r = await (globalThis as any).FirstProgram.firstChange(location.origin, username, password);
        return { contexts: r.contexts as string[], type: r.frame.type as string, contextId: r.frame.contextId as string };
      },
      { username: node.adminUser, password: node.adminPassword },
    );
    const writing = keepWriting(client, contextId, ran, stop.signal);
    const result = await ran;
    await writing;
    expect(result.contexts).toEqual([contextId]);
    expect(result.type).toBe('StateMutation');
    expect(result.contextId).toBe(contextId);
  } finally {
    stop.abort();
    await page.close();
  }
});
