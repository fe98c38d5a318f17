/**
 * The wire vocabulary (issue #35 "the wire vocabulary once"): the shapes and protocol constants the
 * node sends and the SDK reads, written once. This folder imports nothing — not Node.js, not the
 * rest of src/ — so the server (src/<domain>/) and the SDK (src/client/, built into the
 * `hearth-sdk` package by scripts/build-client.ts) both stand on it, and a constant cannot drift
 * between the two. Each file names the spec section it follows.
 */
export * from './accounts.ts';
export * from './applications.ts';
export * from './blobs.ts';
export * from './capabilities.ts';
export * from './contexts.ts';
export * from './groups.ts';
export * from './invitations.ts';
export * from './ownership.ts';
export * from './sync.ts';
export * from './tee.ts';
export * from './upgrades.ts';
export * from './usage.ts';
