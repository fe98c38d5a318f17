/** Request schemas of the account routes (admin-wire-b §3); widths are checked in the handlers. */
import { Type } from 'typebox';

export const DeviceParams = Type.Object({ deviceId: Type.String() });

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
