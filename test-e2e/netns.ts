/**
 * Network partitions for the chaos suite: every broker in its own network namespace, so that a
 * broker can be cut off from ZooKeeper, from its peers or from clients with iptables DROP rules
 * inside its namespace (open TCP connections then stall silently, as on a real network partition).
 *
 * Topology of one run (N: a free /24 picked per run, 10.213.N.0/24, only inside namespaces made here):
 *
 *   root namespace (the test process, i.e. "clients")      sam<N>r  10.213.N.1
 *        │ veth
 *   samsa<N>-hub: bridge br0 ──veth── samsa<N>-zk  eth0 10.213.N.2    (every ZooKeeper server)
 *                            ──veth── samsa<N>-b0  eth0 10.213.N.10   (broker 0)
 *                            ──veth── samsa<N>-b1  eth0 10.213.N.11   (broker 1) ...
 *
 * Brokers run as `ip netns exec samsa<N>-b<id> node samsa.js broker start ...` and listen on fixed
 * ports of their own address (PLAINTEXT 9092, CONTROLLER 9093, metrics 9100); ZooKeeper on 2181+.
 * Each broker namespace has an iptables chain SAMSA-FAULT, jumped to from INPUT and OUTPUT: a fault
 * adds DROP rules for the addresses cut off (both directions), heal() flushes the chain.
 *
 * A run claims N with a file in /run/samsa-netns (O_EXCL); the file names the namespaces and the
 * owner pid. Namespaces are deleted by destroy(), on process exit, and by sweepStaleNetns() (the e2e
 * global teardown, and every create()) for runs whose owner is gone. Needs root, iproute2 and iptables
 * (nft or legacy); netnsUnavailable() says why not, and describeNetns() then skips the suite.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe } from 'vitest';
import { describeCluster, onContainers, type ClusterPlacement } from './harness.js';
import { NETNS_REGISTRY, removeEntrySync, sweepStaleNetns, type RegistryEntry } from './netns-registry.js';

export { NETNS_REGISTRY, sweepStaleNetns };

const run = promisify(execFile);

const SUBNET_PREFIX = '10.213';
const CHAIN = 'SAMSA-FAULT';

/** Ports inside each broker's namespace (its own address, so fixed). */
export const NETNS_PORTS = { client: 9092, control: 9093, metrics: 9100, zkClient: 2181, zkPeer: 2888, zkElection: 3888 } as const;

/** What a broker is cut off from: ZooKeeper, the other brokers, the test process (clients), or all of them. */
export const Peer = { zookeeper: 'zookeeper', peers: 'peers', clients: 'clients', all: 'all' } as const;
export type Peer = (typeof Peer)[keyof typeof Peer];
/** A fault target: one of Peer, or specific brokers (`{ brokers: [1] }`: cut only the link to broker 1). */
export type FaultTarget = Peer | { brokers: number[] };

let probed: string | null | undefined;

/**
 * Why network namespaces cannot be used here (not root, no `ip netns`, no iptables in a namespace),
 * or null when they can. Probed once per process with a throwaway namespace.
 */
export function netnsUnavailable(): string | null {
  if (probed !== undefined) return probed;
  probed = probe();
  return probed;
}

function probe(): string | null {
  if (process.platform !== 'linux') return `network namespaces need Linux (this is ${process.platform})`;
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'network namespaces need root';
  const name = `samsa-probe-${process.pid}`;
  const sh = (cmd: string, args: string[]) => spawnSync(cmd, args, { encoding: 'utf8', timeout: 20_000 });
  const add = sh('ip', ['netns', 'add', name]);
  if (add.error) return `iproute2 is missing (${add.error.message}): apt-get install -y iproute2`;
  if (add.status !== 0) return `\`ip netns add\` failed: ${add.stderr.trim()}`;
  try {
    const ipt = sh('ip', ['netns', 'exec', name, 'iptables', '-w', '-S']);
    if (ipt.status !== 0) {
      return /exec of "iptables" failed|No such file/.test(ipt.stderr)
        ? 'iptables is missing: apt-get install -y iptables'
        : `iptables inside a namespace failed: ${ipt.stderr.trim()}`;
    }
    const veth = sh('ip', ['-n', name, 'link', 'add', 'probe0', 'type', 'veth', 'peer', 'name', 'probe1']);
    if (veth.status !== 0) return `veth pairs are not available: ${veth.stderr.trim()}`;
    return null;
  } finally {
    sh('ip', ['netns', 'del', name]);
  }
}

/** describeCluster() for a suite that needs network namespaces: skipped with the reason when they are not available. */
export function describeNetns(name: string, fn: () => void): void {
  const reason = onContainers ? null : netnsUnavailable(); // on containers describeCluster skips it (processesOnly)
  if (reason !== null) describe.skip(`${name} [skipped: ${reason}]`, fn);
  else describeCluster(name, fn, { processesOnly: 'brokers run in network namespaces on this machine' });
}

const live = new Set<NetnsTopology>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const t of live) t.destroySync();
  });
}

