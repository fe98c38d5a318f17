/**
 * Request and response schemas of the alias routes (admin spec "Aliases"; admin-wire-a §6.1).
 * The create forms are one per scope: `{alias, contextId}`, `{alias, applicationId}`,
 * `{alias, deviceId}`; the route checks the form of the scope in its path (`routes.ts`), so the
 * union below only documents them. Other fields are accepted and ignored (reference README
 * precedence rule 3). The alias grammar and id encodings are checked by the service, so its
 * messages say which rule failed rather than quoting a regular expression.
 */
import { Type } from 'typebox';
import { Data, Hex32 } from '../http/response-schemas.ts';

const Alias = Type.String({ description: '1–50 of A–Z a–z 0–9 . _ -' });
const TargetId = (what: string) => Type.String({ description: `the ${what} id: 64 hex characters (base58 of 32 bytes accepted)` });

export const CreateContextAliasRequest = Type.Object({ alias: Alias, contextId: TargetId('context') });
export const CreateApplicationAliasRequest = Type.Object({ alias: Alias, applicationId: TargetId('application') });
export const CreateDeviceAliasRequest = Type.Object({ alias: Alias, deviceId: TargetId('device') });

/** Documentation only: the form of each scope, in scope order. */
export const CreateAliasRequest = Type.Union([CreateContextAliasRequest, CreateApplicationAliasRequest, CreateDeviceAliasRequest], {
  description: 'scope context: {alias, contextId}; application: {alias, applicationId}; device: {alias, deviceId}',
});

// No enum on `scope`: an unknown scope (`identity` included) is a 404 naming the scopes, not a 400.
const Scope = Type.String({ description: 'context, application or device; any other scope is 404' });
export const ScopeParams = Type.Object({ scope: Scope });
export const ScopeNameParams = Type.Object({ scope: Scope, name: Type.String({ description: 'the alias' }) });

export const LookupAliasResponse = Data(
  Type.Object({ value: Type.Union([Hex32('the id the alias names'), Type.Null()], { description: 'null when there is no such alias' }) }),
);

export const ListAliasesResponse = Data(
  Type.Record(Type.String(), Hex32(), { description: 'alias → id, in alias order; {} when there are none' }),
);
