import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDashboardRoutes } from './routes.ts';

let dir: string;
let built: FastifyInstance;
let missing: FastifyInstance;

async function app(at: string): Promise<FastifyInstance> {
  const a = Fastify({ routerOptions: { ignoreTrailingSlash: true } });
  registerDashboardRoutes(a, { dir: at });
  await a.ready();
  return a;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-dashboard-routes-'));
  await mkdir(join(dir, 'assets'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>dash</title>');
  await writeFile(join(dir, 'assets', 'main-ABC123.js'), 'console.log(1)');
  await writeFile(join(dir, 'secret.txt'), 'not an asset');
  built = await app(dir);
  missing = await app(join(dir, 'absent'));
});
afterAll(async () => {
  await Promise.all([built?.close(), missing?.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('the dashboard routes', () => {
  it('send / to the dashboard', async () => {
    const res = await built.inject('/');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/admin-dashboard/');
  });

  it.each(['/admin-dashboard', '/admin-dashboard/', '/admin-dashboard/contexts', '/admin-dashboard/keys/'])('answer %s with the app, uncached, under a strict CSP', async (path) => {
    const res = await built.inject(path);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('<!doctype html><title>dash</title>');
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-frame-options']).toBe('DENY');
  });

  it('serve built assets with their type, cached for good', async () => {
    const res = await built.inject('/admin-dashboard/assets/main-ABC123.js');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('console.log(1)');
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toContain('immutable');
  });

  it.each(['/admin-dashboard/assets/missing-X.js', '/admin-dashboard/assets/..%2fsecret.txt', '/admin-dashboard/assets/..%2Findex.html', '/admin-dashboard/assets/main-ABC123.exe', '/admin-dashboard/assets/.hidden.js'])(
    'answer 404 for %s (unknown, outside assets/, or of an unserved type)',
    async (path) => {
      const res = await built.inject(path);
      expect(res.statusCode).toBe(404);
      expect(res.body).not.toContain('not an asset');
    },
  );

  it('say how to build the dashboard when it was not built (503)', async () => {
    const res = await missing.inject('/admin-dashboard/');
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build:web');
  });
});
