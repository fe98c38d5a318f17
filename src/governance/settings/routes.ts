/**
 * Routes of the spec's "Capabilities, settings and metadata" table (admin-wire-b §6): parse the
 * ids, call the settings service, shape the answer. Writes answer an empty 200 (spec: none;
 * README "Response: none"); the TEE admission policy GET is flat (§1.2), everything else is
 * enveloped in `{data}`, metadata getters answering `{data: null}` when none is set. The TEE policy
 * writes are root-guarded (an optional `rootProof`; this node signs with its own root otherwise).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireId } from '../../crypto/ids.ts';
import { badRequest } from '../../errors.ts';
import type { GovernanceRouteDeps } from '../routes.ts';
import type { MetadataTarget } from './ops.ts';
import {
  ContextParams,
  GroupParams,
  MemberParams,
  SetCapabilitiesRequest,
  SetDefaultCapabilitiesRequest,
  SetMetadataRequest,
  SetTeeAdmissionPolicyRequest,
  SetTeeAuthoringPolicyRequest,
  SetVisibilityRequest,
} from './schemas.ts';
import { requireVisibility } from './validate.ts';
import { emptyJsonAsNoBody } from '../../http/body.ts';

const none = (reply: FastifyReply) => reply.code(200).send();

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

  app.get('/admin-api/groups/:groupId/members/:account/capabilities', { schema: { params: MemberParams } }, async (req) => ({
    data: { capabilities: settings.capabilities(group(req.params.groupId), account(req.params.account)) },
  }));

  app.put(
    '/admin-api/groups/:groupId/members/:account/capabilities',
    { schema: { params: MemberParams, body: SetCapabilitiesRequest } },
    async (req, reply) => {
      await settings.setCapabilities(group(req.params.groupId), account(req.params.account), req.body.capabilities);
      return none(reply);
    },
  );

  app.put(
    '/admin-api/groups/:groupId/settings/default-capabilities',
    { schema: { params: GroupParams, body: SetDefaultCapabilitiesRequest } },
    async (req, reply) => {
      await settings.setDefaultCapabilities(group(req.params.groupId), req.body.defaultCapabilities);
      return none(reply);
    },
  );

  app.put(
    '/admin-api/groups/:groupId/settings/subgroup-visibility',
    { schema: { params: GroupParams, body: SetVisibilityRequest } },
    async (req, reply) => {
      await settings.setSubgroupVisibility(group(req.params.groupId), requireVisibility(req.body.subgroupVisibility));
      return none(reply);
    },
  );

  app.get('/admin-api/groups/:groupId/settings/tee-admission-policy', { schema: { params: GroupParams } }, async (req) =>
    settings.admissionPolicy(group(req.params.groupId)),
  );

  app.put(
    '/admin-api/groups/:groupId/settings/tee-admission-policy',
    { schema: { params: GroupParams, body: SetTeeAdmissionPolicyRequest } },
    async (req, reply) => {
      const { rootProof, ...policy } = req.body;
      await settings.setAdmissionPolicy(group(req.params.groupId), policy, rootProof);
      return none(reply);
    },
  );

  app.put(
    '/admin-api/groups/:groupId/settings/tee-authoring-policy',
    { schema: { params: GroupParams, body: SetTeeAuthoringPolicyRequest } },
    async (req, reply) => {
      await settings.setAuthoringPolicy(group(req.params.groupId), req.body.allowedMrtd ?? [], req.body.rootProof);
      return none(reply);
    },
  );

  // DELETE takes no body, `{}` or `{rootProof}` (admin-wire-b §6.5): an empty JSON body is no body
  void root.register(async (scope) => {
    emptyJsonAsNoBody(scope);
    scope.withTypeProvider<TypeBoxTypeProvider>().delete(
      '/admin-api/groups/:groupId/settings/tee-authoring-policy',
      { schema: { params: GroupParams } },
      async (req, reply) => {
        await settings.setAuthoringPolicy(group(req.params.groupId), [], optionalProof(req.body));
        return none(reply);
      },
    );
  });

  const metadataRoutes = <P extends typeof GroupParams | typeof MemberParams | typeof ContextParams>(
    path: string,
    params: P,
    target: (p: Record<string, string>) => MetadataTarget,
  ) => {
    app.get(path, { schema: { params } }, async (req) => {
      const p = req.params as Record<string, string>;
      return { data: settings.metadata(group(p.groupId), target(p)) };
    });
    app.put(path, { schema: { params, body: SetMetadataRequest } }, async (req, reply) => {
      const p = req.params as Record<string, string>;
      await settings.setMetadata(group(p.groupId), target(p), { name: req.body.name ?? undefined, data: req.body.data });
      return none(reply);
    });
  };
  metadataRoutes('/admin-api/groups/:groupId/metadata', GroupParams, () => ({ target: 'group' }));
  metadataRoutes('/admin-api/groups/:groupId/members/:account/metadata', MemberParams, (p) => ({ target: 'member', account: account(p.account) }));
  metadataRoutes('/admin-api/groups/:groupId/contexts/:contextId/metadata', ContextParams, (p) => ({
    target: 'context',
    contextId: requireId(p.contextId, 'context id'),
  }));
}
