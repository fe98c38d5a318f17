/**
 * QUIC beside TCP where Node.js has it (issue #32 §3; domain.md §1.1: the reference listens on
 * `/udp/<port>/quic-v1` beside TCP, on the same port number). `@chainsafe/libp2p-quic` declares
 * Node.js ≥ 22 and does not run on 20, so it is imported only at start, only on Node.js ≥ 22; on
 * Node.js 20 the node runs over TCP as before and refuses QUIC addresses it is told to dial, with
 * one line naming the requirement. Which addresses are QUIC, which are usable on this Node.js,
 * the QUIC listen address, the dial order (QUIC first), and the transport itself (its dials made
 * to end at their signal) live here; libp2p-node.ts and libp2p-internet.ts wire them in.
 * docs/network.md "QUIC" describes the whole.
 */
import './polyfill.ts';
import type { QuicComponents } from '@chainsafe/libp2p-quic';
import type { Address, Transport } from '@libp2p/interface';
import { circuitRelayAddressesLast, loopbackAddressLast, publicAddressesFirst, reliableTransportsFirst } from '@libp2p/utils';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import type { Logger } from 'pino';

/** the first Node.js major `@chainsafe/libp2p-quic` runs on (its `engines`) */
export const QUIC_MIN_NODE_MAJOR = 22;

/** Whether this Node.js (or `version`, as `process.versions.node`) can run QUIC. */
export function quicSupported(version: string = process.versions.node): boolean {
  return Number(version.split('.')[0]) >= QUIC_MIN_NODE_MAJOR;
}

/** The one line a QUIC address gets where Node.js cannot run it. */
export function quicRequirement(address: string, version: string = process.versions.node): string {
  return `${address} is a QUIC address: QUIC needs Node.js ${QUIC_MIN_NODE_MAJOR} or later, this is Node.js ${version} (give a /tcp/ address, or run the node on Node.js ${QUIC_MIN_NODE_MAJOR}+)`;
}

function parse(address: string): Multiaddr {
  try {
    return multiaddr(address);
  } catch {
    throw new Error(`not a multiaddr: ${JSON.stringify(address)}`);
  }
}

/** Whether `address` runs over QUIC (`/quic-v1`, or the old draft-29 `/quic`), outside any relay hop. */
export function isQuicAddress(address: string | Multiaddr): boolean {
  const ma = typeof address === 'string' ? parse(address) : address;
  return ma.getComponents().some((c) => c.name === 'quic-v1' || c.name === 'quic');
}

/**
 * Checks a peer address given by the operator (`[bootstrap] nodes`, `--boot-nodes`): a multiaddr;
 * a QUIC one is `…/udp/<port>/quic-v1` (draft-29 `/quic`, which the reference no longer speaks
 * either, is refused) on a Node.js that runs QUIC. Throws one line naming the problem.
 */
export function checkPeerAddress(address: string, version: string = process.versions.node): void {
  const ma = parse(address);
  const names = ma.getComponents().map((c) => c.name);
  if (names.includes('quic')) throw new Error(`${address}: QUIC draft-29 (/quic) is not supported; use /udp/<port>/quic-v1`);
  const at = names.indexOf('quic-v1');
  if (at < 0) return;
  if (names[at - 1] !== 'udp') throw new Error(`${address}: a QUIC address is /ip4|ip6|dns…/udp/<port>/quic-v1`);
  if (!quicSupported(version)) throw new Error(quicRequirement(address, version));
}

/** Every address checked (checkPeerAddress); the first problem is thrown. */
export function checkPeerAddresses(addresses: readonly string[], version: string = process.versions.node): void {
  for (const a of addresses) checkPeerAddress(a, version);
}

/**
 * Whether this Node.js can dial `address` at all: false for a QUIC address on Node.js 20 (a peer
 * address remembered while the node ran on 22+, then started on 20, is left out, not refused).
 */
export function dialableHere(address: string | Multiaddr, version: string = process.versions.node): boolean {
  try {
    return !isQuicAddress(address) || quicSupported(version);
  } catch {
    return false;
  }
}

/** The QUIC listen address beside a TCP one: the same host and port number, over UDP. */
export function quicListenAddress(tcp: Multiaddr, port: number): Multiaddr {
  return tcp.decapsulate('/tcp').encapsulate(`/udp/${port}/quic-v1`);
}

/** The UDP port of the first QUIC address among `addresses` (relayed ones left out). */
export function quicPortOf(addresses: Multiaddr[]): number | undefined {
  for (const a of addresses) {
    const names = a.getComponents();
    if (names.some((c) => c.name === 'p2p-circuit') || !names.some((c) => c.name === 'quic-v1')) continue;
    const udp = names.find((c) => c.name === 'udp')?.value;
    if (udp) return Number(udp);
  }
  return undefined;
}

