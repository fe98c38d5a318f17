/** Request and response schemas of the auth surface (auth spec "Request bodies"; auth-wire §1.2, §2). */
import { Type, type TSchema } from 'typebox';

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

// ---- Responses (OpenAPI, issue #6). Every auth handler answers `{data, error: null}` (auth-wire §1.2).

/** `{"data": T, "error": null}` — the auth handlers' success envelope. */
const AuthData = <T extends TSchema>(data: T, description?: string) =>
  Type.Object({ data, error: Type.Null() }, description ? { description } : {});

const UnixSecs = (description: string) => Type.Integer({ minimum: 0, description });
const NullableUnixSecs = (description: string) => Type.Union([UnixSecs(description), Type.Null()]);

/**
 * `{data: {access_token, refresh_token, error: null}, error: null}` — the answer of login, refresh
 * mock-token and client-key (auth-wire §2.2, §2.13; auth spec TokenResponse): nothing else. A minted
 * client key's id is its access token's `sub` (SDK `clientIdOf`).
 */
export const TokenPairResponse = AuthData(
  Type.Object({
    access_token: Type.String({ description: 'JWT, sent as Authorization: Bearer' }),
    refresh_token: Type.String({ description: 'JWT, single use, for POST /auth/refresh' }),
    error: Type.Optional(Type.Null()),
  }),
);

export const AuthHealthResponse = AuthData(
  Type.Object({
    status: Type.String({ description: '"alive", or "not_alive" when the storage probe fails' }),
    storage: Type.Boolean(),
    uptime_seconds: Type.Integer({ minimum: 0 }),
  }),
);

export const ProvidersResponse = AuthData(
  Type.Object({
    providers: Type.Array(
      Type.Object({
        name: Type.String(),
        type: Type.String(),
        description: Type.String(),
        configured: Type.Boolean({ description: 'a valid root key of this provider exists' }),
        config: Type.Object({}, { additionalProperties: true }),
      }),
    ),
    count: Type.Integer({ minimum: 0 }),
  }),
);

/** `{data: "", error: null}`; the outcome is the status and the X-Auth-User / X-Auth-Permissions headers. */
export const ValidateResponse = AuthData(Type.Literal(''), 'Valid: X-Auth-User names the key, X-Auth-Permissions lists the claims');

/** The login page reads these (web/login.html); the server itself reads only `callback-url`. */
const QueryText = (description: string) => Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { description }));
export const LoginPageQuery = Type.Object({
  'callback-url': QueryText('where the page sends the tokens; refused (400 page) unless loopback, this node or allow-listed'),
  permissions: QueryText('comma-separated permissions to request for a client key'),
  'context-id': QueryText('context the client key is bound to'),
  'context-identity': QueryText('identity within that context'),
  'application-id': QueryText('application the client key is bound to'),
  mode: QueryText('page mode'),
  reason: QueryText('why the caller sent the user here (token_revoked, token_reuse, token_expired, invalid_token, signed_out); shown as a fixed sentence'),
});

export const SuccessResponse = AuthData(Type.Object({ success: Type.Boolean() }));
export const RevokeResponse = AuthData(Type.Object({ success: Type.Boolean(), message: Type.String() }));

export const IdentityResponse = AuthData(
  Type.Object({
    service: Type.String(),
    version: Type.String(),
    authentication_mode: Type.String(),
    providers: Type.Array(Type.String()),
  }),
);

const RootKey = Type.Object({
  key_id: Type.String(),
  public_key: Type.String(),
  auth_method: Type.String(),
  created_at: UnixSecs('Unix seconds'),
  revoked_at: NullableUnixSecs('Unix seconds; null while active'),
  permissions: Type.Array(Type.String()),
});
export const RootKeysResponse = AuthData(Type.Array(RootKey), 'Root keys, active ones first, revoked ones included');

export const CreateKeyResponse = AuthData(Type.Object({ status: Type.Boolean(), message: Type.String() }));

export const DeleteKeyResponse = AuthData(
  Type.Union([
    Type.Object({ key_id: Type.String(), revoked_at: UnixSecs('Unix seconds') }),
    Type.Object({ status: Type.Literal(false), message: Type.String({ description: 'why nothing was revoked (the last active admin key)' }) }),
  ]),
);

export const PermissionsResponse = AuthData(Type.Object({ permissions: Type.Array(Type.String()) }));

const ClientKey = Type.Object({
  client_id: Type.String(),
  root_key_id: Type.String(),
  name: Type.String(),
  permissions: Type.Array(Type.String()),
  created_at: UnixSecs('Unix seconds'),
  revoked_at: NullableUnixSecs('Unix seconds; null while active'),
  expires_at: Type.Optional(NullableUnixSecs('hearth, with `?details=true` only: Unix seconds after which the key is invalid')),
  application_id: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'hearth, with `?details=true` only: the application the key is bound to' })),
  is_valid: Type.Boolean(),
});
/** `GET /admin/keys/clients?details=true`: hearth's opt-in for `expires_at` and `application_id`. */
export const ClientKeysQuery = Type.Object({ details: Type.Optional(Type.String({ description: '`true` (hearth): add expires_at and application_id to each key' })) });

export const ClientKeysResponse = AuthData(Type.Array(ClientKey), 'Client keys, revoked and expired ones included');

export const DeleteClientResponse = AuthData(Type.Object({ message: Type.String(), revoked_at: UnixSecs('Unix seconds') }));