/** Claims a free 10.213.N.0/24 (registry file created with O_EXCL, no address of it in the root namespace). */
function claimSubnet(entry: (n: number) => RegistryEntry): number {
  mkdirSync(NETNS_REGISTRY, { recursive: true });
  const addrs = spawnSync('ip', ['-o', '-4', 'addr', 'show'], { encoding: 'utf8' }).stdout ?? '';
  const start = Math.floor(Math.random() * 250);
  for (let i = 0; i < 250; i++) {
    const n = ((start + i) % 250) + 1;
    if (addrs.includes(` ${SUBNET_PREFIX}.${n}.`)) continue;
    try {
      writeFileSync(join(NETNS_REGISTRY, `${n}.json`), JSON.stringify(entry(n)), { flag: 'wx' });
      return n;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`cannot write to ${NETNS_REGISTRY}`, { cause: err });
    }
  }
  throw new Error(`no free ${SUBNET_PREFIX}.N.0/24 for network namespaces (see ${NETNS_REGISTRY})`);
}

async function ip(...args: string[]): Promise<void> {
  try {
    await run('ip', args, { timeout: 20_000 });
  } catch (err) {
    throw new Error(`ip ${args.join(' ')} failed: ${((err as { stderr?: string }).stderr ?? '').trim()}`, { cause: err });
  }
}

/** One run's namespaces, bridge and veth pairs, and the faults currently in force. */
export class NetnsTopology {
  /** Test process address (root namespace): what brokers see as "clients". */
  readonly clientIp: string;
  /** Address of the ZooKeeper namespace. */
  readonly zkIp: string;
  readonly hub: string;
  readonly zkNetns: string;
  private readonly registryFile: string;
  private destroyed = false;
  /** Per broker: the fault targets in force (for describe()). */
  private readonly faults = new Map<number, FaultTarget[]>();

  private constructor(
    readonly subnet: number,
    readonly brokers: number,
  ) {
    this.clientIp = `${SUBNET_PREFIX}.${subnet}.1`;
    this.zkIp = `${SUBNET_PREFIX}.${subnet}.2`;
    this.hub = `samsa${subnet}-hub`;
    this.zkNetns = `samsa${subnet}-zk`;
    this.registryFile = join(NETNS_REGISTRY, `${subnet}.json`);
  }

  /** Makes the namespaces, bridge, veth pairs and fault chains for `brokers` brokers (ids 0..n-1). */
  static async create(o: { brokers: number }): Promise<NetnsTopology> {
    const why = netnsUnavailable();
    if (why !== null) throw new Error(`network namespaces unavailable: ${why}`);
    sweepStaleNetns();
    const names = (n: number) => [`samsa${n}-hub`, `samsa${n}-zk`, ...Array.from({ length: o.brokers }, (_, i) => `samsa${n}-b${i}`)];
    const subnet = claimSubnet((n) => ({ pid: process.pid, created: new Date().toISOString(), namespaces: names(n), rootVeth: `sam${n}r` }));
    const t = new NetnsTopology(subnet, o.brokers);
    live.add(t);
    installExitHook();
    try {
      await t.build();
    } catch (err) {
      await t.destroy();
      throw err;
    }
    return t;
  }

  brokerNetns(id: number): string {
    return `samsa${this.subnet}-b${id}`;
  }

  brokerIp(id: number): string {
    return `${SUBNET_PREFIX}.${this.subnet}.${10 + id}`;
  }

  get rootVeth(): string {
    return `sam${this.subnet}r`;
  }

  /** For TestCluster.start({ placement }): ZooKeeper and brokers at their namespaces' addresses. */
  placement(): ClusterPlacement {
    return {
      zk: {
        host: this.zkIp,
        netns: this.zkNetns,
        clientPorts: [0, 1, 2].map((i) => NETNS_PORTS.zkClient + i),
        peerPorts: [0, 1, 2].map((i) => NETNS_PORTS.zkPeer + i),
        electionPorts: [0, 1, 2].map((i) => NETNS_PORTS.zkElection + i),
      },
      broker: (id) => {
        if (id >= this.brokers) throw new Error(`the topology has namespaces for ${this.brokers} brokers, not broker ${id}`);
        return {
          host: this.brokerIp(id),
          port: NETNS_PORTS.client,
          controlPort: NETNS_PORTS.control,
          metricsPort: NETNS_PORTS.metrics,
          netns: this.brokerNetns(id),
        };
      },
    };
  }

