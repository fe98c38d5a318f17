/**
 * Request and response schemas of the identity and account routes (admin spec "NodeIdentity",
 * "Account and devices"; admin-wire-b §3); widths are checked in the handlers. `GET /account/devices`
 * and `GET /account/applications` are flat on the wire; every other answer is a `{data}` envelope.
 */
import { Type, type TSchema } from 'typebox';
import { Data, Hex32 } from '../http/response-schemas.ts';

export const DeviceParams = Type.Object({ deviceId: Type.String({ description: 'a device of this node\'s account: 64 hex (base58 accepted)' }) });

export const PairInitRequest = Type.Object({
  accountRootPublicKey: Type.String(),
  namespaces: Type.Optional(Type.Array(Type.String())),
  accountNamespace: Type.Optional(Type.String()),
});

export const PairCompleteRequest = Type.Object({
  deviceId: Type.String(),
  kemPublicKey: Type.String(),
  signPublicKey: Type.String(),
  statement: Type.String(),
  confirmationCode: Type.String(),
  applications: Type.Optional(Type.Array(Type.String())),
});

/** DeviceScope: the bare string `all` or `{only: [...]}` (serde externally tagged) */
export const ScopeRequest = Type.Object({
  scope: Type.Union([Type.Literal('all'), Type.Object({ only: Type.Array(Type.String()) }, { additionalProperties: false })]),
});

export const LabelRequest = Type.Object({ label: Type.String() });

/** spec: `domain, text`; `payload` is what clients built against the reference send */
export const SignWithRootRequest = Type.Object({
  domain: Type.String(),
  text: Type.Optional(Type.String()),
  payload: Type.Optional(Type.String()),
});

/** The optional relink body, parsed by the handler (an absent body is `[]`): documented, not validated. */
export const RelinkDoc = Type.Object(
  { applications: Type.Optional(Type.Array(Type.String(), { description: 'add-only; empty or absent = every application' })) },
  { description: 'optional: no body means every application' },
);

// ---- responses (documentation and conformance tests; serialisation stays exact) ---------------

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Account = Hex32('the account id');
const Device = Hex32('the device id');

/** NodeIdentity (admin spec): the only mapping from this node to its account. */
export const IdentityAnswer = Data(
  Type.Object({
    accountId: Account,
    deviceId: Nullable(Device),
    publicKey: Hex32("the node's signing key"),
    accountRootPublicKey: Type.Optional(Hex32()),
    holdsAccountRoot: Type.Boolean({ description: 'this node holds the account root and can certify another device' }),
    deviceCertified: Type.Optional(Type.Boolean()),
    deviceAgreementKey: Type.Optional(Nullable(Hex32('X25519 key-agreement public key'))),
    accountNamespaceId: Type.Optional(Nullable(Hex32('the hidden account namespace'))),
    revokedFrom: Type.Optional(
      Type.Object({ accountId: Account, deviceId: Device }, { description: 'omitted until a revocation of this node\'s device reaches it' }),
    ),
  }),
);

const AppIds = (description: string) => Type.Array(Hex32(), { description });

/** Flat `{devices}`: every device the account certified, revoked ones included. */
export const DevicesAnswer = Type.Object({
  devices: Type.Array(
    Type.Object({
      deviceId: Device,
      signingKey: Hex32(),
      isSelf: Type.Boolean({ description: "true only on this node's own device" }),
      revoked: Type.Boolean(),
      applications: AppIds('the scope; empty = every application'),
      namespaces: Type.Array(Hex32(), { description: 'namespaces holding a live binding for the device' }),
      label: Type.Optional(Type.String({ description: 'omitted while unnamed' })),
      labelEpoch: Type.Integer({ minimum: 0, maximum: 0xffffffff, description: 'u32: orders a label against a concurrent rename' }),
    }),
  ),
});

/** Flat `{applications}`: derived from the namespaces the account takes part in. */
export const ApplicationsAnswer = Type.Object({
  applications: Type.Array(Type.Object({ applicationId: Hex32(), namespaces: Type.Array(Hex32()) })),
});

export const PairInitAnswer = Data(
  Type.Object({
    accountId: Account,
    deviceId: Device,
    kemPublicKey: Hex32('X25519'),
    signPublicKey: Hex32('Ed25519'),
    statement: Type.String({ pattern: '^[0-9a-f]{144}$', description: '72 bytes: u64 BE issued-at seconds ‖ Ed25519 signature; opaque' }),
    confirmationCode: Type.String({ pattern: '^[0-9A-F]{4}(-[0-9A-F]{4}){3}$' }),
  }),
);

export const PairCompleteAnswer = Data(
  Type.Object({
    accountId: Account,
    deviceId: Device,
    keyDelivered: Type.Boolean({ description: 'false is not a failure: the device re-requests its key' }),
    confirmationCode: Type.String(),
    credential: Type.String({ pattern: '^[0-9a-f]+$', description: 'hex borsh AccountProof<DeviceCert>' }),
  }),
);

const LinkOutcome = {
  linkedIn: Type.Array(Type.Object({ namespaceId: Hex32(), keyDelivered: Type.Boolean() })),
  skipped: Type.Array(
    Type.Object({
      namespaceId: Hex32(),
      reason: Type.Union([
        Type.Literal('outOfScope'),
        Type.Literal('alreadyBound'),
        Type.Literal('noScopeKey'),
        Type.Literal('revoked'),
        Type.Literal('ownDevice'),
        Type.Literal('failed'),
      ]),
    }),
  ),
};

export const RelinkAnswer = Data(Type.Object({ accountId: Account, deviceId: Device, applications: AppIds('the scope after the change; empty = every application'), ...LinkOutcome }));

export const RescopeAnswer = Data(
  Type.Object({
    accountId: Account,
    deviceId: Device,
    applications: AppIds('the new scope; empty = every application'),
    descoped: Type.Array(Type.Object({ namespaceId: Hex32(), keyRotated: Type.Boolean() }), { description: 'namespaces that lost the binding' }),
    ...LinkOutcome,
  }),
);

export const LabelAnswer = Data(
  Type.Object({ accountId: Account, deviceId: Device, label: Type.String(), labelEpoch: Type.Integer({ minimum: 0, maximum: 0xffffffff }) }),
);

export const SignWithRootAnswer = Data(
  Type.Object({
    rootPublicKey: Hex32(),
    signature: Type.String({ contentEncoding: 'base64', description: 'base64 of the 64-byte Ed25519 signature over domain bytes ‖ challenge' }),
    accountId: Account,
  }),
);
