/**
 * HTTP routes of applications and packages (admin spec "Applications and packages"; admin-wire-a
 * §3.1). Parse, call the service, shape the reference's envelope: installs, uninstall, get and
 * list answer `{data: …}`; `/packages`, `/packages/{p}/versions` and `/packages/{p}/latest` are
 * flat, as the reference sends them and the official SDK reads them. The node guard has already
 * checked the route's permission (auth/route-permissions.ts).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static } from 'typebox';
import { badRequest } from '../errors.ts';
import { ZERO_ID } from './constants.ts';
import { Errors } from '../http/response-schemas.ts';
import {
  AbiAnswer,
  AbiQuery,
  AppIdParams,
  ApplicationAnswer,
  ApplicationIdAnswer,
  ApplicationList,
  ApplicationRow,
  InstallDevRequest,
  InstallRequest,
  LatestAnswer,
  PackageList,
  PackageParams,
  PackageVersions,
  VersionList,
} from './schemas.ts';
import type { ApplicationDetails, ApplicationService } from './service.ts';

export interface ApplicationRoutesDeps {
  applications: ApplicationService;
}

const INSTALL_FIELDS = ['package', 'version'] as const;

/** admin-wire-a §3.2: exactly the reference's keys (the SDK treats any other key as drift). */
export function applicationWire(a: ApplicationDetails): Static<typeof ApplicationRow> {
  const row: Static<typeof ApplicationRow> = {
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

/** Route documentation (issue #6 OpenAPI): summaries, request schemas fastify validates, and answers. */
const AUTH = [401, 403];
const byId = { params: AppIdParams };
const byPackage = { params: PackageParams };
const DOCS = {
  install: { summary: 'Install package@version from the configured registry', response: { 200: ApplicationIdAnswer, ...Errors(400, ...AUTH, 502) } },
  installDev: {
    summary: 'Install a signed bundle from the node’s filesystem',
    body: InstallDevRequest,
    response: { 200: ApplicationIdAnswer, ...Errors(400, ...AUTH, 404) },
  },
  list: { summary: 'Installed applications', response: { 200: ApplicationList, ...Errors(...AUTH) } },
  get: { summary: 'One installed application', ...byId, response: { 200: ApplicationAnswer, ...Errors(400, ...AUTH, 404) } },
  uninstall: { summary: 'Uninstall (idempotent)', ...byId, response: { 200: ApplicationIdAnswer, ...Errors(400, ...AUTH) } },
  abi: { summary: 'The embedded ABI of the current version', ...byId, querystring: AbiQuery, response: { 200: AbiAnswer, ...Errors(400, ...AUTH, 404) } },
  versions: { summary: 'Retained versions, newest first', ...byId, response: { 200: VersionList, ...Errors(400, ...AUTH, 404) } },
  packages: { summary: 'Installed package names (flat)', response: { 200: PackageList, ...Errors(...AUTH) } },
  packageVersions: { summary: 'Installed versions of a package, newest first (flat)', ...byPackage, response: { 200: PackageVersions, ...Errors(...AUTH) } },
  latest: { summary: 'Highest installed version of a package (flat)', ...byPackage, response: { 200: LatestAnswer, ...Errors(...AUTH) } },
};

export function registerApplicationRoutes(root: FastifyInstance, deps: ApplicationRoutesDeps): void {
  const { applications } = deps;
  const app = root.withTypeProvider<TypeBoxTypeProvider>();

  // The body is parsed by hand (the 400 names an unknown field): documented (config.docs), not validated.
  app.post('/admin-api/install-application', { config: { docs: { body: InstallRequest } }, schema: DOCS.install }, async (req, reply) => {
    const { package: pkg, version } = parseInstallBody(req.body);
    return { data: await applications.installFromRegistry(pkg, version, callerGone(reply)) };
  });

  app.post('/admin-api/install-dev-application', { schema: DOCS.installDev }, async (req) => {
    return { data: await applications.installDev(req.body.path) };
  });

  app.get('/admin-api/applications', { schema: DOCS.list }, async () => {
    return { data: { apps: (await applications.list()).map(applicationWire) } };
  });

  app.get('/admin-api/applications/:id', { schema: DOCS.get }, async (req) => {
    return { data: { application: applicationWire(await applications.require(req.params.id)) } };
  });

  app.delete('/admin-api/applications/:id', { schema: DOCS.uninstall }, async (req) => {
    return { data: await applications.uninstall(req.params.id) };
  });

  app.get('/admin-api/applications/:id/abi', { schema: DOCS.abi }, async (req) => {
    const app = await applications.require(req.params.id);
    return { data: await applications.abi(app.id, req.query.service_name) };
  });

  app.get('/admin-api/applications/:id/versions', { schema: DOCS.versions }, async (req) => {
    return { data: await applications.versions(req.params.id) };
  });

  app.get('/admin-api/packages', { schema: DOCS.packages }, async () => ({ packages: await applications.packages() }));

  app.get('/admin-api/packages/:package/versions', { schema: DOCS.packageVersions }, async (req) => ({
    versions: await applications.packageVersions(req.params.package),
  }));

  app.get('/admin-api/packages/:package/latest', { schema: DOCS.latest }, async (req) => applications.latest(req.params.package));
}
