/** `POST /groups/{groupId}/signing-key` (admin spec "Groups"): parse, call, shape `{data: {publicKey}}`. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { requireId } from '../../crypto/ids.ts';
import { Data, Errors, Hex32 } from '../../http/response-schemas.ts';
import { GroupParams } from '../groups/schemas.ts';
import type { SigningKeyService } from './service.ts';

/** The value is read by the service, so a bad key's 400 names the rule without echoing the secret. */
const RegisterGroupSigningKeyRequest = Type.Object({ signingKey: Type.Unknown({ description: 'the Ed25519 secret key: 64 hex (or 128 with its public key)' }) });
const RegisterGroupSigningKeyAnswer = Data(Type.Object({ publicKey: Hex32('the registered key’s public half') }));

export function registerSigningKeyRoutes(root: FastifyInstance, deps: { signingKeys: SigningKeyService }): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const schema = {
    summary: 'Register a signing key of this node’s account for a group (kept node-local)',
    params: GroupParams,
    body: RegisterGroupSigningKeyRequest,
    response: { 200: RegisterGroupSigningKeyAnswer, ...Errors(400, 401, 403, 404) },
  };
  app.post('/admin-api/groups/:groupId/signing-key', { schema }, async (req) => ({
    data: await deps.signingKeys.register(requireId(req.params.groupId, 'group id'), req.body.signingKey),
  }));
}
