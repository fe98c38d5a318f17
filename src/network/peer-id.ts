/**
 * Between a hearth `PeerKey` (64 lowercase hex of the node's Ed25519 signing public key) and the
 * libp2p peer id derived from the same key (`12D3KooW…`: the identity multihash of the protobuf
 * public key). The node key file holds the private key (PEM, loaded with `createPrivateKey`); its
 * seed becomes the libp2p private key, so the peer id is stable for as long as the file is.
 */
import './polyfill.ts';
import type { KeyObject } from 'node:crypto';
import { privateKeyFromRaw, publicKeyFromRaw } from '@libp2p/crypto/keys';
import type { Ed25519PrivateKey, PeerId } from '@libp2p/interface';
import { peerIdFromPublicKey, peerIdFromString } from '@libp2p/peer-id';
import { CODE_P2P, multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { rawPrivateSeed, rawPublicKeyBytes } from '../crypto/keys.ts';
import type { PeerKey } from './peer-key.ts';

const PEER_KEY = /^[0-9a-f]{64}$/;

/**
 * The libp2p private key of a node signing key (an Ed25519 `KeyObject`). libp2p's own key object,
 * unchanged: signing with the kept `KeyObject` instead (issue #22, a tenth of a `set`'s main-thread
 * CPU) made the DHT never take a peer into its routing table (test/e2e/network/dht-join.e2e.test.ts), for a
 * reason not found yet — see docs/performance.md.
 */
export function libp2pPrivateKey(key: KeyObject): Ed25519PrivateKey {
  if (key.asymmetricKeyType !== 'ed25519' || key.type !== 'private') throw new Error('the node key must be an Ed25519 private key');
  const priv = privateKeyFromRaw(Buffer.concat([rawPrivateSeed(key), rawPublicKeyBytes(key)]));
  if (priv.type !== 'Ed25519') throw new Error('the node key must be an Ed25519 private key');
  return priv;
}

/** The peer's key, or undefined for a peer id that is not an Ed25519 key (refused at connection). */
export function peerKeyOf(id: PeerId): PeerKey | undefined {
  return id.type === 'Ed25519' ? Buffer.from(id.publicKey.raw).toString('hex') : undefined;
}

export function peerIdOfKey(key: PeerKey): PeerId {
  if (!PEER_KEY.test(key)) throw new Error(`not a peer key: ${key}`);
  return peerIdFromPublicKey(publicKeyFromRaw(Buffer.from(key, 'hex')));
}

/** The libp2p string form (`12D3KooW…`) of a peer key. */
export const libp2pPeerIdOf = (key: PeerKey): string => peerIdOfKey(key).toString();

/** The key named by a `/p2p/<id>` string, or undefined when it is not an Ed25519 peer id. */
export function peerKeyOfString(id: string): PeerKey | undefined {
  try {
    return peerKeyOf(peerIdFromString(id));
  } catch {
    return undefined;
  }
}

/** The node keys of libp2p peer ids (ids that are not Ed25519 node keys left out), once each. */
export function keysOf(ids: PeerId[]): PeerKey[] {
  const out = new Set<PeerKey>();
  for (const id of ids) {
    const k = peerKeyOf(id);
    if (k) out.add(k);
  }
  return [...out];
}

/** The peer a bootstrap address names by its `/p2p/` part; throws on an address that does not parse. */
export function bootstrapPeer(address: string): PeerKey | undefined {
  let ma: Multiaddr;
  try {
    ma = multiaddr(address);
  } catch {
    throw new Error(`network: not a multiaddr: ${JSON.stringify(address)}`);
  }
  const id = ma.getComponents().findLast((c) => c.code === CODE_P2P)?.value;
  return id === undefined ? undefined : peerKeyOfString(id);
}
