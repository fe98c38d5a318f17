/**
 * Network namespaces for tests that cut the network between real node processes (the partition
 * test, issue #13 item 9). Each node gets its own namespace with two links:
 *
 * - a **control** veth pair to the root namespace (a /30 of 198.19.x.0/24), on which the node's
 *   HTTP API listens, so the test process reaches every node whatever happens to the swarm;
 * - a **data** veth into a bridge that lives in one more namespace (the hub; 198.18.y.0/24), on
 *   which the node's swarm listens and its peers dial it.
 *
 * Cutting a node off is `ip link set data down` inside its namespace; healing brings it back up.
 * Addresses are in 198.18.0.0/15, the range set aside for testing network devices (as
 * `src/network/mdns.test.ts` uses), and only the control /30s touch the root namespace. Creating
 * namespaces needs root and `ip`: `setUp()` answers why it could not, so a test can skip, and
 * `tearDown()` deletes everything it made (veths go with their namespaces).
 */
import { execFile } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { loadConfig, saveConfig } from '../../src/config/config.ts';
import { initHome, resolveHome } from '../../src/config/home.ts';
import { publicKeyOf } from '../../src/crypto/keys.ts';
import { libp2pPeerIdOf } from '../../src/network/peer-id.ts';
import { ClusterNode } from './cluster.ts';

const run = promisify(execFile);

async function ip(...args: string[]): Promise<string> {
  return (await run('ip', args, { timeout: 10_000 })).stdout;
}

export interface NetnsHost {
  /** the namespace's name, for `ip netns exec` */
  namespace: string;
  /** the node's control address (HTTP), reachable from the root namespace */
  control: string;
  /** the node's data address (swarm), reachable only from the other namespaces */
  data: string;
  /** the command prefix that runs a process inside the namespace */
  wrap: string[];
}

export class NetnsLab {
  readonly hosts: NetnsHost[];
  private readonly prefix: string;
  private readonly hub: string;
  private made: string[] = [];

  constructor(
    /** names the namespaces: `hearth-<label>-<pid>-<i>` */
    label: string,
    count: number,
  ) {
    this.prefix = `hearth-${label}-${process.pid}`;
    this.hub = `${this.prefix}-hub`;
    const data = `198.18.${process.pid % 250}`;
    this.hosts = Array.from({ length: count }, (_, i) => {
      const namespace = `${this.prefix}-${i}`;
      return { namespace, control: '', data: `${data}.${i + 1}`, wrap: ['ip', 'netns', 'exec', namespace] };
    });
  }

  /** Root-side name of host i's control veth (unique in the root namespace, ≤ 15 characters). */
  private rootVeth(i: number): string {
    return `hc${process.pid}n${i}`;
  }

  /** A 198.19.x.0/24 no interface of the root namespace uses yet (another run may hold one). */
  private async controlSubnet(): Promise<string> {
    const used = await ip('-4', '-o', 'addr', 'show');
    for (let k = 0; k < 250; k++) {
      const x = (process.pid + k) % 250;
      if (!used.includes(` 198.19.${x}.`)) return `198.19.${x}`;
    }
    throw new Error('no free 198.19.x.0/24 in the root namespace');
  }

