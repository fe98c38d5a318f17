/**
 * HTTP routes of applications and packages (admin spec "Applications and packages"; admin-wire-a
 * §3.1). Parse, call the service, shape the reference's envelope: installs, uninstall, get and
 * list answer `{data: …}`; `/packages`, `/packages/{p}/versions` and `/packages/{p}/latest` are
 * flat, as the reference sends them and the official SDK reads them. The node guard has already
 * checked the route's permission (auth/route-permissions.ts).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { badRequest } from '../errors.ts';
import { ZERO_ID } from './constants.ts';
import { AbiQuery, AppIdParams, InstallDevRequest, PackageParams } from './schemas.ts';
import type { ApplicationDetails, ApplicationService } from './service.ts';

export interface ApplicationRoutesDeps {
  applications: ApplicationService;
}

const INSTALL_FIELDS = ['package', 'version'] as const;

/** admin-wire-a §3.2: exactly the reference's keys (the SDK treats any other key as drift). */
export function applicationWire(a: ApplicationDetails): Record<string, unknown> {
  const row: Record<string, unknown> = {
    id: a.id,
    blob: { bytecode: a.bundleBlobId, compiled: ZERO_ID },
    size: a.size,
    source: a.source,
    metadata: [...Buffer.from(a.metadata, 'utf8')],
    signer_id: a.signerId,
  };
  if (a.package) row.package = a.package;
  if (a.version) row.version = a.version;
  if (a.services.length > 0) {
    row.services = Object.fromEntries(a.services.map((name) => [name, { bytecode: a.serviceBlobs[name], compiled: ZERO_ID }]));
  }
  return row;
}

/** spec: `{package, version}` and nothing else; any other field is named in the 400. */
function parseInstallBody(body: unknown): { package: string; version: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest('Invalid request: body must be a JSON object {"package": …, "version": …}');
  }
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) {
    if (!(INSTALL_FIELDS as readonly string[]).includes(key)) {
      throw badRequest(`Invalid request: unknown field \`${key}\`, expected \`package\` or \`version\` (installs are registry-only)`);
    }
  }
  for (const key of INSTALL_FIELDS) {
    if (typeof b[key] !== 'string' || b[key] === '') throw badRequest(`Invalid request: body.${key} is required and must be a non-empty string`);
  }
  return { package: b.package as string, version: b.version as string };
}

/** Aborted when the caller goes away before the answer is sent. */
function callerGone(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort(new Error('the caller closed the connection'));
  });
  return ac.signal;
}

export function registerApplicationRoutes(root: FastifyInstance, deps: ApplicationRoutesDeps): void {
  const { applications } = deps;
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/admin-api/install-application', async (req, reply) => {
    const { package: pkg, version } = parseInstallBody(req.body);
    return { data: await applications.installFromRegistry(pkg, version, callerGone(reply)) };
  });

  app.post('/admin-api/install-dev-application', { schema: { body: InstallDevRequest } }, async (req) => {
    return { data: await applications.installDev(req.body.path) };
  });

  app.get('/admin-api/applications', async () => {
    return { data: { apps: (await applications.list()).map(applicationWire) } };
  });

  app.get('/admin-api/applications/:id', { schema: { params: AppIdParams } }, async (req) => {
    return { data: { application: applicationWire(await applications.require(req.params.id)) } };
  });

  app.delete('/admin-api/applications/:id', { schema: { params: AppIdParams } }, async (req) => {
    return { data: await applications.uninstall(req.params.id) };
  });

  app.get('/admin-api/applications/:id/abi', { schema: { params: AppIdParams, querystring: AbiQuery } }, async (req) => {
    const app = await applications.require(req.params.id);
    return { data: await applications.abi(app.id, req.query.service_name) };
  });

  app.get('/admin-api/applications/:id/versions', { schema: { params: AppIdParams } }, async (req) => {
    return { data: await applications.versions(req.params.id) };
  });

  app.get('/admin-api/packages', async () => ({ packages: await applications.packages() }));

  app.get('/admin-api/packages/:package/versions', { schema: { params: PackageParams } }, async (req) => ({
    versions: await applications.packageVersions(req.params.package),
  }));

  app.get('/admin-api/packages/:package/latest', { schema: { params: PackageParams } }, async (req) => applications.latest(req.params.package));
}
