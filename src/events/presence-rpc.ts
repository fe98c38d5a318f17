/**
 * The JSON-RPC method `set_ephemeral` (admin-wire-a §7): `params = {contextId, state: [u8]}`, the
 * author resolved on the node (its own identity in the context), answer `{}`. Errors as the
 * reference types them: `ParseError` for bad params, `Unauthorized` for a client key bound
 * elsewhere, `NoOwnedIdentity` when the node has no identity in the context, `SliceTooLarge`
 * `{size, max}` above 16 384 bytes. Contributed to `/jsonrpc` through `contexts/rpc-methods.ts`.
 */
import { mayActOn } from '../auth/index.ts';
import { parseId } from '../crypto/ids.ts';
import { RpcMethodError, type RpcMethodHandler } from '../contexts/index.ts';
import { PRESENCE_MAX_BYTES } from './constants.ts';
import type { PresenceService } from './presence.ts';

export interface PresenceRpcDeps {
  /**
   * The node's own identity (64 hex public key) in a context, null when it has none there. Also
   * gives the context's application, for application-bound client keys.
   */
  ownIdentity(contextId: string): Promise<{ author: string; applicationId: string | null } | null>;
}

/**
 * @example
 * ```ts
 * const methods = presenceRpcMethods(presence, { ownIdentity: async (ctx) => ({ author: identity.publicKey, applicationId: null }) });
 * await methods.set_ephemeral({ params: { contextId, state: [123, 125] }, principal, signal });
 * ```
 */
export function presenceRpcMethods(presence: PresenceService, deps: PresenceRpcDeps): Record<string, RpcMethodHandler> {
  return {
    set_ephemeral: async ({ params, principal }) => {
      const { contextId, state } = parseParams(params);
      const own = await deps.ownIdentity(contextId);
      if (!mayActOn(principal.binding, { kind: 'context', id: contextId }, { contextApplication: own?.applicationId ?? null })) {
        throw new RpcMethodError('Unauthorized', undefined);
      }
      if (!own) throw new RpcMethodError('NoOwnedIdentity', undefined);
      presence.set(contextId, own.author, state);
      return {};
    },
  };
}

function parseParams(params: unknown): { contextId: string; state: Uint8Array } {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) throw new RpcMethodError('ParseError', 'params must be an object');
  const p = params as Record<string, unknown>;
  const contextId = typeof p.contextId === 'string' ? parseId(p.contextId) : undefined;
  if (!contextId) throw new RpcMethodError('ParseError', 'params.contextId must be a context id (64 hex characters)');
  if (!Array.isArray(p.state)) throw new RpcMethodError('ParseError', 'params.state must be an array of bytes');
  if (p.state.length > PRESENCE_MAX_BYTES) throw new RpcMethodError('SliceTooLarge', { size: p.state.length, max: PRESENCE_MAX_BYTES });
  const bytes = new Uint8Array(p.state.length);
  p.state.forEach((b, i) => {
    if (typeof b !== 'number' || !Number.isInteger(b) || b < 0 || b > 255) throw new RpcMethodError('ParseError', `params.state[${i}] is not a byte`);
    bytes[i] = b;
  });
  return { contextId, state: bytes };
}
