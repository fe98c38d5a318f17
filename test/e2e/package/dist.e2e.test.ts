/**
 * The compiled distribution (issue #14): the SDK is a package entry that plain Node.js imports with
 * no loader and TypeScript resolves through its `types`, from a project of its own; the compiled
 * node (`bin/hearth.js` → `dist/app/`) serves, runs application calls in its workers and joins the
 * swarm (libp2p on Node 20 needs the polyfill first); nothing compiled loads tsx.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, MemoryTokenStore } from '../../../src/client/index.ts';
import { makeBundle } from '../../helpers/bundles.ts';
import { makeHome, ROOT, spawnNode, startTestNode, type SpawnedNode, type TestNode } from '../../helpers/node.ts';
import { buildTestApp } from '../../helpers/wasm-apps.ts';

const run = promisify(execFile);
let project: string;

beforeAll(async () => {
  // a consumer project: `npm install <path to hearth>` links the package as node_modules/hearth
  project = await mkdtemp(join(tmpdir(), 'hearth-sdk-consumer-'));
  await mkdir(join(project, 'node_modules'));
  await symlink(ROOT, join(project, 'node_modules', 'hearth'), 'dir');
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
});
afterAll(() => rm(project, { recursive: true, force: true }));

describe('the SDK package entry (hearth/client)', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startTestNode();
  });
  afterAll(() => node?.destroy());

  it('imports from plain Node ESM with no loader and talks to a node', async () => {
    await writeFile(
      join(project, 'main.mjs'),
      [
        "import { createClient, MemoryTokenStore, HttpError } from 'hearth/client';",
        'const [url, username, password] = process.argv.slice(2);',
        'const c = createClient({ baseUrl: url, tokenStore: new MemoryTokenStore() });',
        'await c.auth.login({ username, password });',
        'const health = await c.admin.health();',
        "const missing = await c.http.json('/admin-api/contexts/' + '00'.repeat(32)).catch((e) => e);",
        'console.log(JSON.stringify({ health, httpError: missing instanceof HttpError, status: missing.status }));',
      ].join('\n'),
    );
    // no --import, no loader: only what Node does with a package's exports
    const { stdout } = await run(process.execPath, ['main.mjs', node.url, node.adminUser, node.adminPassword], { cwd: project, env: { PATH: process.env.PATH } });
    expect(JSON.parse(stdout)).toEqual({ health: { status: 'alive' }, httpError: true, status: 404 });
  });

  it('type-checks a consumer through the package types', async () => {
    await writeFile(
      join(project, 'check.ts'),
      [
        "import { createClient, MemoryTokenStore, type Client } from 'hearth/client';",
        "const c: Client = createClient({ baseUrl: 'http://127.0.0.1:1', tokenStore: new MemoryTokenStore() });",
        'export const status: Promise<string> = c.admin.health().then((h) => h.status);',
        '// @ts-expect-error the SDK types its methods: a number is not a base URL',
        'createClient({ baseUrl: 1 });',
      ].join('\n'),
    );
    // a browser-or-Node consumer: no @types/node, only the DOM's fetch
    const compilerOptions = { noEmit: true, strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2023', 'dom'], types: [] };
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['check.ts'] }));
    const out = await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], { cwd: project }).then(
      () => '',
      (err: { stdout?: string }) => err.stdout ?? String(err),
    );
    expect(out).toBe('');
  });
});

describe('the compiled node', () => {
  let spawned: SpawnedNode;
  let root: string;
  beforeAll(async () => {
    const paths = await makeHome();
    root = join(paths.dir, '..');
    spawned = await spawnNode(['run', '--home', root, '--node', 'test'], { MERO_AUTH_ADMIN_USER: 'dev', MERO_AUTH_ADMIN_PASSWORD: 'dev-password' });
  });
  afterAll(async () => {
    spawned?.child.kill('SIGTERM');
    await spawned?.exited;
    await rm(root, { recursive: true, force: true });
  });

  it('runs application calls in its workers and listens on the swarm', async () => {
    const c = createClient({ baseUrl: spawned.url, tokenStore: new MemoryTokenStore() });
    await c.auth.login({ username: 'dev', password: 'dev-password' });
    const bundle = await makeBundle({ wasm: await buildTestApp('kv'), package: 'com.hearth.dist' });
    const appId = (await c.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
    const ns = (await c.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
    const { contextId } = await c.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] });
    await c.rpc.execute(contextId, 'set', { key: 'k', value: 'compiled' });
    expect(await c.rpc.execute(contextId, 'get', { key: 'k' })).toBe('compiled');
    const status = await c.admin.networkStatus();
    expect(status.listenAddrs.some((a) => a.includes('/tcp/'))).toBe(true);
  });

  it('loads no TypeScript loader: the bundle and the worker import no tsx', async () => {
    const files = [...(await readdir(join(ROOT, 'dist/app'))).filter((f) => f.endsWith('.js')).map((f) => join(ROOT, 'dist/app', f)), join(ROOT, 'dist/runtime/worker.js')];
    for (const file of files) expect(await readFile(file, 'utf8')).not.toMatch(/["']tsx(\/[^"']*)?["']/);
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(pkg.dependencies)).not.toContain('tsx');
  });
});
