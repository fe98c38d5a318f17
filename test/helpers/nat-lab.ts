/**
 * A simulated internet with home routers (issue #24), made of network namespaces by the test
 * itself, as test/helpers/netns.ts makes the partition test's:
 *
 *             "internet": a bridge in namespace `<prefix>-net`, 11.77.<x>.0/24
 *        ┌──────────────┬──────────────────────────┬──────────────────────────┐
 *   R 11.77.<x>.1     NAT-A wan 11.77.<x>.11        NAT-B wan 11.77.<x>.12
 *   (public node)      │ MASQUERADE (iptables)      │ MASQUERADE
 *                     NAT-A lan 10.77.1.1/24        NAT-B lan 10.77.2.1/24
 *                      │                            │
 *                     A 10.77.1.2 (home A)          B 10.77.2.2 (home B)
 *
 * Each NAT namespace forwards and masquerades what leaves its wan link. Topology `masquerade` (the
 * default): neither router forwards anything that starts outside (no port forwarding, no UPnP), as
 * an ordinary home router: a home node can dial out, nobody can dial in. Topology `forwarded`: home
 * A's router forwards its wan port 2428 to A (a port forward, as a user sets one up), home B stays
 * as above. Every node namespace (R, A, B) also has a control veth to the root namespace (a /30 of
 * 198.19.y.0/24) on which its HTTP API listens, so the test reaches each node whatever the swarm can
 * reach.
 *
 * Why 11.77.x.0/24 for the "internet": js-libp2p's DCUtR only dials addresses it counts as public
 * (not 10/8, not 198.18/15: @libp2p/utils' private ranges), so a lab on test ranges can never show a
 * direct upgrade. The range exists only inside these namespaces: no namespace has a route out of the
 * lab (the control /30s are the only links to the root namespace, and nothing routes through them),
 * and `setUp()` puts an `unreachable` route for the range into the root namespace for the lab's
 * lifetime, then checks both (`selfCheck()`), so no packet to it can leave the machine.
 *
 * Needs root, `ip` (iproute2) and `iptables`: `setUp()` answers why it could not, so a test can
 * skip; `tearDown()` deletes everything (veths and iptables rules go with their namespaces; the
 * root namespace's unreachable route is removed), after what was registered with `onTearDown` (the
 * nodes, their homes). `startNatLab()` is a NAT-lab test's whole start-up: lab, homes, nodes.
 */
import { execFile } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig, saveConfig, type NodeConfig } from '../../src/config/config.ts';
import { initHome, resolveHome } from '../../src/config/home.ts';
import { publicKeyOf } from '../../src/crypto/keys.ts';
import { libp2pPeerIdOf } from '../../src/network/peer-id.ts';
import { ClusterNode } from './cluster.ts';

const run = promisify(execFile);
const ip = async (...args: string[]) => (await run('ip', args, { timeout: 10_000 })).stdout;
const inNs = async (ns: string, ...cmd: string[]) => (await run('ip', ['netns', 'exec', ns, ...cmd], { timeout: 10_000 })).stdout;

export interface LabHost {
  name: 'r' | 'a' | 'b';
  namespace: string;
  /** the HTTP API's address on the control link, reachable from the test */
  control: string;
  /** the swarm's address (public for R, the home LAN address for A and B) */
  data: string;
  wrap: string[];
}

/** `masquerade`: both homes behind MASQUERADE, nothing forwarded in; `forwarded`: home A's router forwards its port 2428 to A */
export type NatTopology = 'masquerade' | 'forwarded';

export class NatLab {
  readonly r: LabHost;
  readonly a: LabHost;
  readonly b: LabHost;
  /** the NATs' public (wan) addresses, as R sees A and B */
  /** (all addresses of the "internet" are final once `setUp()` resolved: it may move the lab to a /24 no other lab holds) */
  natA = '';
  natB = '';
  private readonly prefix: string;
  private readonly net: string;
  private made: string[] = [];
  private rootVeths: string[] = [];
  /** what `tearDown()` undoes before the network: the nodes on it, their homes (`onTearDown`) */
  private cleanups: (() => Promise<unknown>)[] = [];

  /** the "internet"'s /24, unreachable from the root namespace while the lab stands */
  internet = '';
  private unreachableRoute = false;

  constructor(
    /** names the namespaces (`hearth-<label>-<pid>-…`) and the nodes' homes (`startNatLab`) */
    readonly label: string,
    readonly topology: NatTopology = 'masquerade',
  ) {
    this.prefix = `hearth-${label}-${process.pid}`;
    this.net = `${this.prefix}-net`;
    const host = (name: LabHost['name'], data: string): LabHost => {
      const namespace = `${this.prefix}-${name}`;
      return { name, namespace, control: '', data, wrap: ['ip', 'netns', 'exec', namespace] };
    };
    this.r = host('r', '');
    this.a = host('a', '10.77.1.2');
    this.b = host('b', '10.77.2.2');
    this.place(process.pid % 250);
  }

