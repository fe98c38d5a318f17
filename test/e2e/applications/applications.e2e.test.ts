/**
 * Applications and packages end to end (admin spec "Applications and packages"; admin-wire-a §3):
 * real nodes on 127.0.0.1 driven through the project's SDK, with bundles made by `hearth app
 * bundle` / `hearth app publish` (the CLI, run as a child process) and by the same code in-process
 * (test/helpers/bundles.ts), and raw `fetch` where the exact wire bytes matter.
 */
import { createServer, type Server } from 'node:http';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readArchive, writeArchive } from '../../../src/applications/archive.ts';
import { createClient, HttpError, MemoryTokenStore, type Client } from '../../../src/client/index.ts';
import { makeBundle, signingKey, testAbi, tinyWasm } from '../../helpers/bundles.ts';
import { runCli, startTestNode, type TestNode } from '../../helpers/node.ts';
import { httpError } from '../../helpers/status.ts';

let work: string;
/** a node without a registry */
let plain: TestNode;
/** a node with a registry directory, an HTTP registry and a dev install root */
let registryNode: TestNode;
let httpRegistry: Server;
let a: Client;
let r: Client;
let token: string;
let registryDir: string;
let servedDir: string;
let installRoot: string;

async function login(node: TestNode): Promise<Client> {
  const client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  await client.auth.login({ username: node.adminUser, password: node.adminPassword });
  return client;
}

async function raw(method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${plain.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
}

async function cli(args: string[]): Promise<Record<string, unknown>> {
  const res = await runCli([...args, '--output', 'json']);
  expect(res.stderr).toBe('');
  expect(res.code).toBe(0);
  return JSON.parse(res.stdout.trim().split('\n').pop()!);
}

/** A static file server over a directory: an HTTP registry with the reference layout. */
function serveDirectory(dir: string): Promise<Server> {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    try {
      const body = await readFile(join(dir, path));
      res.writeHead(200, { 'content-type': extname(path) === '.mpk' ? 'application/octet-stream' : 'application/json' }).end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'hearth-apps-e2e-'));
  registryDir = join(work, 'registry');
  servedDir = join(work, 'served');
  installRoot = join(work, 'root');
  await mkdir(installRoot);
  httpRegistry = await serveDirectory(servedDir);
  const addr = httpRegistry.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  plain = await startTestNode();
  registryNode = await startTestNode({
    configure: (cfg) => {
      cfg.registry.dir = registryDir;
      cfg.registry.url = url;
      cfg.applications.devInstallRoot = installRoot;
    },
  });
  a = await login(plain);
  r = await login(registryNode);
  token = (await a.http.getTokens())!.accessToken;
}, 60_000);

afterAll(async () => {
  await plain?.destroy();
  await registryNode?.destroy();
  await new Promise((resolve) => httpRegistry?.close(resolve));
  await rm(work, { recursive: true, force: true });
});

