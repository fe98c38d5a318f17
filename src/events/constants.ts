/**
 * Tunables and protocol constants of the live event stream (admin spec "Events"; admin-wire-a §8;
 * docs/events.md). Each value cites where it comes from: the reference node, the spec, or our own
 * resume contract (documented in docs/events.md, "Resume contract").
 */

/** `retry:` hint on the connect frame (spec Limits "Event reconnect delay"; reference SSE_RETRY_TIMEOUT_MS). */
export const SSE_RETRY_MS = 3000;

/** A `:` comment frame after this much idle time (reference: axum KeepAlive default, 15 s). */
export const SSE_HEARTBEAT_MS = 15_000;

/** Frames kept per SSE session for `Last-Event-ID` resume (ours; docs/events.md). */
export const REPLAY_BUFFER_FRAMES = 1024;

/**
 * Frames a connection may lag behind its session before it is dropped as a slow consumer (ours).
 * Smaller than the replay buffer, so a dropped consumer that reconnects promptly resumes losslessly.
 */
export const CONNECTION_QUEUE_FRAMES = 256;

/** How long a closing connection may take to flush its last frame before its socket is destroyed. */
export const CLOSE_FLUSH_MS = 2000;

/** A session with no connection for this long is forgotten (reference SESSION_EXPIRY_SECS, 24 h). */
export const SESSION_IDLE_MS = 24 * 60 * 60 * 1000;

/** Most sessions kept at once; beyond it the longest-detached one is forgotten (ours). */
export const MAX_SESSIONS = 10_000;

/** How often detached sessions and expired presence are swept. */
export const SWEEP_INTERVAL_MS = 1000;

/** Most context plus group ids one session or socket may subscribe to (ours; bounds memory). */
export const MAX_SUBSCRIPTIONS = 4096;

/** WebSocket heartbeat (reference ws.rs): a Ping every 30 s, Close 1002 "Ping timeout" without a Pong in 10 s. */
export const WS_PING_INTERVAL_MS = 30_000;
export const WS_PONG_TIMEOUT_MS = 10_000;

/** Largest inbound WebSocket message (reference: 16 MiB). */
export const WS_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** Bytes a WebSocket may have queued unsent before it is dropped as a slow consumer (ours). */
export const WS_MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** Close code for a dropped slow WebSocket consumer (RFC 6455 1013 "Try Again Later"). */
export const WS_CLOSE_SLOW_CONSUMER = 1013;

/** Largest presence slice (reference `set_ephemeral`: SliceTooLarge above 16 384 bytes). */
export const PRESENCE_MAX_BYTES = 16_384;

/** A slot heard from elsewhere (a peer or a relay) expires after 7 s without a refresh (reference PRESENCE_TTL_MS). */
export const PRESENCE_REMOTE_TTL_MS = 7000;
