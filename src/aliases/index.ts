/**
 * The aliases domain's face: names for context, application and device ids, per scope, kept in the
 * node's store (`/admin-api/alias*`). No lifecycle.
 *
 * @example
 * const aliases = createAliases({ store });
 * aliases.routes.aliases(app);
 */
import type { RouteGroups } from '../http/route-groups.ts';
import type { Store } from '../store/store.ts';
import { registerAliasRoutes } from './routes.ts';
import { AliasService } from './service.ts';

export interface AliasesDomain {
  readonly name: 'aliases';
  aliases: AliasService;
  routes: RouteGroups;
}

export function createAliases(d: { store: Store }): AliasesDomain {
  const aliases = new AliasService(d);
  return { name: 'aliases', aliases, routes: { aliases: (app) => registerAliasRoutes(app, { aliases }) } };
}
