/**
 * The delegation domain's face: delegated execution — context intents run for members under
 * warrants (`IntentService`) and governance intents relayed for them (`GroupIntentService`) — and
 * the op kinds it adds to governance's log (`ops.ts`, registered by the composition root).
 *
 * @example
 * const delegation = createDelegation({ store, governance, contexts, applications, identity, clock });
 */
import type { RouteGroups } from '../http/route-groups.ts';
import { GroupIntentService, type GroupIntentDeps } from './group-intents.ts';
import { IntentService, type IntentServiceDeps } from './intents.ts';
import { registerDelegationRoutes } from './routes.ts';

export { registerDelegationOps } from './ops.ts';

export interface DelegationDomain {
  readonly name: 'delegation';
  intents: IntentService;
  groupIntents: GroupIntentService;
  routes: RouteGroups;
}

export function createDelegation(d: IntentServiceDeps & GroupIntentDeps): DelegationDomain {
  const intents = new IntentService(d);
  const groupIntents = new GroupIntentService(d);
  return { name: 'delegation', intents, groupIntents, routes: { delegation: (app) => registerDelegationRoutes(app, { intents, groupIntents }) } };
}
