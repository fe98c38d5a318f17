/**
 * The aliases domain's face: names for context, application and device ids, per scope, kept in the
 * node's store (`/admin-api/alias*`). No lifecycle.
 *
 * @example
 * const aliases = createAliases({ store });
 * registerAliasRoutes(app, aliases);
 */
import type { Store } from '../store/store.ts';
import { AliasService } from './service.ts';

export interface AliasesDomain {
  readonly name: 'aliases';
  aliases: AliasService;
}

export function createAliases(d: { store: Store }): AliasesDomain {
  return { name: 'aliases', aliases: new AliasService(d) };
}

// What the other folders use of this domain: they import it only through this face (issue #35).
export { registerAliasRoutes } from './routes.ts';
