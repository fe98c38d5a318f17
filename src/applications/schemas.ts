/**
 * Request and response schemas of the application routes (admin spec "Applications and packages";
 * admin-wire-a §3). The install-application body is checked by hand in routes.ts, because the spec
 * orders a refusal that names the unknown field, so its schema here only documents it; install-dev
 * accepts and ignores the fields older clients still send (`metadata`, `package`, `version`;
 * README precedence rule 3). Response schemas document the wire (issue #6); they never drive
 * serialisation.
 */
import { Type } from 'typebox';
import { Data, Hex32 } from '../http/response-schemas.ts';

export const InstallDevRequest = Type.Object({ path: Type.String({ description: 'a signed .mpk on the node’s filesystem' }) });
export const AppIdParams = Type.Object({ id: Type.String({ description: 'application id: 64 hex (base58 accepted)' }) });
export const PackageParams = Type.Object({ package: Type.String({ description: 'package name, e.g. com.example.app' }) });
export const AbiQuery = Type.Object({
  service_name: Type.Optional(Type.String({ description: 'the service of a multi-service bundle' })),
});

/** Documentation only: routes.ts parses it (the 400 names any field other than these two). */
export const InstallRequest = Type.Object({
  package: Type.String({ minLength: 1 }),
  version: Type.String({ minLength: 1 }),
});

// ---- responses ------------------------------------------------------------------------------------

const BlobPair = Type.Object({
  bytecode: Hex32('blob id of the bundle (or of the service wasm)'),
  compiled: Hex32('always 64 zeros: compiled artifacts are not kept as blobs'),
});

/** admin-wire-a §3.2: exactly the reference's keys, snake_case `signer_id` included. */
export const ApplicationRow = Type.Object({
  id: Hex32(),
  blob: BlobPair,
  size: Type.Integer({ minimum: 0, description: 'bundle size in bytes' }),
  source: Type.String({ description: 'where it was installed from (file: or registry URL)' }),
  metadata: Type.Array(Type.Integer({ minimum: 0, maximum: 255 }), { description: 'UTF-8 bytes of the manifest metadata JSON' }),
  signer_id: Type.String(),
  package: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  services: Type.Optional(Type.Record(Type.String(), BlobPair, { description: 'per service of a multi-service bundle' })),
});

export const ApplicationIdAnswer = Data(Type.Object({ applicationId: Hex32() }));
export const ApplicationList = Data(Type.Object({ apps: Type.Array(ApplicationRow) }));
export const ApplicationAnswer = Data(Type.Object({ application: ApplicationRow }));
export const AbiAnswer = Data(
  Type.Union([Type.Object({}, { description: 'the embedded calimero_abi_v1 ABI' }), Type.Null()], { description: 'null when the wasm carries no ABI' }),
);
export const VersionList = Data(
  Type.Array(
    Type.Object({
      version: Type.String(),
      blobId: Hex32('bundle blob of that version'),
      size: Type.Integer({ minimum: 0 }),
      package: Type.String(),
    }),
    { description: 'every retained version, newest first' },
  ),
);
/** Flat, as the reference sends the three package answers. */
export const PackageList = Type.Object({ packages: Type.Array(Type.String()) });
export const PackageVersions = Type.Object({ versions: Type.Array(Type.String(), { description: 'newest first' }) });
export const LatestAnswer = Type.Object({
  applicationId: Type.Union([Hex32(), Type.Null()]),
  version: Type.Union([Type.String(), Type.Null()]),
});