  /** Makes the namespaces and links; resolves with why it could not (then nothing is left behind). */
  async setUp(): Promise<string | undefined> {
    try {
      // names carry this process's id: any namespace already holding one is a dead run's leftover
      for (const ns of [this.hub, ...this.hosts.map((h) => h.namespace)]) await ip('netns', 'del', ns).catch(() => undefined);
      const control = await this.controlSubnet();
      await ip('netns', 'add', this.hub);
      this.made.push(this.hub);
      await ip('-n', this.hub, 'link', 'add', 'br0', 'type', 'bridge');
      await ip('-n', this.hub, 'link', 'set', 'br0', 'up');
      for (const [i, h] of this.hosts.entries()) {
        await ip('netns', 'add', h.namespace);
        this.made.push(h.namespace);
        await ip('-n', h.namespace, 'link', 'set', 'lo', 'up');
        // control: root ⇄ namespace, a /30 each
        h.control = `${control}.${4 * i + 2}`;
        await ip('link', 'add', this.rootVeth(i), 'type', 'veth', 'peer', 'name', 'ctl', 'netns', h.namespace);
        await ip('addr', 'add', `${control}.${4 * i + 1}/30`, 'dev', this.rootVeth(i));
        await ip('link', 'set', this.rootVeth(i), 'up');
        await ip('-n', h.namespace, 'addr', 'add', `${h.control}/30`, 'dev', 'ctl');
        await ip('-n', h.namespace, 'link', 'set', 'ctl', 'up');
        // data: namespace ⇄ the hub's bridge
        await ip('-n', h.namespace, 'link', 'add', 'data', 'type', 'veth', 'peer', 'name', `p${i}`, 'netns', this.hub);
        await ip('-n', this.hub, 'link', 'set', `p${i}`, 'master', 'br0');
        await ip('-n', this.hub, 'link', 'set', `p${i}`, 'up');
        await ip('-n', h.namespace, 'addr', 'add', `${h.data}/24`, 'dev', 'data');
        await ip('-n', h.namespace, 'link', 'set', 'data', 'up');
      }
      return undefined;
    } catch (err) {
      const why = ((err as { stderr?: string }).stderr || (err as Error).message).trim().split('\n')[0];
      await this.tearDown();
      return why;
    }
  }

  /** Cuts host i's data link: its swarm can neither reach nor be reached by the others. */
  async cut(i: number): Promise<void> {
    await ip('-n', this.hosts[i]!.namespace, 'link', 'set', 'data', 'down');
  }

  /** Brings host i's data link back (its address and route come back with it). */
  async heal(i: number): Promise<void> {
    await ip('-n', this.hosts[i]!.namespace, 'link', 'set', 'data', 'up');
  }

  /** Deletes every namespace made (their veths go with them). Processes inside must have exited. */
  async tearDown(): Promise<void> {
    for (const ns of this.made.splice(0).reverse()) await ip('netns', 'del', ns).catch(() => undefined);
    for (const i of this.hosts.keys()) await ip('link', 'del', this.rootVeth(i)).catch(() => undefined);
  }
}

/** Inside its own namespace every port is free: each node takes the defaults' neighbours. */
const HTTP_PORT = 2528;
const SWARM_PORT = 2428;

/**
 * One development node per host of `lab`, homes under `root` (`n-1 … n-N`): HTTP on the host's
 * control address, the swarm on its data address, each bootstrapped to the others' data addresses
 * (as `hearth dev --nodes` bootstraps its nodes, src/cli/dev-cluster.ts). Not started.
 */
export async function netnsCluster(lab: NetnsLab, root: string): Promise<ClusterNode[]> {
  const homes = [];
  for (const [i, h] of lab.hosts.entries()) {
    const name = `n-${i + 1}`;
    const paths = resolveHome({ home: root, node: name });
    await initHome(paths, { name, development: true, serverHost: h.control, serverPort: HTTP_PORT, swarmHost: h.data, swarmPort: SWARM_PORT });
    const peerId = libp2pPeerIdOf(publicKeyOf(createPrivateKey(await readFile(paths.nodeKey))));
    homes.push({ name, paths, address: `/ip4/${h.data}/tcp/${SWARM_PORT}/p2p/${peerId}` });
  }
  for (const m of homes) {
    const cfg = await loadConfig(m.paths.config, m.name);
    cfg.bootstrap.nodes = homes.filter((o) => o !== m).map((o) => o.address);
    await saveConfig(m.paths.config, cfg);
  }
  return homes.map((m, i) => new ClusterNode(m.name, root, SWARM_PORT, lab.hosts[i]!.wrap));
}
