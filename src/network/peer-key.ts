/**
 * How the network names a peer (network-port.ts; domain.md §1): by its node signing key, not by
 * libp2p's peer id form. A file of its own so the modules that convert and count peers (peer-id.ts,
 * relay-guard.ts) and the port that reports them share it without importing each other.
 */

/** A peer: the hex Ed25519 public key of its node signing identity (64 lowercase hex). */
export type PeerKey = string;
