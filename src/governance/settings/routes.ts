/**
 * Routes of the spec's "Capabilities, settings and metadata" table (admin-wire-b §6): parse the
 * ids, call the settings service, shape the answer. Writes answer an empty 200 (spec: none;
 * README "Response: none"); the TEE admission policy GET is flat (§1.2), everything else is
 * enveloped in `{data}`, metadata getters answering `{data: null}` when none is set. The TEE policy
 * writes are root-guarded (an optional `rootProof`; this node signs with its own root otherwise).
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireId } from '../../crypto/ids.ts';
import { badRequest } from '../../errors.ts';
import type { GovernanceRouteDeps } from '../route-deps.ts';
import type { MetadataTarget } from './ops.ts';
import { Empty, Errors } from '../../http/response-schemas.ts';
import {
  CapabilitiesAnswer,
  MetadataAnswer,
  OptionalRootProof,
  SetCapabilitiesRequest,
  SetDefaultCapabilitiesRequest,
  SetMetadataRequest,
  SetTeeAdmissionPolicyRequest,
  SetTeeAuthoringPolicyRequest,
  SetVisibilityRequest,
  TeeAdmissionPolicyAnswer,
} from './schemas.ts';
import { requireVisibility } from './validate.ts';
import { emptyJsonAsNoBody } from '../../http/body.ts';
import { emptyOk } from '../../http/reply.ts';
import { ContextParams, MemberParams } from '../groups/members-schemas.ts';
import { GroupParams } from '../groups/schemas.ts';

/** Writes answer an empty 200 (spec: none); reads their body; both share the usual refusals. */
const written = (...errors: number[]) => ({ 200: Empty('Done (spec: none): an empty 200'), ...Errors(400, 401, 403, 404, ...errors) });
const read = <T>(answer: T) => ({ 200: answer, ...Errors(400, 401, 403, 404) });

/** The optional `{rootProof?}` body of the DELETE (no body or `{}` = no proof). */
function optionalProof(body: unknown): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('Invalid JSON data: expected an object');
  const proof = (body as { rootProof?: unknown }).rootProof;
  if (proof !== undefined && typeof proof !== 'string') throw badRequest('Invalid JSON data: rootProof must be a string');
  return proof;
}

export function registerSettingsRoutes(root: FastifyInstance, deps: GovernanceRouteDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { settings } = deps;
  const group = (id: string) => requireId(id, 'group id');
  const account = (id: string) => requireId(id, 'account id');

  const capsSchema = { summary: 'A member’s capability mask', params: MemberParams, response: read(CapabilitiesAnswer) };
  app.get('/admin-api/groups/:groupId/members/:account/capabilities', { schema: capsSchema }, async (req) => ({
    data: { capabilities: settings.capabilities(group(req.params.groupId), account(req.params.account)) },
  }));

  app.put(
    '/admin-api/groups/:groupId/members/:account/capabilities',
    { schema: { summary: 'Set a member’s capability mask (admins)', params: MemberParams, body: SetCapabilitiesRequest, response: written(409) } },
    async (req, reply) => {
      await settings.setCapabilities(group(req.params.groupId), account(req.params.account), req.body.capabilities);
      return emptyOk(reply);
    },
  );

  app.put(
    '/admin-api/groups/:groupId/settings/default-capabilities',
    { schema: { summary: 'Set the group’s default capability mask (admins)', params: GroupParams, body: SetDefaultCapabilitiesRequest, response: written() } },
    async (req, reply) => {
      await settings.setDefaultCapabilities(group(req.params.groupId), req.body.defaultCapabilities);
      return emptyOk(reply);
    },
  );

  app.put(
    '/admin-api/groups/:groupId/settings/subgroup-visibility',
    { schema: { summary: 'Set subgroup visibility (open | restricted)', params: GroupParams, body: SetVisibilityRequest, response: written() } },
    async (req, reply) => {
      await settings.setSubgroupVisibility(group(req.params.groupId), requireVisibility(req.body.subgroupVisibility));
      return emptyOk(reply);
    },
  );

  const policySchema = { summary: 'The namespace’s TEE admission policy (flat)', params: GroupParams, response: read(TeeAdmissionPolicyAnswer) };
  app.get('/admin-api/groups/:groupId/settings/tee-admission-policy', { schema: policySchema }, async (req) =>
    settings.admissionPolicy(group(req.params.groupId)),
  );

  app.put(
    '/admin-api/groups/:groupId/settings/tee-admission-policy',
    {
      schema: { summary: 'Set the TEE admission policy (root-guarded, namespace root)', params: GroupParams, body: SetTeeAdmissionPolicyRequest, response: written(409) },
    },
    async (req, reply) => {
      const { rootProof, ...policy } = req.body;
      await settings.setAdmissionPolicy(group(req.params.groupId), policy, rootProof);
      return emptyOk(reply);
    },
  );

  app.put(
    '/admin-api/groups/:groupId/settings/tee-authoring-policy',
    {
      schema: { summary: 'Set the TEE authoring policy (root-guarded, namespace root)', params: GroupParams, body: SetTeeAuthoringPolicyRequest, response: written(409) },
    },
    async (req, reply) => {
      await settings.setAuthoringPolicy(group(req.params.groupId), req.body.allowedMrtd ?? [], req.body.rootProof);
      return emptyOk(reply);
    },
  );

  // DELETE takes no body, `{}` or `{rootProof}` (admin-wire-b §6.5): an empty JSON body is no body
  void root.register(async (scope) => {
    emptyJsonAsNoBody(scope);
    scope.withTypeProvider<TypeBoxTypeProvider>().delete(
      '/admin-api/groups/:groupId/settings/tee-authoring-policy',
      {
        schema: { summary: 'Switch TEE authorship off (root-guarded, namespace root)', params: GroupParams, response: written(409) },
        config: { docs: { body: OptionalRootProof } },
      },
      async (req, reply) => {
        await settings.setAuthoringPolicy(group(req.params.groupId), [], optionalProof(req.body));
        return emptyOk(reply);
      },
    );
  });

  const metadataRoutes = <P extends typeof GroupParams | typeof MemberParams | typeof ContextParams>(
    path: string,
    params: P,
    what: string,
    target: (p: Record<string, string>) => MetadataTarget,
  ) => {
    app.get(path, { schema: { summary: `${what} metadata ({data: null} until set)`, params, response: read(MetadataAnswer) } }, async (req) => {
      const p = req.params as Record<string, string>;
      return { data: settings.metadata(group(p.groupId), target(p)) };
    });
    app.put(path, { schema: { summary: `Set ${what.toLowerCase()} metadata`, params, body: SetMetadataRequest, response: written() } }, async (req, reply) => {
      const p = req.params as Record<string, string>;
      await settings.setMetadata(group(p.groupId), target(p), { name: req.body.name ?? undefined, data: req.body.data });
      return emptyOk(reply);
    });
  };
  metadataRoutes('/admin-api/groups/:groupId/metadata', GroupParams, 'Group', () => ({ target: 'group' }));
  metadataRoutes('/admin-api/groups/:groupId/members/:account/metadata', MemberParams, 'Member', (p) => ({ target: 'member', account: account(p.account) }));
  metadataRoutes('/admin-api/groups/:groupId/contexts/:contextId/metadata', ContextParams, 'Context', (p) => ({
    target: 'context',
    contextId: requireId(p.contextId, 'context id'),
  }));
}
