/**
 * Request schemas of the application routes (admin spec "Applications and packages"). The
 * install-application body is checked by hand in routes.ts, because the spec orders a refusal that
 * names the unknown field; install-dev accepts and ignores the fields older clients still send
 * (`metadata`, `package`, `version`; README precedence rule 3).
 */
import { Type } from 'typebox';

export const InstallDevRequest = Type.Object({ path: Type.String() });
export const AppIdParams = Type.Object({ id: Type.String() });
export const PackageParams = Type.Object({ package: Type.String() });
export const AbiQuery = Type.Object({ service_name: Type.Optional(Type.String()) });
