/**
 * The delegation domain's face: delegated execution — context intents run for members under
 * warrants (`IntentService`) and governance intents relayed for them (`GroupIntentService`) — and
 * the op kinds it adds to governance's log (`ops.ts`, registered by the composition root).
 *
 * @example
 * const delegation = createDelegation({ store, governance, contexts, applications, identity, clock });
 */
import { GroupIntentService, type GroupIntentDeps } from './group-intents.ts';
import { IntentService, type IntentServiceDeps } from './intents.ts';

export { registerDelegationOps } from './ops.ts';

export interface DelegationDomain {
  readonly name: 'delegation';
  intents: IntentService;
  groupIntents: GroupIntentService;
}

export function createDelegation(d: IntentServiceDeps & GroupIntentDeps): DelegationDomain {
  return { name: 'delegation', intents: new IntentService(d), groupIntents: new GroupIntentService(d) };
}

// What the other folders use of this domain: they import it only through this face (issue #35).
export { registerDelegationRoutes } from './routes.ts';
export type { DelegationRouteDeps } from './routes.ts';
