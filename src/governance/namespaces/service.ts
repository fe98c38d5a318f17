/**
 * Namespaces (admin spec "Namespaces"; admin-wire-b §2): founding a namespace and reading,
 * listing and forgetting them. A namespace is its root group.
 */
import { randomBytes } from 'node:crypto';
import type { NodeIdentity } from '../../identity/identity.ts';
import type { Clock } from '../../clock.ts';
import { namespaceIdOf } from '../../crypto/ids.ts';
import { notFound } from '../../errors.ts';
import type { Governance } from '../log.ts';
import type { NamespaceState } from '../types.ts';
import { inAccountScope } from './scope.ts';

/** The bytecode id a namespace pins when the caller names none and the application is unknown. */
export const UNRESOLVED_APP_KEY = '0'.repeat(64);

export interface FoundInput {
  applicationId: string;
  appKey?: string;
  name?: string;
}

export class NamespaceService {
  constructor(private readonly d: { governance: Governance; identity: NodeIdentity; clock: Clock }) {}

  async found(input: FoundInput): Promise<NamespaceState> {
    const founder = this.d.identity.accountId;
    const salt = randomBytes(32).toString('hex');
    const id = namespaceIdOf(founder, salt);
    const genesis = { salt, applicationId: input.applicationId, appKey: input.appKey ?? UNRESOLVED_APP_KEY, name: input.name };
    const { ns } = await this.d.governance.submitGenesis(id, { ...genesis, founderRootKey: this.d.identity.rootPublicKey });
    return ns;
  }

  list(): NamespaceState[] {
    // oldest first, then by id: the same order before and after a restart
    return this.d.governance
      .namespaces()
      .filter((ns) => inAccountScope(ns, this.d.identity.accountId))
      .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  get(id: string): NamespaceState {
    const ns = this.d.governance.namespace(id);
    if (!ns || !inAccountScope(ns, this.d.identity.accountId)) throw notFound(`namespace '${id}' not found`);
    return ns;
  }
}
