/**
 * Peers this node found outside its configuration (domain.md §1.2: "a persistent peer-address cache
 * is kept in the datastore"): addresses dialed from an invitation's `admitter_addrs`. They are kept
 * connected like bootstrap peers while the node runs and dialed again at the next start, so two
 * nodes that met through an invitation find each other after either restarts. At most `max`
 * entries; the oldest go first.
 */
import { collect, type Store } from '../store/store.ts';

interface Entry {
  address: string;
  /** unix ms when it was last remembered */
  at: number;
}

export class AddressBook {
  private readonly space;

  constructor(
    store: Store,
    private readonly now: () => number,
    private readonly max = 64,
  ) {
    this.space = store.space<Entry>('net.addresses');
  }

  async list(): Promise<string[]> {
    return (await collect(this.space.entries())).map(([, e]) => e.address);
  }

  async remember(address: string): Promise<void> {
    await this.space.put(address, { address, at: this.now() });
    const all = await collect(this.space.entries());
    if (all.length <= this.max) return;
    const oldest = all.sort(([, x], [, y]) => x.at - y.at).slice(0, all.length - this.max);
    for (const [k] of oldest) await this.space.del(k);
  }
}
