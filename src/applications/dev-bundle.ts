/**
 * hearth: `PUT /admin-api/dev-bundle?package=<name>&version=<semver>[&name=<text>]` — bundles a raw
 * WebAssembly module sent as the body into a signed `.mpk` with the node's development signing key
 * and answers the bundle's bytes (issue #34 §2: the dashboard offers it when a `.wasm` is picked).
 * It installs nothing: the caller installs the answer like any bundle
 * (`PUT /admin-api/install-dev-application/bundle`), so every install path still refuses a raw
 * module, as the admin spec says. Not a spec route (docs/applications.md "Bundling a .wasm for
 * development"). The guard requires `admin`; a node with `dev_install_root` refuses (403), as it
 * refuses uploaded bundles.
 *
 * The development key is `<home>/dev-signing-key.pem` (Ed25519, PKCS#8 PEM, mode 0600), created on
 * first use and kept: bundles of one package from this node keep one application id across
 * versions, so they upgrade one another. It is not a publishing key — `hearth app keygen` is.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { badRequest, forbidden } from '../errors.ts';
import { Errors } from '../http/response-schemas.ts';
import { buildBundle } from './bundle.ts';
import { MAX_BUNDLE_BYTES } from './constants.ts';
import { checkComponent } from './manifest.ts';
import { parseSemver } from './semver.ts';
import { loadSigningKey } from './signing.ts';
import { isWasmModule } from './wasm.ts';

/** the development key's file in the node home */
export const DEV_SIGNING_KEY_FILE = 'dev-signing-key.pem';

export interface DevBundleDeps {
  /** where the node keeps its development signing key */
  keyPath: string;
  /** `[applications] dev_install_root`: set, the node takes dev installs only by path, and bundles none */
  devInstallRoot?: string;
}

/** The node's development key, created (0600, never overwriting a concurrent creation) when absent. */
export async function devSigningKey(path: string): Promise<KeyObject> {
  try {
    return loadSigningKey(await readFile(path));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' });
  try {
    await writeFile(path, pem, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return loadSigningKey(await readFile(path));
}

const MAX_NAME = 128;

const DevBundleQuery = Type.Object({
  package: Type.String({ minLength: 1, maxLength: MAX_NAME, description: 'package name (e.g. dev.local.kv)' }),
  version: Type.String({ minLength: 1, maxLength: 64, description: 'application version (semver)' }),
  name: Type.Optional(Type.String({ maxLength: MAX_NAME, description: 'display name (default: the package)' })),
});

const WasmBody = {
  content: { 'application/octet-stream': { schema: Type.String({ format: 'binary', description: 'the raw WebAssembly module' }) } },
};


export function registerDevBundleRoute(root: FastifyInstance, deps: DevBundleDeps): void {
  // An encapsulated scope, so the raw-body parser applies to this route only.
  root.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    const app = scope.withTypeProvider<TypeBoxTypeProvider>();
    app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: MAX_BUNDLE_BYTES }, (_req, body, done) => done(null, body));
    const schema = {
      summary: "hearth: bundle a raw .wasm into a .mpk signed with the node's development key (installs nothing)",
      querystring: DevBundleQuery,
      response: { 200: { description: 'the signed .mpk; X-Hearth-Application-Id names its application', content: { 'application/octet-stream': { schema: Type.Unsafe<Uint8Array>({ type: 'string', format: 'binary' }) } } }, ...Errors(400, 401, 403, 413, 415) },
    };
    app.put(
      '/admin-api/dev-bundle',
      { schema, config: { docs: { body: WasmBody } }, bodyLimit: MAX_BUNDLE_BYTES },
      async (req, reply) => {
        if (deps.devInstallRoot) {
          throw forbidden('this node takes dev installs only from files under its dev_install_root: bundle the module with hearth app bundle --wasm <file> and install it by path');
        }
        const body = req.body;
        if (!Buffer.isBuffer(body) || body.length === 0) throw badRequest('send the raw WebAssembly module as the body (content-type: application/octet-stream)');
        const wasm = new Uint8Array(body.buffer, body.byteOffset, body.length);
        if (!isWasmModule(wasm)) throw badRequest('the body is not a WebAssembly module (bad magic or version): send the .wasm file');
        const { package: pkg, version, name } = req.query;
        checkComponent(pkg, 'package');
        if (!parseSemver(version)) throw badRequest(`version ${JSON.stringify(version)} is not a semantic version (e.g. 0.1.0)`);
        const built = await buildBundle({ package: pkg, version, key: await devSigningKey(deps.keyPath), wasm, name: name?.trim() || undefined });
        return reply
          .code(200)
          .header('content-type', 'application/octet-stream')
          .header('content-disposition', `attachment; filename="${safeFileName(`${pkg}-${version}.mpk`)}"`)
          .header('x-hearth-application-id', built.applicationId)
          .send(built.bytes);
      },
    );
  });
}

/** A header-safe file name: printable ASCII without quotes or backslashes. */
function safeFileName(name: string): string {
  return name.replace(/[^\x20-\x7e]|["\\]/g, '_');
}
