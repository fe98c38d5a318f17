/**
 * Root-guarded owner routes (admin-wire-b §5.1, §2.13, §4.21): parse, call, answer an empty 200
 * (spec: none). `owner-delete`'s body is optional: no body, an empty body or `{}` all mean "no proof".
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { parseId, requireId } from '../../crypto/ids.ts';
import { badRequest } from '../../errors.ts';
import type { GovernanceRouteDeps } from '../route-deps.ts';
import { ChangeAdminRequest, OwnerDeleteRequest, TransferOwnershipRequest } from './schemas.ts';
import { emptyJsonAsNoBody } from '../../http/body.ts';
import { Empty, Errors } from '../../http/response-schemas.ts';
import { emptyOk } from '../../http/reply.ts';
import { GroupParams } from '../groups/schemas.ts';
import { NamespaceParams } from '../namespaces/schemas.ts';


function accountField(value: string, name: string): string {
  const id = parseId(value);
  if (!id) throw badRequest(`${name} must be 64 hex chars (32 bytes)`);
  return id;
}

/** The optional `{rootProof?}` body of owner-delete (§5.1); absent or `{}` = no proof. */
function optionalProofBody(body: unknown): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('Invalid JSON data: expected an object');
  const proof = (body as { rootProof?: unknown }).rootProof;
  if (proof !== undefined && typeof proof !== 'string') throw badRequest('Invalid JSON data: rootProof must be a string');
  return proof;
}

export function registerOwnerRoutes(root: FastifyInstance, deps: GovernanceRouteDeps): void {
  void root.register(async (scope) => {
    // an optional body may arrive empty with a JSON content type: read it as no body
    emptyJsonAsNoBody(scope);
    routes(scope, deps);
  });
}

function routes(root: FastifyInstance, deps: GovernanceRouteDeps): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { owner, namespaces } = deps;

  // root-guarded: 403 without a usable proof, 409 on a stale counter or an unfit target (admin-wire-b §5.4)
  const guarded = { 200: Empty('Done (spec: none): an empty 200'), ...Errors(400, 401, 403, 404, 409) };
  const transferSchema = { summary: 'Transfer group ownership to an admin (root-guarded)', params: GroupParams, body: TransferOwnershipRequest, response: guarded };
  app.post('/admin-api/groups/:groupId/transfer-ownership', { schema: transferSchema }, async (req, reply) => {
    const groupId = requireId(req.params.groupId, 'group id');
    await owner.transferOwnership(groupId, accountField(req.body.newOwner, 'newOwner'), req.body.rootProof);
    return emptyOk(reply);
  });

  const deleteSchema = { summary: 'Delete a subgroup without contexts as its owner (root-guarded)', params: GroupParams, response: guarded };
  app.post('/admin-api/groups/:groupId/owner-delete', { schema: deleteSchema, config: { docs: { body: OwnerDeleteRequest } } }, async (req, reply) => {
    const groupId = requireId(req.params.groupId, 'group id');
    await owner.ownerDelete(groupId, optionalProofBody(req.body));
    return emptyOk(reply);
  });

  const changeAdmin = {
    summary: 'Changes the namespace admin (owner only, root-guarded); empty 200',
    params: NamespaceParams,
    body: ChangeAdminRequest,
    response: { 200: Empty(), ...Errors(400, 401, 403, 404, 409) },
  };
  app.post('/admin-api/namespaces/:namespaceId/admin', { schema: changeAdmin }, async (req, reply) => {
    const nsId = requireId(req.params.namespaceId, 'namespace id');
    namespaces.get(nsId); // outside the session's scope → 404
    await owner.changeNamespaceAdmin(nsId, accountField(req.body.newAdmin, 'newAdmin'), req.body.rootProof);
    return emptyOk(reply);
  });
}
