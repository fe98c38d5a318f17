/**
 * Seal and ownership-proof routes (admin spec "Groups"; admin-wire-b §4.19–§4.20): parse, call,
 * shape. The seal answers `{data: SealedEnvelope}`; both proof routes answer the proof object flat
 * (no envelope), as the reference does.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { requireId } from '../../crypto/ids.ts';
import type { GovernanceRouteDeps } from '../routes.ts';
import { GroupParams, IssueNamespaceOwnershipProofRequest, IssueOwnershipProofRequest, SealParams, SealToAccountRequest } from './schemas.ts';
import { parsePlaintext, ProofsService } from './service.ts';

export function registerProofRoutes(root: FastifyInstance, deps: Pick<GovernanceRouteDeps, 'governance' | 'identity' | 'clock'>): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const proofs = new ProofsService(deps);

  app.post('/admin-api/groups/:groupId/accounts/:account/seal', { schema: { params: SealParams, body: SealToAccountRequest } }, async (req) => {
    const groupId = requireId(req.params.groupId, 'group id');
    const account = requireId(req.params.account, 'account');
    return { data: proofs.seal(groupId, account, parsePlaintext(req.body.plaintext)) };
  });

  app.post('/admin-api/groups/:groupId/issue-ownership-proof', { schema: { params: GroupParams, body: IssueOwnershipProofRequest } }, async (req) => {
    const { contextId, ...claim } = req.body;
    return proofs.issueOwnershipProof(requireId(req.params.groupId, 'group id'), requireId(contextId, 'context id'), claim);
  });

  app.post('/admin-api/groups/:groupId/issue-namespace-ownership-proof', { schema: { params: GroupParams, body: IssueNamespaceOwnershipProofRequest } }, async (req) => {
    return proofs.issueNamespaceOwnershipProof(requireId(req.params.groupId, 'group id'), req.body);
  });
}