  /** Puts the lab's "internet" on 11.77.<x>.0/24. */
  private place(x: number): void {
    this.internet = `11.77.${x}.0/24`;
    this.r.data = `11.77.${x}.1`;
    this.natA = `11.77.${x}.11`;
    this.natB = `11.77.${x}.12`;
  }

  /** An 11.77.x.0/24 no other lab on this machine holds (each holds an unreachable route for its own). */
  private async freeInternet(): Promise<void> {
    const held = await ip('route', 'show', 'type', 'unreachable');
    for (let k = 0; k < 250; k++) {
      const x = (process.pid + k) % 250;
      if (!held.includes(`11.77.${x}.0/24`)) return this.place(x);
    }
    throw new Error('no free 11.77.x.0/24 for the lab');
  }

  private nat(home: 'a' | 'b'): string {
    return `${this.prefix}-nat${home}`;
  }

  /** A 198.19.y.0/24 no interface of the root namespace uses yet. */
  private async controlSubnet(): Promise<string> {
    const used = await ip('-4', '-o', 'addr', 'show');
    for (let k = 0; k < 250; k++) {
      const y = (process.pid + 97 + k) % 250;
      if (!used.includes(` 198.19.${y}.`)) return `198.19.${y}`;
    }
    throw new Error('no free 198.19.y.0/24 in the root namespace');
  }

  private async addNs(ns: string): Promise<void> {
    await ip('netns', 'del', ns).catch(() => undefined); // a dead run's leftover (names carry the pid)
    await ip('netns', 'add', ns);
    this.made.push(ns);
    await ip('-n', ns, 'link', 'set', 'lo', 'up');
  }

  /** veth `a` in namespace `nsA` ⇄ veth `b` in namespace `nsB`, both up. */
  private async link(nsA: string, a: string, nsB: string, b: string): Promise<void> {
    await ip('-n', nsA, 'link', 'add', a, 'type', 'veth', 'peer', 'name', b, 'netns', nsB);
    await ip('-n', nsA, 'link', 'set', a, 'up');
    await ip('-n', nsB, 'link', 'set', b, 'up');
  }

  /** Makes the namespaces, links, routes and NAT rules; resolves with why it could not. */
  async setUp(): Promise<string | undefined> {
    try {
      await run('iptables', ['--version'], { timeout: 10_000 }).catch(() => {
        throw new Error('iptables is not installed');
      });
      const control = await this.controlSubnet();
      // first of all: the root namespace (and so the machine) can never send to the lab's range
      await this.freeInternet(); // another lab (another test, a bench) may be running
      await ip('route', 'add', 'unreachable', this.internet);
      this.unreachableRoute = true;
      await this.addNs(this.net);
      await ip('-n', this.net, 'link', 'add', 'br0', 'type', 'bridge');
      await ip('-n', this.net, 'link', 'set', 'br0', 'up');
      const toInternet = async (ns: string, port: string, addr: string) => {
        await this.link(ns, 'wan', this.net, port);
        await ip('-n', this.net, 'link', 'set', port, 'master', 'br0');
        await ip('-n', ns, 'addr', 'add', `${addr}/24`, 'dev', 'wan');
      };
      // the public node
      await this.addNs(this.r.namespace);
      await toInternet(this.r.namespace, 'pr', this.r.data);
      // the two homes, each behind its NAT
      for (const [home, wanAddr, lan] of [['a', this.natA, '10.77.1'], ['b', this.natB, '10.77.2']] as const) {
        const nat = this.nat(home);
        const host = this[home];
        await this.addNs(nat);
        await toInternet(nat, `p${home}`, wanAddr);
        await this.addNs(host.namespace);
        await this.link(nat, 'lan', host.namespace, 'lan');
        await ip('-n', nat, 'addr', 'add', `${lan}.1/24`, 'dev', 'lan');
        await ip('-n', host.namespace, 'addr', 'add', `${host.data}/24`, 'dev', 'lan');
        await ip('-n', host.namespace, 'route', 'add', 'default', 'via', `${lan}.1`);
        await inNs(nat, 'sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward');
        // a home router: what leaves the wan link takes the router's address; nothing that starts
        // outside is forwarded in (only replies to connections the home opened)
        await inNs(nat, 'iptables', '-t', 'nat', '-A', 'POSTROUTING', '-o', 'wan', '-j', 'MASQUERADE');
        await inNs(nat, 'iptables', '-A', 'FORWARD', '-i', 'wan', '-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED', '-j', 'ACCEPT');
        if (home === 'a' && this.topology === 'forwarded') {
          // a port forward: new connections to the wan port reach A's swarm
          await inNs(nat, 'iptables', '-t', 'nat', '-A', 'PREROUTING', '-i', 'wan', '-p', 'tcp', '--dport', String(LAB_SWARM_PORT), '-j', 'DNAT', '--to-destination', `${host.data}:${LAB_SWARM_PORT}`);
          await inNs(nat, 'iptables', '-A', 'FORWARD', '-i', 'wan', '-p', 'tcp', '-d', host.data, '--dport', String(LAB_SWARM_PORT), '-j', 'ACCEPT');
        }
        await inNs(nat, 'iptables', '-A', 'FORWARD', '-i', 'wan', '-j', 'DROP');
      }
      // control links: root ⇄ each node namespace, a /30 each
      for (const [i, host] of [this.r, this.a, this.b].entries()) {
        const rootVeth = `hn${process.pid}${host.name}`.slice(0, 15);
        await ip('link', 'del', rootVeth).catch(() => undefined);
        await ip('link', 'add', rootVeth, 'type', 'veth', 'peer', 'name', 'ctl', 'netns', host.namespace);
        this.rootVeths.push(rootVeth);
        await ip('addr', 'add', `${control}.${4 * i + 1}/30`, 'dev', rootVeth);
        await ip('link', 'set', rootVeth, 'up');
        host.control = `${control}.${4 * i + 2}`;
        await ip('-n', host.namespace, 'addr', 'add', `${host.control}/30`, 'dev', 'ctl');
        await ip('-n', host.namespace, 'link', 'set', 'ctl', 'up');
      }
      const leak = await this.selfCheck();
      if (leak) throw new Error(`the lab is not sealed: ${leak}`);
      return undefined;
    } catch (err) {
      const why = ((err as { stderr?: string }).stderr || (err as Error).message).trim().split('\n')[0];
      await this.tearDown();
      return why;
    }
  }

