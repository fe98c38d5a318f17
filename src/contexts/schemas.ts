/**
 * Request schemas of the contexts routes (admin spec "Contexts"; admin-wire-a §4.3, §4.9). Fields
 * older clients still send (e.g. `protocol`, `executorPublicKey`, `requester`) are accepted and
 * ignored (reference README precedence rule 3); ids are checked by the handlers so the message says
 * which id is wrong. Response schemas document the wire (issue #6); they never drive serialisation.
 */
import { Type } from 'typebox';
import { Data, Hex32, U64 } from '../http/response-schemas.ts';

const Byte = Type.Integer({ minimum: 0, maximum: 255 });

export const CreateContextRequest = Type.Object({
  groupId: Type.String(),
  applicationId: Type.Optional(Type.String()),
  initializationParams: Type.Optional(Type.Array(Byte)),
  contextSeed: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  identitySecret: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  serviceName: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
});

export const UpdateApplicationRequest = Type.Object({ applicationId: Type.String() });

export const QueryContextRequest = Type.Object({ method: Type.String(), argsJson: Type.Optional(Type.Unknown()) });

export const ContextParams = Type.Object({ contextId: Type.String() });
export const ApplicationParams = Type.Object({ applicationId: Type.String() });
export const ListQuery = Type.Object({ offset: Type.Optional(Type.String()), limit: Type.Optional(Type.String()) });

/** Documentation only: `resync` reads its optional body by hand (routes.ts). */
export const ResyncRequest = Type.Object({ force: Type.Optional(Type.Boolean({ description: 'accepted; local state is kept without peers' })) });

/** Documentation only: `/jsonrpc` parses its body with the u64-exact reader (rpc.ts). */
export const JsonRpcRequest = Type.Object({
  jsonrpc: Type.Literal('2.0'),
  id: Type.Union([Type.String(), Type.Integer(), Type.Null()]),
  method: Type.String({ description: 'execute, sync_status, or a method another domain adds (set_ephemeral)' }),
  params: Type.Optional(Type.Unknown({ description: 'execute: {contextId, method, argsJson}' })),
});

// ---- responses (admin-wire-a §4, §7) -----------------------------------------------------------

const Key = (description?: string) => Hex32(description);

/**
 * admin spec "Context" (admin-wire-a §4.1): absent fields are omitted, never null. `name` is the
 * reference's (core's Context carries it only when a name was set).
 */
const contextFields = {
  id: Key(),
  applicationId: Key(),
  serviceName: Type.Optional(Type.String()),
  contextStateHash: Key('64 `f` before the context has state on this node'),
  dagHeads: Type.Optional(Type.Array(Type.Array(Type.Integer({ minimum: 0, maximum: 255 })), { description: 'each head as 32 bytes; omitted when empty' })),
  applicationVersion: Type.Optional(Type.String()),
  name: Type.Optional(Type.String({ description: 'omitted unless the context was given a name' })),
};
export const Context = Type.Object(contextFields);
/** ContextWithGroup: an element of context listings, the Context plus its owning group. */
export const ContextRow = Type.Object({ ...contextFields, groupId: Type.Optional(Key()) });

export const CreatedContext = Data(
  Type.Object({ contextId: Key(), memberPublicKey: Key(), groupId: Key(), groupCreated: Type.Boolean() }),
);
export const ContextListAnswer = Data(Type.Object({ contexts: Type.Array(ContextRow) }));
/** `GET /contexts/{id}`: the spec's Context (no `groupId`: only listings carry ContextWithGroup). */
export const ContextAnswer = Data(Context);

/**
 * hearth's sync status of a context on this node (docs/sync.md "Honest sync status"). Served only on
 * hearth's own routes (`GET /contexts/{id}/sync`, `GET /contexts/sync`), never inside the spec's
 * Context: strict clients refuse keys their types do not declare.
 */