function quicFirst(a: Multiaddr, b: Multiaddr): -1 | 0 | 1 {
  const qa = isQuicAddress(a);
  const qb = isQuicAddress(b);
  return qa === qb ? 0 : qa ? -1 : 1;
}

/** `addresses` with the QUIC ones first, each kind in its order (a stable sort). */
export function quicFirstAddresses(addresses: Multiaddr[]): Multiaddr[] {
  return [...addresses].sort(quicFirst);
}

/**
 * The dial order of a peer's addresses: libp2p's own (public before private, loopback and relayed
 * last, certified first), then QUIC before TCP where libp2p puts TCP first. A peer that offers both
 * is reached over QUIC; its TCP address is the next one tried (ADDRESS_DIAL_TIMEOUT_MS later when
 * UDP is blocked on the way).
 */
export function quicFirstSorter(a: Address, b: Address): -1 | 0 | 1 {
  return (
    loopbackAddressLast(a.multiaddr, b.multiaddr) ||
    publicAddressesFirst(a.multiaddr, b.multiaddr) ||
    circuitRelayAddressesLast(a.multiaddr, b.multiaddr) ||
    (a.isCertified === b.isCertified ? 0 : a.isCertified ? -1 : 1) ||
    quicFirst(a.multiaddr, b.multiaddr) ||
    reliableTransportsFirst(a.multiaddr, b.multiaddr)
  );
}

type TransportFactory = (components: QuicComponents) => Transport;

/**
 * The transport's dials, made to end when their signal aborts. `@chainsafe/libp2p-quic` (2.1)
 * hands the signal only to the upgrade: the QUIC handshake itself runs to its own end, 10 s (its
 * idle timeout) for an address that never answers (a LAN address of a home behind NAT: UDP gets no refusal where a
 * TCP connect gets ENETUNREACH or a reset). libp2p dials a peer's addresses one after another,
 * ADDRESS_DIAL_TIMEOUT_MS each (libp2p.ts), and merges every dial to one peer into one, so that
 * address held every dial to the peer for 10 s: a join's 5 s dial never reached the inviter's
 * relayed address after it (the NAT lab over QUIC, test/e2e/network/nat-quic.e2e.test.ts: B's join stayed
 * pending, each retry's dial stuck on A's LAN address again). Here the dial rejects at the abort;
 * the handshake left behind ends on its own, and a connection it still makes is dropped (the
 * upgrade sees the aborted signal first).
 */
export function abortableDials(factory: TransportFactory): TransportFactory {
  const aborted = (signal: AbortSignal, ma: Multiaddr) => (signal.reason instanceof Error ? signal.reason : new Error(`dial ${ma.toString()}: aborted`));
  return (components) => {
    const transport = factory(components);
    const dial = transport.dial.bind(transport);
    // an own property over the class's method (its private fields need `this` to stay the transport)
    transport.dial = (ma, options) => {
      const signal = options.signal;
      if (signal?.aborted) return Promise.reject(aborted(signal, ma));
      const dialing = dial(ma, options);
      if (!signal) return dialing;
      return new Promise((resolve, reject) => {
        let settled = false;
        const onAbort = () => {
          if (settled) return;
          settled = true;
          reject(aborted(signal, ma));
          // made after all: nobody waits for it
          dialing.then((conn) => conn.abort(new Error('the dial was aborted')), () => undefined);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        const done = () => {
          signal.removeEventListener('abort', onAbort);
          const first = !settled;
          settled = true;
          return first;
        };
        dialing.then(
          (conn) => {
            if (done()) resolve(conn);
          },
          (err: unknown) => {
            if (done()) reject(err);
          },
        );
      });
    };
    return transport;
  };
}

let toldNode20 = false;

/**
 * The QUIC transport where this Node.js runs it, else undefined: on Node.js 20 logged once per
 * process (QUIC needs 22+; the node carries on over TCP), and where the module or its prebuilt
 * binary for this platform cannot load, logged as a warning with the cause.
 */
export async function loadQuicTransport(log: Logger, version: string = process.versions.node): Promise<TransportFactory | undefined> {
  if (!quicSupported(version)) {
    if (!toldNode20) log.info({ node: version }, `network: QUIC needs Node.js ${QUIC_MIN_NODE_MAJOR} or later; listening and dialing over TCP only`);
    toldNode20 = true;
    return undefined;
  }
  try {
    const { quic } = await import('@chainsafe/libp2p-quic');
    return abortableDials(quic());
  } catch (err) {
    log.warn({ err: (err as Error).message.split('\n')[0] }, 'network: the QUIC module could not load; listening and dialing over TCP only');
    return undefined;
  }
}