describe('hearth app bundle + install-dev-application', () => {
  let appId: string;
  let bundlePath: string;

  it('installs a bundle built and signed by the CLI', async () => {
    const key = join(work, 'cli.key');
    const keygen = await cli(['app', 'keygen', key]);
    expect(keygen.signerId).toMatch(/^did:key:z6Mk/);
    const wasm = join(work, 'cli.wasm');
    const abi = join(work, 'cli.abi.json');
    await writeFile(wasm, tinyWasm());
    await writeFile(abi, JSON.stringify(testAbi(['get', 'set'], ['get'])));
    bundlePath = join(work, 'out', 'cli.mpk');
    const built = await cli(['app', 'bundle', '--wasm', wasm, '--abi', abi, '--package', 'com.hearth.cli', '--version', '0.2.0', '--key', key, '--name', 'CLI App', '--out', bundlePath]);
    expect(built).toMatchObject({ event: 'bundled', path: bundlePath, signerId: keygen.signerId, package: 'com.hearth.cli', version: '0.2.0' });
    expect(built.applicationId).toMatch(/^[0-9a-f]{64}$/);

    const res = await a.applications.installDev(bundlePath);
    expect(res).toEqual({ applicationId: built.applicationId });
    appId = res.applicationId;
  }, 90_000);

  it('answers the reference row with exactly its keys', async () => {
    const app = await a.applications.get(appId);
    expect(Object.keys(app).sort()).toEqual(['blob', 'id', 'metadata', 'package', 'signer_id', 'size', 'source', 'version']);
    const bytes = await readFile(bundlePath);
    expect(app).toMatchObject({ id: appId, package: 'com.hearth.cli', version: '0.2.0', size: bytes.length, source: `file://${bundlePath}` });
    expect(app.blob.compiled).toBe('0'.repeat(64));
    expect(app.blob.bytecode).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.parse(Buffer.from(app.metadata).toString('utf8'))).toEqual({ package: 'com.hearth.cli', version: '0.2.0', name: 'CLI App' });
    // the bundle is a blob of the node, pinned while installed
    const blobs = await a.blobs.list();
    expect(blobs.map((b) => b.blob_id)).toContain(app.blob.bytecode);
    expect((await httpError(a.blobs.delete(app.blob.bytecode))).status).toBe(403);
  });

  it('lists, reports versions and packages (flat where the reference is flat)', async () => {
    expect((await a.applications.list()).map((x) => x.id)).toContain(appId);
    expect(await a.applications.versions(appId)).toEqual([
      { version: '0.2.0', blobId: (await a.applications.get(appId)).blob.bytecode, size: (await readFile(bundlePath)).length, package: 'com.hearth.cli' },
    ]);
    expect(await a.applications.packages()).toContain('com.hearth.cli');
    expect(await a.applications.packageVersions('com.hearth.cli')).toEqual(['0.2.0']);
    expect(await a.applications.latest('com.hearth.cli')).toEqual({ applicationId: appId, version: '0.2.0' });
    expect(await a.applications.latest('com.unknown')).toEqual({ applicationId: null, version: null });

    expect((await raw('GET', '/admin-api/packages')).json).toEqual({ packages: expect.arrayContaining(['com.hearth.cli']) });
    expect((await raw('GET', '/admin-api/packages/com.hearth.cli/versions')).json).toEqual({ versions: ['0.2.0'] });
    expect((await raw('GET', '/admin-api/packages/com.hearth.cli/latest')).json).toEqual({ applicationId: appId, version: '0.2.0' });
    expect((await raw('GET', '/admin-api/applications')).json.data.apps).toEqual(expect.arrayContaining([expect.objectContaining({ id: appId })]));
    expect((await raw('GET', `/admin-api/applications/${appId}`)).json.data.application.id).toBe(appId);
    expect((await raw('GET', `/admin-api/applications/${appId}/versions`)).json.data).toHaveLength(1);
  });

  it('answers the embedded ABI, and the service_name 400 for a single-service app', async () => {
    const abi = await a.applications.abi(appId);
    expect(abi).toMatchObject({ schema_version: 'wasm-abi/1', methods: [{ name: 'get', intent: 'read_only' }, { name: 'set' }] });
    expect((await raw('GET', `/admin-api/applications/${appId}/abi`)).json).toEqual({ data: abi });
    const err = await httpError(a.applications.abi(appId, { serviceName: 'bogus' }));
    expect(err.status).toBe(400);
    expect(err.bodyText).toContain('service_name');
    expect(err.errorText).toBe('application has no named services; omit service_name');
  });

  it('accepts base58 application ids on input and answers hex', async () => {
    const { base58Encode } = await import('../../../src/applications/signing.ts');
    expect((await a.applications.get(base58Encode(Buffer.from(appId, 'hex')))).id).toBe(appId);
    expect((await httpError(a.applications.get('not-an-id'))).status).toBe(400);
  });

  it('accepts and ignores the legacy metadata field on install-dev', async () => {
    const res = await raw('POST', '/admin-api/install-dev-application', { path: bundlePath, metadata: [], package: 'x', version: 'y' });
    expect(res).toMatchObject({ status: 200, json: { data: { applicationId: appId } } });
  });

  it('uninstalls idempotently and frees the bundle blob', async () => {
    const bytecode = (await a.applications.get(appId)).blob.bytecode;
    expect(await a.applications.uninstall(appId)).toEqual({ applicationId: appId });
    expect((await httpError(a.applications.get(appId))).status).toBe(404);
    expect((await raw('GET', `/admin-api/applications/${appId}`)).json).toEqual({ error: 'Application not found' });
    expect((await a.applications.list()).map((x) => x.id)).not.toContain(appId);
    expect(await a.applications.latest('com.hearth.cli')).toEqual({ applicationId: null, version: null });
    expect((await a.blobs.list()).map((b) => b.blob_id)).not.toContain(bytecode);
    expect((await httpError(a.applications.versions(appId))).status).toBe(404);
    expect(await a.applications.uninstall(appId)).toEqual({ applicationId: appId });
  });
});

