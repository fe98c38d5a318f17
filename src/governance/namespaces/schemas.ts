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

export const NamespaceParams = Type.Object({ namespaceId: Type.String({ description: 'namespace id (its root group id): 64 hex, base58 accepted' }) });

/** `GET /namespaces/for-application/{applicationId}`: the id is checked by the handler (400 naming it). */
export const ForApplicationParams = Type.Object({ applicationId: Type.String({ description: 'application id: 64 hex (base58 accepted)' }) });

// ---- optional bodies the handlers parse themselves (documented, not validated) ----------------

export const CreateSubgroupDoc = Type.Object(
  {
    groupName: Type.Optional(Type.String({ description: 'older clients send `name` or `alias`: read as the name' })),
    visibility: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('restricted')], { description: 'case-insensitive; absent = open' })),
  },
  { description: 'optional: no body or {} create an open, unnamed subgroup; `groupId` is refused (ids are derived)' },
);

export const RevokeDeviceDoc = Type.Object({
  deviceId: Type.String({ description: 'a device of this node\'s account, 64 hex' }),
  proof: Type.Optional(Type.String({ minLength: 1, description: 'hex borsh SignedDeviceRevocation; omit it rather than send it empty' })),
});

export const LinkDeviceDoc = Type.Object({
  credential: Type.String({ minLength: 1, description: 'hex borsh AccountProof<DeviceCert>' }),
  scope: Type.String({ minLength: 1, description: 'hex borsh AccountProof<DeviceScope>' }),
});

export const AdmitDoc = Type.Object({
  invitation: Type.Unknown({ description: 'the SignedGroupOpenInvitation the joiner claims' }),
  signedOp: Type.String({ minLength: 1, description: "hex of the joiner's self-signed namespace join op" }),
});
