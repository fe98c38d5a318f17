/**
 * The accounts domain's face: this node's account and its devices (`AccountService`), loaded from
 * the store when the node opens. The node identity itself (`identity.ts`) is loaded before
 * governance, which signs with it.
 *
 * @example
 * const accounts = await createAccounts({ store, identity, clock, governance, isInstalled });
 */
import { AccountService, type AccountServiceDeps } from './service.ts';

export interface AccountsDomain {
  readonly name: 'accounts';
  accounts: AccountService;
}

export async function createAccounts(d: AccountServiceDeps): Promise<AccountsDomain> {
  const accounts = new AccountService(d);
  await accounts.load();
  return { name: 'accounts', accounts };
}

// What the other folders use of this domain: they import it only through this face (issue #35).
export { registerAccountRoutes } from './account-routes.ts';
export { registerDeviceOps } from './device-ops.ts';
export { registerIdentityRoutes } from './routes.ts';
export type { AccountService } from './service.ts';