  private async build(): Promise<void> {
    const n = this.subnet;
    const br = 'br0';
    for (const ns of [this.hub, this.zkNetns, ...Array.from({ length: this.brokers }, (_, i) => this.brokerNetns(i))]) {
      await ip('netns', 'add', ns);
      await ip('-n', ns, 'link', 'set', 'lo', 'up');
    }
    await ip('-n', this.hub, 'link', 'add', br, 'type', 'bridge');
    await ip('-n', this.hub, 'link', 'set', br, 'up');
    // the root namespace's leg: the test process talks to ZooKeeper and the brokers through it
    await ip('link', 'add', this.rootVeth, 'type', 'veth', 'peer', 'name', `h${n}r`, 'netns', this.hub);
    await ip('-n', this.hub, 'link', 'set', `h${n}r`, 'master', br, 'up');
    await ip('addr', 'add', `${this.clientIp}/24`, 'dev', this.rootVeth);
    await ip('link', 'set', this.rootVeth, 'up');
    const leaves: Array<[string, string, string]> = [
      [this.zkNetns, `h${n}z`, this.zkIp],
      ...Array.from({ length: this.brokers }, (_, i): [string, string, string] => [this.brokerNetns(i), `h${n}b${i}`, this.brokerIp(i)]),
    ];
    for (const [ns, port, addr] of leaves) {
      await ip('-n', this.hub, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
      await ip('-n', this.hub, 'link', 'set', port, 'master', br, 'up');
      await ip('-n', ns, 'addr', 'add', `${addr}/24`, 'dev', 'eth0');
      await ip('-n', ns, 'link', 'set', 'eth0', 'up');
    }
    for (let i = 0; i < this.brokers; i++) {
      await this.iptables(i, '-N', CHAIN);
      await this.iptables(i, '-I', 'INPUT', '-j', CHAIN);
      await this.iptables(i, '-I', 'OUTPUT', '-j', CHAIN);
    }
  }

  private async iptables(broker: number, ...args: string[]): Promise<string> {
    try {
      const r = await run('ip', ['netns', 'exec', this.brokerNetns(broker), 'iptables', '-w', ...args], { timeout: 20_000 });
      return r.stdout;
    } catch (err) {
      throw new Error(`iptables ${args.join(' ')} in ${this.brokerNetns(broker)} failed: ${((err as { stderr?: string }).stderr ?? '').trim()}`, {
        cause: err,
      });
    }
  }

  /** The addresses a fault target stands for, as seen from broker `id`. */
  addressesOf(id: number, target: FaultTarget): string[] {
    const others = Array.from({ length: this.brokers }, (_, i) => i).filter((i) => i !== id);
    if (typeof target === 'object') return target.brokers.filter((b) => b !== id).map((b) => this.brokerIp(b));
    switch (target) {
      case 'zookeeper':
        return [this.zkIp];
      case 'peers':
        return others.map((b) => this.brokerIp(b));
      case 'clients':
        return [this.clientIp];
      case 'all':
        return [this.zkIp, this.clientIp, ...others.map((b) => this.brokerIp(b))];
    }
  }

  /**
   * Cuts broker `id` off from `target` in both directions (DROP in its namespace): new connections
   * time out, open ones stall. Faults add up until heal().
   */
  async isolate(id: number, ...targets: FaultTarget[]): Promise<void> {
    for (const target of targets) {
      for (const addr of this.addressesOf(id, target)) {
        await this.iptables(id, '-A', CHAIN, '-s', addr, '-j', 'DROP');
        await this.iptables(id, '-A', CHAIN, '-d', addr, '-j', 'DROP');
      }
      this.faults.set(id, [...(this.faults.get(id) ?? []), target]);
    }
  }

  /** Lifts every fault of broker `id` (of every broker without an id). */
  async heal(id?: number): Promise<void> {
    const ids = id === undefined ? Array.from({ length: this.brokers }, (_, i) => i) : [id];
    for (const b of ids) {
      await this.iptables(b, '-F', CHAIN);
      this.faults.delete(b);
    }
  }

  /** The DROP rules in force in broker `id`'s namespace (`iptables -S SAMSA-FAULT` lines). */
  async rules(id: number): Promise<string[]> {
    return (await this.iptables(id, '-S', CHAIN)).split('\n').filter((l) => l.startsWith('-A '));
  }

  /** Faults in force, e.g. `broker 1 ✂ zookeeper`. */
  describe(): string {
    const parts = [...this.faults].map(([b, ts]) => `broker ${b} ✂ ${ts.map((t) => (typeof t === 'string' ? t : `brokers ${t.brokers.join(',')}`)).join('+')}`);
    return parts.length ? parts.join('; ') : 'no faults';
  }

  /** Deletes the namespaces (with their bridge, veths and rules) and releases the subnet. Processes inside should be stopped first. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    live.delete(this);
    const namespaces = [this.hub, this.zkNetns, ...Array.from({ length: this.brokers }, (_, i) => this.brokerNetns(i))];
    for (const ns of namespaces) await ip('netns', 'del', ns).catch(() => undefined);
    await ip('link', 'del', this.rootVeth).catch(() => undefined);
    rmSync(this.registryFile, { force: true });
  }

  /** destroy() for the process exit hook. */
  destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    live.delete(this);
    try {
      removeEntrySync(this.registryFile, JSON.parse(readFileSync(this.registryFile, 'utf8')) as RegistryEntry);
    } catch {
      /* already gone */
    }
  }
}
