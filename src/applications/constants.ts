/**
 * Limits and protocol constants of application bundles (runtime.md §1; admin-wire-a §3.3). The
 * numbers are the reference's, so a bundle one node accepts every other node accepts too.
 */

/** `manifest.json` above this is refused before any signature check (core `MAX_MANIFEST_BYTES`). */
export const MAX_MANIFEST_BYTES = 1024 * 1024;
/** The manifest must appear within this many decompressed bytes of the archive. */
export const MAX_MANIFEST_SCAN_BYTES = 8 * 1024 * 1024;
/** The whole archive, decompressed. Also the cap on the compressed `.mpk` file itself. */
export const MAX_BUNDLE_BYTES = 512 * 1024 * 1024;

/** The only signature algorithm of manifest format v0. */
export const SIGNATURE_ALGORITHM = 'ed25519';
/** The manifest format written by `hearth app bundle`. */
export const MANIFEST_FORMAT_VERSION = '1.0';
/** `minRuntimeVersion` written when the caller names none (the reference's default floor). */
export const DEFAULT_MIN_RUNTIME_VERSION = '0.1.0';

/**
 * The runtime release `minRuntimeVersion` is compared with. hearth implements the host interface
 * of the reference release the spec describes, so bundles built for that release run here; the
 * package's own version (0.x of hearth) says nothing about the host functions offered.
 */
export const RUNTIME_VERSION = '0.11.0-rc.83';

/** The wasm custom section holding the embedded ABI (core `crates/wasm-abi/src/embed.rs`). */
export const ABI_SECTION = 'calimero_abi_v1';
export const ABI_SCHEMA_VERSION = 'wasm-abi/1';

/** `blob.compiled` until a precompiled module is cached: the zero id (admin-wire-a §3.2). */
export const ZERO_ID = '0'.repeat(64);

