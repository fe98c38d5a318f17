/**
 * Request and response schemas of the alias routes (admin spec "Aliases"; admin-wire-a §6.1).
 * The create forms are one per scope: `{alias, contextId}`, `{alias, applicationId}`,
 * `{alias, deviceId}`. Other fields are accepted and ignored (reference README precedence rule 3).
 * The alias grammar and id encodings are checked by the service, so its messages say which rule
 * failed rather than quoting a regular expression.
 */
import { Type } from 'typebox';

export const CreateContextAliasRequest = Type.Object({ alias: Type.String(), contextId: Type.String() });
export const CreateApplicationAliasRequest = Type.Object({ alias: Type.String(), applicationId: Type.String() });
export const CreateDeviceAliasRequest = Type.Object({ alias: Type.String(), deviceId: Type.String() });

export const ScopeParams = Type.Object({ scope: Type.String() });
export const ScopeNameParams = Type.Object({ scope: Type.String(), name: Type.String() });
