/**
 * Request schemas of the contexts routes (admin spec "Contexts"; admin-wire-a §4.3, §4.9). Fields
 * older clients still send (e.g. `protocol`, `executorPublicKey`, `requester`) are accepted and
 * ignored (reference README precedence rule 3); ids are checked by the handlers so the message says
 * which id is wrong.
 */
import { Type } from 'typebox';

const Byte = Type.Integer({ minimum: 0, maximum: 255 });

export const CreateContextRequest = Type.Object({
  groupId: Type.String(),
  applicationId: Type.Optional(Type.String()),
  initializationParams: Type.Optional(Type.Array(Byte)),
  contextSeed: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  identitySecret: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  serviceName: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
});

export const UpdateApplicationRequest = Type.Object({ applicationId: Type.String() });

export const QueryContextRequest = Type.Object({ method: Type.String(), argsJson: Type.Optional(Type.Unknown()) });

export const ContextParams = Type.Object({ contextId: Type.String() });
export const ApplicationParams = Type.Object({ applicationId: Type.String() });
export const ListQuery = Type.Object({ offset: Type.Optional(Type.String()), limit: Type.Optional(Type.String()) });
