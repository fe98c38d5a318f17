/**
 * The accounts domain's face: this node's account and its devices (`AccountService`), loaded from
 * the store when the node opens. The node identity itself (`identity.ts`) is loaded before
 * governance, which signs with it.
 *
 * @example
 * const accounts = await createAccounts({ store, identity, clock, governance, isInstalled });
 */
import type { RouteGroups } from '../http/route-groups.ts';
import { registerAccountRoutes } from './account-routes.ts';
import { registerIdentityRoutes } from './routes.ts';
import { AccountService, type AccountServiceDeps } from './service.ts';

export interface AccountsDomain {
  readonly name: 'accounts';
  accounts: AccountService;
  /** the node identity's routes and this node's account's */
  routes: RouteGroups;
}

export async function createAccounts(d: AccountServiceDeps): Promise<AccountsDomain> {
  const accounts = new AccountService(d);
  await accounts.load();
  const routes = {
    accounts: (app) => {
      registerIdentityRoutes(app, { identity: d.identity, accounts });
      registerAccountRoutes(app, { accounts });
    },
  } satisfies RouteGroups;
  return { name: 'accounts', accounts, routes };
}

// What the other folders use of this domain: they import it only through this face (issue #35).
export { registerDeviceOps } from './device-ops.ts';
