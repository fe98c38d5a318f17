/** Request schemas of the auth surface (auth spec "Request bodies"; auth-wire §2). */
import { Type } from 'typebox';

const NonEmpty = Type.String({ minLength: 1 });
const Strings = Type.Array(Type.String());

export const TokenRequest = Type.Object({
  auth_method: NonEmpty,
  public_key: NonEmpty,
  client_name: NonEmpty,
  permissions: Type.Optional(Strings),
  timestamp: Type.Integer({ minimum: 0 }),
  provider_data: Type.Unknown(),
});

export const RefreshRequest = Type.Object({ access_token: NonEmpty, refresh_token: NonEmpty });

export const LogoutRequest = Type.Object({ refresh_token: NonEmpty });

export const MockTokenRequest = Type.Object({
  client_name: NonEmpty,
  permissions: Type.Optional(Strings),
  node_url: Type.Optional(Type.String()),
  access_token_expiry: Type.Optional(Type.Integer({ minimum: 0 })),
  refresh_token_expiry: Type.Optional(Type.Integer({ minimum: 0 })),
});

export const RevokeRequest = Type.Object({ client_id: NonEmpty });

export const CreateKeyRequest = Type.Object({
  public_key: Type.String(),
  auth_method: Type.String(),
  provider_data: Type.Unknown(),
  target_node_url: Type.Optional(Type.String()),
});

export const UpdatePermissionsRequest = Type.Object({
  add: Type.Optional(Strings),
  remove: Type.Optional(Strings),
});

export const ClientKeyRequest = Type.Object({
  context_id: Type.Optional(Type.String()),
  context_identity: Type.Optional(Type.String()),
  permissions: Type.Optional(Strings),
  target_node_url: Type.Optional(Type.String()),
  application_id: Type.Optional(Type.String()),
  ttl_secs: Type.Optional(Type.Integer()),
});

export const KeyIdParams = Type.Object({ key_id: NonEmpty });
export const ClientParams = Type.Object({ key_id: NonEmpty, client_id: NonEmpty });
