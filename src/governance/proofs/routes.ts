/**
 * Seal and ownership-proof routes (admin spec "Groups"; admin-wire-b §4.19–§4.20): parse, call,
 * shape. The seal answers `{data: SealedEnvelope}`; both proof routes answer the proof object flat
 * (no envelope), as the reference does.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireId } from '../../crypto/ids.ts';
import type { GovernanceRouteDeps } from '../route-deps.ts';
import { Errors } from '../../http/response-schemas.ts';
import {
  IssueNamespaceOwnershipProofRequest,
  IssueOwnershipProofRequest,
  NamespaceOwnershipProofAnswer,
  OwnershipProofAnswer,
  SealedEnvelopeAnswer,
  SealParams,
  SealToAccountRequest,
} from './schemas.ts';
import { parsePlaintext, ProofsService } from './service.ts';
import { GroupParams } from '../groups/schemas.ts';

export function registerProofRoutes(root: FastifyInstance, deps: Pick<GovernanceRouteDeps, 'governance' | 'identity' | 'clock'>): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const proofs = new ProofsService(deps);

  const refusals = Errors(400, 401, 403, 404);
  const sealSchema = {
    summary: 'Seal bytes to a member account’s current root',
    params: SealParams,
    body: SealToAccountRequest,
    response: { 200: SealedEnvelopeAnswer, ...refusals },
  };
  app.post('/admin-api/groups/:groupId/accounts/:account/seal', { schema: sealSchema }, async (req) => {
    const groupId = requireId(req.params.groupId, 'group id');
    const account = requireId(req.params.account, 'account');
    return { data: proofs.seal(groupId, account, parsePlaintext(req.body.plaintext)) };
  });

  const proofSchema = {
    summary: 'Sign an ownership claim about a context (flat)',
    params: GroupParams,
    body: IssueOwnershipProofRequest,
    response: { 200: OwnershipProofAnswer, ...refusals },
  };
  app.post('/admin-api/groups/:groupId/issue-ownership-proof', { schema: proofSchema }, async (req) => {
    const { contextId, ...claim } = req.body;
    return proofs.issueOwnershipProof(requireId(req.params.groupId, 'group id'), requireId(contextId, 'context id'), claim);
  });

  const nsProofSchema = {
    summary: 'Sign an ownership claim about the whole namespace (flat)',
    params: GroupParams,
    body: IssueNamespaceOwnershipProofRequest,
    response: { 200: NamespaceOwnershipProofAnswer, ...refusals },
  };
  app.post('/admin-api/groups/:groupId/issue-namespace-ownership-proof', { schema: nsProofSchema }, async (req) => {
    return proofs.issueNamespaceOwnershipProof(requireId(req.params.groupId, 'group id'), req.body);
  });
}
