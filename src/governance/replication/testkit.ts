/**
 * Test support: a governance node (testkit.ts `govNode`) with its replicator and invitation service
 * on an in-memory network (replicator.test.ts, catchup.test.ts, groups/sync-service.test.ts), or on
 * any network (`replicateOn`: libp2p-hostile.test.ts). The
 * replicator is pushed onto `running` so that the test file's `afterEach` stops it. Not a test file.
 */
import pino from 'pino';
import { type MemoryHub, type MemoryNetwork, type Network, StreamRouter } from '../../network/index.ts';
import { InvitationService, type RemoteJoin } from '../invitations/service.ts';
import { govNode, type GovNode } from '../testkit.ts';
import { GovernanceReplicator } from './replicator.ts';

export interface RepNode extends GovNode {
  net: MemoryNetwork;
  replicator: GovernanceReplicator;
  joiner: InvitationService;
}

export interface ReplicatorOptions {
  /** the heads heartbeat (a long one leaves only connections to start pulls) */
  heartbeatMs: number;
  requestTimeoutMs: number;
  dialTimeoutMs: number;
  /** whether the heartbeat's tick retries pending joins (default true) */
  retryPendingOnTick?: boolean;
  /** what the invitation service fetches through; default the replicator itself */
  remote?: (replicator: GovernanceReplicator) => RemoteJoin;
}

/** repNode's: the in-memory network's own timeouts */
export type RepNodeOptions = Omit<ReplicatorOptions, 'requestTimeoutMs' | 'dialTimeoutMs'>;

/** A governance node's replicator and invitation service on `net`, started and pushed onto `running`. */
export function replicateOn(g: GovNode, net: Network, running: GovernanceReplicator[], opts: ReplicatorOptions): { replicator: GovernanceReplicator; joiner: InvitationService } {
  const router = new StreamRouter(net);
  let joiner!: InvitationService;
  const replicator = new GovernanceReplicator({
    governance: g.governance,
    network: net,
    router,
    clock: g.clock,
    logger: pino({ level: 'silent' }),
    options: { heartbeatMs: opts.heartbeatMs, requestTimeoutMs: opts.requestTimeoutMs, dialTimeoutMs: opts.dialTimeoutMs },
    onTick: opts.retryPendingOnTick === false ? undefined : async () => void (await joiner.resolvePending()),
  });
  const remote = opts.remote?.(replicator) ?? replicator;
  joiner = new InvitationService({ governance: g.governance, identity: g.identity, clock: g.clock, store: g.store, remote, addresses: () => net.addresses() });
  router.serve();
  replicator.start();
  running.push(replicator);
  return { replicator, joiner };
}

export async function repNode(hub: MemoryHub, startMs: number, running: GovernanceReplicator[], opts: RepNodeOptions): Promise<RepNode> {
  const g = await govNode(startMs);
  const net = hub.join(g.identity.publicKey);
  return { ...g, net, ...replicateOn(g, net, running, { ...opts, requestTimeoutMs: 2_000, dialTimeoutMs: 500 }) };
}
