/** `npm run build:web` (scripts/build-web.ts): the page names its hashed assets; `--if-stale` skips an up-to-date build. */
import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { buildDashboard, inputDigest } from '../scripts/build-web.ts';

const out = join(tmpdir(), `hearth-build-web-${process.pid}`);
afterAll(() => rm(out, { recursive: true, force: true }));

it('bundles the dashboard into index.html and content-hashed assets, and skips an up-to-date build', { timeout: 60_000 }, async () => {
  const first = await buildDashboard({ outDir: out });
  expect(first.built).toBe(true);
  const html = await readFile(join(out, 'index.html'), 'utf8');
  const assets = await readdir(join(out, 'assets'));
  const script = assets.find((f) => /^main-[A-Z0-9]+\.js$/.test(f));
  const style = assets.find((f) => /^main-[A-Z0-9]+\.css$/.test(f));
  expect(html).toContain(`<script type="module" src="/admin-dashboard/assets/${script}"></script>`);
  expect(html).toContain(`<link rel="stylesheet" href="/admin-dashboard/assets/${style}">`);
  expect(html).not.toContain('hearth:assets');
  // bundled at build time: no module is fetched from elsewhere
  const code = await readFile(join(out, 'assets', script!), 'utf8');
  expect(code).not.toMatch(/from\s*["']https?:/);
  expect(code).not.toMatch(/\bimport\(["']https?:/);
  expect(JSON.parse(await readFile(join(out, 'build.json'), 'utf8')).digest).toBe(await inputDigest());

  expect((await buildDashboard({ outDir: out, ifStale: true })).built).toBe(false);
  await rm(join(out, 'build.json'));
  expect((await buildDashboard({ outDir: out, ifStale: true })).built).toBe(true);
});