export const ContextSyncStatus = Type.Object(
  {
    contextId: Key(),
    state: Type.Union(
      [Type.Literal('idle'), Type.Literal('waitingForPeers'), Type.Literal('syncing'), Type.Literal('receivingSnapshot'), Type.Literal('backingOff')],
      { description: 'what sync is doing for the context now' },
    ),
    caughtUp: Type.Boolean({ description: 'nothing this node has heard of is missing' }),
    behind: Type.Integer({ minimum: 0, description: 'deltas known to exist that this node does not hold' }),
    pending: Type.Integer({ minimum: 0, description: 'deltas held until their parents or key arrive' }),
    quarantined: Type.Integer({ minimum: 0, description: 'deltas refused for good (bad seal, failed apply)' }),
    reasons: Type.Array(
      Type.Object({
        reason: Type.String({
          description:
            'no_peers, parents_pending, parents_expired, key_unavailable, decrypt_failed, apply_failed, apply_retrying, not_initialized, pull_failed, upgrade_pending, removed, fetching_application or application_unavailable',
        }),
        detail: Type.String(),
        at: Type.String({ description: 'when it was first noted (RFC 3339)' }),
      }),
      { description: 'why the context is (or was lately) behind' },
    ),
    peers: Type.Array(Type.Object({ peer: Type.String(), lastHeardAt: Type.String() }), { description: 'peers heard from about this context, latest first (at most 16)' }),
    lastSyncAt: Type.Union([Type.String(), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    failureCount: Type.Integer({ minimum: 0, description: 'failed pulls since the last one that succeeded' }),
  },
  { description: "hearth's sync status of one context on this node" },
);
export const SyncStatusAnswer = Data(ContextSyncStatus);
export const SyncStatusListAnswer = Data(Type.Object({ contexts: Type.Array(ContextSyncStatus) }));
/** Flat, with the reference's snake_case `application_id`. */
export const WithExecutorsAnswer = Type.Object({
  contexts: Type.Array(
    Type.Object({ id: Key(), application_id: Key(), contextStateHash: Key(), executors: Type.Array(Key()) }),
  ),
});
export const DeletedAnswer = Data(Type.Object({ isDeleted: Type.Boolean({ description: 'false for an unknown context' }) }));
export const GroupAnswer = Data(Type.Union([Key('the owning group'), Type.Null()]));
export const StorageAnswer = Data(Type.Object({ sizeInBytes: U64('bytes of state; 0 for an unknown context') }));
export const IdentitiesAnswer = Data(
  Type.Object({
    identities: Type.Array(Key()),
    identitiesOf: Type.Union([Type.Literal('members'), Type.Literal('node'), Type.Literal('caller')]),
  }),
);
export const JoinedAnswer = Data(Type.Object({ contextId: Key(), memberPublicKey: Key() }));
/** Flat, as the reference. */
export const ResyncAnswer = Type.Object({ contextId: Key(), resyncStarted: Type.Boolean() });
export const IntentsAnswer = Data(
  Type.Object({
    executorAccount: Key(),
    executorKey: Key(),
    releaseBytecodeId: Type.Optional(Key()),
    releaseVersion: Type.Optional(Type.String()),
    canAuthorOnBehalf: Type.Boolean({ description: 'false is an answer, not an error' }),
    groupId: Key(),
    grantedOnGroupId: Type.Optional(Key()),
  }),
);
export const QueryAnswer = Data(Type.Object({ output: Type.Unknown({ description: 'the method’s return value (null for none)' }) }));
export const NewIdentityAnswer = Data(Type.Object({ publicKey: Key() }));

/** A handled call is 200 either way: `result`, or `error: {type, data?}` (RpcMethodError). */
export const JsonRpcAnswer = Type.Union([
  Type.Object({
    jsonrpc: Type.Literal('2.0'),
    id: Type.Union([Type.String(), Type.Integer(), Type.Null()]),
    result: Type.Unknown({ description: 'execute: {output}' }),
  }),
  Type.Object({
    jsonrpc: Type.Literal('2.0'),
    id: Type.Union([Type.String(), Type.Integer(), Type.Null()]),
    error: Type.Object({ type: Type.String({ description: 'FunctionCallError, ContextNotFound, Uninitialized, …' }), data: Type.Optional(Type.Unknown()) }),
  }),
]);

// ---- hearth's raw state rows (issue #25 §4; raw-state.ts) ---------------------------------------

const HexKey = (description: string) => Type.String({ pattern: '^([0-9a-f]{2})*$', description });

/** Query strings are read as text and checked by the handler, so the 400 names the parameter. */
export const RawStateQuery = Type.Object({
  after: Type.Optional(Type.String({ description: 'hex key: list rows after this one (the previous page’s `next`)' })),
  limit: Type.Optional(Type.String({ description: 'rows in the page, 1 to 500 (default 100)' })),
});
export const RawStateValueQuery = Type.Object({ key: Type.String({ description: 'the row’s key, hex' }) });

export const RawStatePageAnswer = Data(
  Type.Object({
    entries: Type.Array(
      Type.Object({
        key: HexKey('the guest’s key'),
        size: Type.Integer({ minimum: 0, description: 'bytes of the value' }),
        preview: Type.String({ description: 'the first 64 bytes of the value, as text or hex' }),
        previewEncoding: Type.Union([Type.Literal('utf8'), Type.Literal('hex')], { description: 'utf8 when those bytes are printable UTF-8' }),
      }),
    ),
    next: Type.Union([HexKey('pass as `after` for the next page'), Type.Null()], { description: 'null on the last page' }),
  }),
  "hearth: a page of a context's raw state rows, in key order",
);

export const RawStateValueAnswer = Data(
  Type.Object({
    key: HexKey('the row’s key'),
    size: Type.Integer({ minimum: 0, description: 'bytes of the whole value' }),
    encoding: Type.Literal('base64'),
    value: Type.String({ description: 'the value in base64: its first 1 MiB when truncated' }),
    truncated: Type.Boolean({ description: 'true when the value is longer than 1 MiB and was cut' }),
  }),
  "hearth: one raw state row's value",
);
