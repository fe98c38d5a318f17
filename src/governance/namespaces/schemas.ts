/** Request schemas of the namespace routes (admin-wire-b §2). */
import { Type } from 'typebox';

/** an id on the wire: 64 hex or base58 of 32 bytes (as `parseId` accepts) */
export const Hex64 = Type.String({ pattern: '^[0-9a-fA-F]{64}$|^[1-9A-HJ-NP-Za-km-z]{32,44}$' });

/** older clients also send `upgradePolicy` and `alias`: accepted and ignored (README rule 3) */
export const CreateNamespaceRequest = Type.Object({
  applicationId: Hex64,
  name: Type.Optional(Type.String()),
  alias: Type.Optional(Type.String()),
  appKey: Type.Optional(Hex64),
  bytecodeId: Type.Optional(Hex64),
});

export const NamespaceParams = Type.Object({ namespaceId: Type.String() });