  /** Can `from` open a TCP connection to `address:port`? (a probe of the lab itself, 2 s) */
  async canConnect(from: LabHost, address: string, port: number): Promise<boolean> {
    const script = `const s=require('net').connect(${port},'${address}');s.setTimeout(2000);s.on('connect',()=>{console.log('yes');s.destroy()});s.on('error',()=>console.log('no'));s.on('timeout',()=>{console.log('no');s.destroy()})`;
    return (await inNs(from.namespace, process.execPath, '-e', script)).trim() === 'yes';
  }

  /**
   * Checks that no packet for the lab's "internet" can leave the machine: the root namespace
   * answers `unreachable` for it, and no namespace of the lab has a route beyond the lab (a NAT or
   * R asked for an address outside every lab link has none). Resolves with what is wrong, if any.
   */
  async selfCheck(): Promise<string | undefined> {
    const probe = this.internet.replace(/\.0\/24$/, '.1');
    const rootRoute = await ip('route', 'get', probe).then(
      (out) => `a route: ${out.trim()}`,
      (err: { stderr?: string }) => (/unreachable|no route to host/i.test(err.stderr ?? '') ? undefined : `ip route get ${probe}: ${err.stderr ?? err}`),
    );
    if (rootRoute) return `the root namespace has ${rootRoute}`;
    for (const ns of [this.r.namespace, this.nat('a'), this.nat('b'), this.net]) {
      // 192.0.2.1 (TEST-NET-1) stands for any address outside the lab
      const out = await ip('-n', ns, 'route', 'get', '192.0.2.1').then(
        (o) => o.trim(),
        () => undefined,
      );
      if (out !== undefined) return `namespace ${ns} routes beyond the lab: ${out}`;
    }
    return undefined;
  }

  /** Has `tearDown()` run `fn` before it deletes the network, the latest registered first (a node stops before its home goes). */
  onTearDown(fn: () => Promise<unknown>): void {
    this.cleanups.push(fn);
  }

  async tearDown(): Promise<void> {
    for (const fn of this.cleanups.splice(0).reverse()) await fn().catch(() => undefined);
    for (const ns of this.made.splice(0).reverse()) await ip('netns', 'del', ns).catch(() => undefined);
    for (const v of this.rootVeths.splice(0)) await ip('link', 'del', v).catch(() => undefined);
    if (this.unreachableRoute) await ip('route', 'del', 'unreachable', this.internet).catch(() => undefined);
    this.unreachableRoute = false;
  }
}

/** Inside its own namespace every port is free: each node takes the defaults' neighbours. */
export const LAB_HTTP_PORT = 2528;
export const LAB_SWARM_PORT = 2428;

/**
 * One development node per lab host, homes under `root`: R serves as a relay; A and B know only R
 * (bootstrap). `configure` may change each node's config. Not started. `opts.nodeBinary`: the
 * Node.js the nodes run on (helpers/node-lines.ts); `opts.quic`: A and B know R by its QUIC
 * address (Node.js 22+) instead of its TCP one.
 */
