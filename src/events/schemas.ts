/**
 * Schemas of the event-stream routes and the presence-intents route (admin spec "Events",
 * Contexts table; admin-wire-a §8). Every body here is parsed by hand (u64-exact numbers, the
 * session id as text or number, messages tests rely on), so the request schemas only document
 * (`config.docs.body`); the response schemas document the wire (issue #6) and never drive
 * serialisation.
 */
import { Type } from 'typebox';
import { Empty, Hex32, Text, U64 } from '../http/response-schemas.ts';

const IdList = (what: string) => Type.Optional(Type.Array(Type.String({ description: `${what} id: 64 hex (base58 accepted)` })));

/** Documentation only: `parseSubscriptionRequest` (service.ts) reads it. */
export const SubscriptionRequest = Type.Object({
  id: Type.Union([Type.String({ pattern: '^\\d{1,20}$' }), Type.Integer({ minimum: 0 })], { description: 'the SSE session id (from the connect frame)' }),
  method: Type.Union([Type.Literal('subscribe'), Type.Literal('unsubscribe')]),
  params: Type.Optional(Type.Object({ contextIds: IdList('context'), groupIds: IdList('group') })),
});

/** Documentation only: `parsePresenceIntentRequest` (presence-intents.ts) reads it, u64 exact. */
export const PresenceIntentRequest = Type.Object({
  state: Type.Union([Type.String({ description: 'hex of the presence slice (≤ 16 384 bytes)' }), Type.Null()], { description: 'null retracts' }),
  seq: U64('above the last accepted from the device for this context'),
  sentAtMs: U64('the device clock, within 7 s of the node'),
  signature: Type.String({ description: 'hex, 64 bytes: Ed25519 over the calimero/presence/1 statement' }),
  authorProof: Type.String({ description: 'hex of the borsh AccountProof<DeviceCert>' }),
});

export const ContextIdParams = Type.Object({ contextId: Type.String({ description: 'context id: 64 hex (base58 accepted)' }) });
export const SessionParams = Type.Object({ sid: Type.String({ description: 'SSE session id (decimal u64)' }) });

// ---- responses ------------------------------------------------------------------------------------

export const EventStreamAnswer = Text(
  'text/event-stream',
  'The live stream: a connect frame `{type:"connect", session_id, reconnect}`, then `{result: <event>}` frames, heartbeats, gap and close frames (ids `<session>-<n>` for Last-Event-ID resume)',
);

export const SubscriptionAnswer = Type.Object({
  result: Type.Union([
    Type.Object({
      status: Type.Literal('subscribed'),
      contexts: Type.Array(Hex32(), { description: 'the contexts kept (ids the token may not observe are dropped)' }),
      groups: Type.Array(Hex32()),
    }),
    Type.Object({
      status: Type.Literal('unsubscribed'),
      unsubscribed: Type.Array(Hex32(), { description: 'the context and group ids that were subscribed and no longer are' }),
      requested: Type.Array(Hex32(), { description: 'the context and group ids asked for' }),
    }),
  ]),
});

export const SessionAnswer = Type.Object({
  result: Type.Object({
    session_id: U64(),
    subscriptions: Type.Array(Hex32(), { description: 'subscribed contexts, then subscribed groups' }),
    event_counter: Type.Integer({ minimum: 0, description: 'the number of the last frame of the session' }),
    status: Type.Union([Type.Literal('active'), Type.Literal('persisted')]),
  }),
});

/** A successful `/ws` upgrade has no body: documented without content. */
export const WebSocketUpgrade = {
  description:
    'Switching Protocols: a WebSocket of JSON text frames. Client `{id, method: "subscribe"|"unsubscribe"|"execute", params}`; replies `{id, result}` or `{id, error: {type, data}}`; pushes `{id: null, result: <event>}`',
  content: {},
};

export const PresenceIntentAccepted = Empty('Accepted: the Ephemeral frame is published');