describe('install-dev-application refusals', () => {
  it('refuses a manifest changed after signing', async () => {
    const b = await makeBundle({ wasm: tinyWasm(), dir: work, fileName: 'tampered.mpk', name: 'Honest' });
    const files = await readArchive(b.bytes);
    const manifest = JSON.parse(files.get('manifest.json')!.toString());
    manifest.metadata.name = 'Evil';
    files.set('manifest.json', Buffer.from(JSON.stringify(manifest)));
    await writeFile(b.path, await writeArchive([...files.entries()]));
    const err = await httpError(a.applications.installDev(b.path));
    expect(err.status).toBe(400);
    expect(err.errorText).toMatch(/signature does not verify/);
    expect(await a.applications.get(b.applicationId).catch((e: HttpError) => e.status)).toBe(404);
  });

  it('refuses a wasm whose digest does not match the manifest', async () => {
    const b = await makeBundle({ wasm: tinyWasm(), dir: work, fileName: 'digest.mpk' });
    const files = await readArchive(b.bytes);
    files.set('app.wasm', Buffer.from(tinyWasm({ extra: 7 })));
    await writeFile(b.path, await writeArchive([...files.entries()]));
    const err = await httpError(a.applications.installDev(b.path));
    expect(err.status).toBe(400);
    expect(err.errorText).toMatch(/app\.wasm" has SHA-256 [0-9a-f]{64}, but the manifest declares [0-9a-f]{64}/);
  });

  it('refuses a raw wasm with the spec message, naming hearth app bundle (by path, by upload, and a non-.mpk path)', async () => {
    const path = join(work, 'raw.wasm');
    await writeFile(path, tinyWasm());
    const err = await httpError(a.applications.installDev(path));
    expect(err.status).toBe(400);
    expect(err.errorText).toBe(
      `${path} is not a signed application bundle (.mpk) but a raw WebAssembly module: bundle it first: hearth app bundle --wasm <file> --package <name> --version <semver> --key <signing key>`,
    );
    const uploaded = await httpError(a.applications.installBundle(tinyWasm()));
    expect(uploaded.status).toBe(400);
    expect(uploaded.errorText).toMatch(/^not a signed application bundle \(\.mpk\): this is a raw WebAssembly module; bundle it first: hearth app bundle --wasm <file>/);
    const other = join(work, 'raw.bin');
    await writeFile(other, tinyWasm());
    expect((await httpError(a.applications.installDev(other))).errorText).toBe(`${other} is not a signed application bundle (.mpk): only signed bundles can be installed`);
  });

  it('refuses ".." components with 400 and a missing file with 404 naming the path', async () => {
    const dotdot = await httpError(a.applications.installDev(`${work}/x/../app.mpk`));
    expect(dotdot.status).toBe(400);
    expect(dotdot.errorText).toMatch(/must not contain "\.\." components/);
    const missing = join(work, 'missing.mpk');
    const err = await httpError(a.applications.installDev(missing));
    expect(err.status).toBe(404);
    expect(err.errorText).toBe(`application file not found at ${missing}`);
  });

  it('answers 400 naming body.path when it is missing', async () => {
    const res = await raw('POST', '/admin-api/install-dev-application', { metadata: [] });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/body\.path is required/);
  });

  it('confines dev installs to the configured install root (403 outside)', async () => {
    const inside = await makeBundle({ wasm: tinyWasm(), dir: installRoot, package: 'com.hearth.inside' });
    expect(await r.applications.installDev(inside.path)).toEqual({ applicationId: inside.applicationId });
    const outside = await makeBundle({ wasm: tinyWasm(), dir: work, package: 'com.hearth.outside' });
    const err = await httpError(r.applications.installDev(outside.path));
    expect(err.status).toBe(403);
    expect(err.errorText).toBe('install path is not permitted');
  });
});