export async function natLabNodes(
  lab: NatLab,
  root: string,
  configure: (name: LabHost['name'], cfg: NodeConfig) => void = () => undefined,
  opts: { nodeBinary?: string; quic?: boolean } = {},
): Promise<{ r: ClusterNode; a: ClusterNode; b: ClusterNode; rAddress: string }> {
  const made = new Map<LabHost['name'], { paths: ReturnType<typeof resolveHome>; address: string }>();
  for (const h of [lab.r, lab.a, lab.b]) {
    const paths = resolveHome({ home: root, node: h.name });
    await initHome(paths, { name: h.name, development: true, serverHost: h.control, serverPort: LAB_HTTP_PORT, swarmHost: h.data, swarmPort: LAB_SWARM_PORT });
    const peerId = libp2pPeerIdOf(publicKeyOf(createPrivateKey(await readFile(paths.nodeKey))));
    made.set(h.name, { paths, address: `/ip4/${h.data}/${opts.quic ? 'udp' : 'tcp'}/${LAB_SWARM_PORT}${opts.quic ? '/quic-v1' : ''}/p2p/${peerId}` });
  }
  const rAddress = made.get('r')!.address;
  for (const [name, m] of made) {
    const cfg = await loadConfig(m.paths.config, name);
    cfg.network.relayServer = name === 'r';
    cfg.bootstrap.nodes = name === 'r' ? [] : [rAddress];
    configure(name, cfg);
    await saveConfig(m.paths.config, cfg);
  }
  const node = (h: LabHost) => new ClusterNode(h.name, root, LAB_SWARM_PORT, h.wrap, undefined, undefined, opts.nodeBinary);
  return { r: node(lab.r), a: node(lab.a), b: node(lab.b), rAddress };
}

/** Stops a lab node, killing it (SIGKILL) when it has not exited within 10 s: a node whose peers are gone may hang in its network stop. */
export async function haltLabNode(n: ClusterNode): Promise<void> {
  const child = n.process?.child;
  const kill = setTimeout(() => child?.kill('SIGKILL'), 10_000);
  try {
    await n.stop();
  } finally {
    clearTimeout(kill);
  }
}

/** The three started nodes of a NAT lab, or why the lab could not stand (then the nodes are unset: the test skips and never touches them). */
export interface NatLabRun {
  unavailable: string | undefined;
  r: ClusterNode;
  a: ClusterNode;
  b: ClusterNode;
}

/**
 * The start-up every NAT-lab test shares, for its `beforeAll`: builds the lab, makes the three
 * nodes' homes in a temporary folder (`natLabNodes`, with `opts` as there), starts R, then A and B
 * together. When the lab cannot stand (or `opts.unavailable`, a reason found before, says so) it
 * warns that `file` is skipped and why, and answers that reason. `lab.tearDown()` (the test's
 * `afterAll`) then stops the nodes (`haltLabNode`) and removes their homes before the network;
 * with HEARTH_E2E_LOG_DIR=<dir> it first writes each node's whole log there, `<label>-<node>.log`
 * (LAB_LOG=debug and DEBUG=libp2p:… make them hold hearth's and libp2p's own).
 */
export async function startNatLab(
  lab: NatLab,
  file: string,
  opts: { configure?: (name: LabHost['name'], cfg: NodeConfig) => void; nodeBinary?: string; quic?: boolean; unavailable?: string } = {},
): Promise<NatLabRun> {
  const noLab = opts.unavailable === undefined ? await lab.setUp() : undefined;
  const unavailable = opts.unavailable ?? noLab;
  if (unavailable !== undefined) {
    const why = noLab === undefined ? unavailable : `cannot build the NAT lab (${noLab}); NAT traversal is only tested inside network namespaces`;
    console.warn(`${file} skipped: ${why}`);
    return { unavailable } as NatLabRun;
  }
  const home = await mkdtemp(join(tmpdir(), `hearth-${lab.label}-`));
  lab.onTearDown(() => rm(home, { recursive: true, force: true }));
  const { r, a, b } = await natLabNodes(lab, home, opts.configure, { nodeBinary: opts.nodeBinary, quic: opts.quic });
  lab.onTearDown(async () => {
    const logDir = process.env.HEARTH_E2E_LOG_DIR;
    if (logDir) for (const n of [r, a, b]) await writeFile(join(logDir, `${lab.label}-${n.name}.log`), n.process?.output() ?? '');
    await Promise.allSettled([r, a, b].map(haltLabNode));
  });
  await r.start();
  await Promise.all([a.start(), b.start()]);
  return { unavailable, r, a, b };
}
