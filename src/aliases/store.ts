/**
 * Persistence of aliases (admin spec "Aliases"; admin-wire-a §6): one store space, `aliases`,
 * keyed `<scope>/<alias>`. All three scopes are node-global (the reference keys context and
 * application aliases per node, and device aliases the same way), so the scope is the only
 * namespace an alias lives in. The `/` separator cannot occur in a valid alias, so a scope's
 * prefix never matches another scope's keys, and key order is alias order (the listing's order).
 */
import type { Space, Store } from '../store/store.ts';

export type AliasScope = 'context' | 'application' | 'device';

/** What is stored per alias; an object (not a bare string) so fields can be added later. */
export interface AliasRecord {
  /** the target id, 64 lowercase hex */
  value: string;
}

const keyOf = (scope: AliasScope, name: string): string => `${scope}/${name}`;

export class AliasStore {
  private readonly space: Space<AliasRecord>;

  constructor(store: Store) {
    this.space = store.space<AliasRecord>('aliases');
  }

  async get(scope: AliasScope, name: string): Promise<AliasRecord | undefined> {
    return this.space.get(keyOf(scope, name));
  }

  async put(scope: AliasScope, name: string, record: AliasRecord): Promise<void> {
    await this.space.put(keyOf(scope, name), record);
  }

  async del(scope: AliasScope, name: string): Promise<void> {
    await this.space.del(keyOf(scope, name));
  }

  /** Every alias of one scope, ordered by alias. */
  async *list(scope: AliasScope): AsyncIterable<[name: string, record: AliasRecord]> {
    const prefix = `${scope}/`;
    for await (const [key, record] of this.space.entries({ prefix })) yield [key.slice(prefix.length), record];
  }
}