describe('install-application (registry)', () => {
  it('installs from a registry directory written by "hearth app publish"', async () => {
    const b = await makeBundle({ wasm: tinyWasm({ abi: testAbi() }), dir: work, package: 'com.hearth.registry', version: '1.4.0' });
    const published = await cli(['app', 'publish', b.path, '--registry', registryDir]);
    expect(published).toMatchObject({ event: 'published', package: 'com.hearth.registry', version: '1.4.0', applicationId: b.applicationId, written: true });
    expect(await r.applications.install('com.hearth.registry', '1.4.0')).toEqual({ applicationId: b.applicationId });
    const app = await r.applications.get(b.applicationId);
    expect(app.source).toBe(`file://${published.path}`);
    expect(await r.applications.latest('com.hearth.registry')).toEqual({ applicationId: b.applicationId, version: '1.4.0' });
  }, 90_000);

  it('installs from an HTTP registry with the reference layout, keeping older versions', async () => {
    const key = signingKey();
    for (const version of ['2.0.0', '2.1.0-rc.1']) {
      const b = await makeBundle({ wasm: tinyWasm({ extra: version.length }), key, dir: work, package: 'com.hearth.http', version });
      await cli(['app', 'publish', b.path, '--registry', servedDir]);
    }
    const first = await r.applications.install('com.hearth.http', '2.0.0');
    const second = await r.applications.install('com.hearth.http', '2.1.0-rc.1');
    expect(second).toEqual(first);
    const app = await r.applications.get(first.applicationId);
    expect(app.version).toBe('2.1.0-rc.1');
    expect(app.source).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/artifacts\/com\.hearth\.http\/2\.1\.0-rc\.1\/com\.hearth\.http-2\.1\.0-rc\.1\.mpk$/);
    expect((await r.applications.versions(first.applicationId)).map((v) => v.version)).toEqual(['2.1.0-rc.1', '2.0.0']);
    expect(await r.applications.packageVersions('com.hearth.http')).toEqual(['2.1.0-rc.1', '2.0.0']);
    expect(await r.applications.latest('com.hearth.http')).toEqual({ applicationId: first.applicationId, version: '2.1.0-rc.1' });
  }, 90_000);

  it('answers 502 for coordinates no registry can resolve', async () => {
    const err = await httpError(r.applications.install('com.hearth.nowhere', '1.0.0'));
    expect(err.status).toBe(502);
    expect(err.errorText).toMatch(/cannot resolve com\.hearth\.nowhere@1\.0\.0/);
  });

  it('answers 400 when the node has no registry configured', async () => {
    const err = await httpError(a.applications.install('com.hearth.registry', '1.4.0'));
    expect(err.status).toBe(400);
    expect(err.errorText).toMatch(/No application registry is configured/);
  });

  it('refuses any field other than package and version with 400 naming it', async () => {
    const legacy = await raw('POST', '/admin-api/install-application', { url: 'http://example.com/x.mpk', metadata: [] });
    expect(legacy.status).toBe(400);
    expect(legacy.json.error).toMatch(/unknown field `url`, expected `package` or `version`/);
    const extra = await raw('POST', '/admin-api/install-application', { package: 'a.b', version: '1.0.0', hash: 'x' });
    expect(extra.status).toBe(400);
    expect(extra.json.error).toMatch(/unknown field `hash`/);
    const missing = await raw('POST', '/admin-api/install-application', { package: 'a.b' });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatch(/body\.version is required/);
  });
});

describe('multi-service applications', () => {
  it('selects services for the ABI like the reference', async () => {
    const b = await makeBundle({
      wasm: tinyWasm(),
      dir: work,
      package: 'com.hearth.multi',
      services: [
        { name: 'alpha', wasm: tinyWasm({ extra: 1 }), abi: testAbi(['a'], ['a']) },
        { name: 'beta', wasm: tinyWasm({ extra: 2 }) },
      ],
    });
    await a.applications.installDev(b.path);
    const app = await a.applications.get(b.applicationId);
    expect(Object.keys(app.services!)).toEqual(['alpha', 'beta']);
    expect(app.services!.alpha.compiled).toBe('0'.repeat(64));
    expect(await a.applications.abi(b.applicationId, { serviceName: 'alpha' })).toMatchObject({ methods: [{ name: 'a' }] });
    // a service without an embedded ABI: null, not an error (spec: "ABI as JSON, or null")
    expect((await raw('GET', `/admin-api/applications/${b.applicationId}/abi?service_name=beta`)).json).toEqual({ data: null });
    const none = await httpError(a.applications.abi(b.applicationId));
    expect(none.status).toBe(400);
    expect(none.errorText).toBe('application has multiple services; pass service_name (available: alpha, beta)');
    const unknown = await httpError(a.applications.abi(b.applicationId, { serviceName: 'gamma' }));
    expect(unknown.status).toBe(400);
    expect(unknown.bodyText).toContain('service_name');
  });

  it('answers 404 for the ABI of an unknown application', async () => {
    expect((await httpError(a.applications.abi('ab'.repeat(32)))).status).toBe(404);
  });
});

describe('persistence and tooling errors', () => {
  it('keeps installed applications across a restart and still serves their wasm', async () => {
    const local = await makeBundle({ wasm: tinyWasm({ abi: testAbi(['view'], ['view']) }), dir: installRoot, package: 'com.hearth.persist' });
    await r.applications.installDev(local.path);
    registryNode = await registryNode.restart();
    r = await login(registryNode);
    expect((await r.applications.get(local.applicationId)).package).toBe('com.hearth.persist');
    expect([...(await registryNode.node.applications.readOnlyMethods(local.applicationId))]).toEqual(['view']);
  });

  it('"hearth app bundle" without a wasm fails with a usage message and no file', async () => {
    const key = join(work, 'err.key');
    await writeFile(key, signingKey().export({ format: 'pem', type: 'pkcs8' }));
    const res = await runCli(['app', 'bundle', '--package', 'p.q', '--version', '1.0.0', '--key', key, '--out', join(work, 'none.mpk')]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/pass --wasm <file> or at least one --service/);
    await expect(readFile(join(work, 'none.mpk'))).rejects.toThrow();
    const notWasm = join(work, 'not.wasm');
    await writeFile(notWasm, 'hello');
    const bad = await runCli(['app', 'bundle', '--wasm', notWasm, '--package', 'p.q', '--version', '1.0.0', '--key', key]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/wasm is not a WebAssembly module/);
  }, 90_000);
});
