/**
 * Account and devices routes (admin spec "Account and devices"; admin-wire-b §3): parse, call,
 * shape. `GET /account/devices` and `GET /account/applications` are flat; the rest enveloped.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { parseId, requireId } from '../crypto/ids.ts';
import { badRequest } from '../errors.ts';
import { MAX_SCOPE_APPLICATIONS, type AccountService, type DeviceScope } from './service.ts';
import { Errors } from '../http/response-schemas.ts';
import {
  ApplicationsAnswer,
  DeviceParams,
  DevicesAnswer,
  LabelAnswer,
  LabelRequest,
  PairCompleteAnswer,
  PairCompleteRequest,
  PairInitAnswer,
  PairInitRequest,
  RelinkAnswer,
  RelinkDoc,
  RescopeAnswer,
  ScopeRequest,
  SignWithRootAnswer,
  SignWithRootRequest,
} from './schemas.ts';

function deviceIdParam(s: string): string {
  const id = parseId(s);
  if (!id) throw badRequest('deviceId must be 64 hex chars (32 bytes)');
  return id;
}

function hexField(value: string, field: string, bytes: number): string {
  if (!new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(value)) throw badRequest(`${field}: invalid length, expected ${bytes} bytes as hex`);
  return value.toLowerCase();
}

const appIds = (list: string[]) => list.map((a) => requireId(a, `application id '${a}'`));

export function registerAccountRoutes(root: FastifyInstance, deps: { accounts: AccountService }): void {
  const app = root.withTypeProvider<TypeBoxTypeProvider>();
  const { accounts } = deps;

  const read = (summary: string, answer: object) => ({ schema: { summary, response: { 200: answer, ...Errors(401, 403) } } });

  app.get('/admin-api/account/devices', read('Every device of the account, revoked ones included (flat)', DevicesAnswer), async () => ({
    devices: accounts.registry.all().map((r) => ({
      deviceId: r.deviceId,
      signingKey: r.signingKey,
      isSelf: r.deviceId === accounts.selfDeviceId,
      revoked: r.revoked,
      applications: r.applications,
      namespaces: accounts.boundIn(r),
      ...(r.label !== undefined ? { label: r.label } : {}),
      labelEpoch: r.labelEpoch,
    })),
  }));

  app.get('/admin-api/account/applications', read('Applications of the namespaces the account takes part in (flat)', ApplicationsAnswer), async () => ({
    applications: accounts.applications(),
  }));

  const pairInit = { summary: 'Pairing offer, run on the new device\'s node', body: PairInitRequest, response: { 200: PairInitAnswer, ...Errors(400, 401, 403) } };
  app.post('/admin-api/account/pair-init', { schema: pairInit }, async (req) => {
    const b = req.body;
    const rootKey = hexField(b.accountRootPublicKey, 'accountRootPublicKey', 32);
    for (const ns of b.namespaces ?? []) requireId(ns, `namespace id '${ns}'`);
    if (b.accountNamespace !== undefined) requireId(b.accountNamespace, 'accountNamespace');
    if ((b.namespaces ?? []).length === 0 && b.accountNamespace === undefined) {
      throw badRequest('namespaces may be empty only when accountNamespace is given');
    }
    return { data: accounts.pairInit(rootKey) };
  });

  const pairComplete = {
    summary: 'Certifies a paired device, run on the node holding the account root',
    body: PairCompleteRequest,
    response: { 200: PairCompleteAnswer, ...Errors(400, 401, 403, 409) },
  };
  app.post('/admin-api/account/pair-complete', { schema: pairComplete }, async (req) => {
    const b = req.body;
    if (b.confirmationCode.trim() === '') throw badRequest('confirmationCode must not be blank');
    const result = await accounts.pairComplete({
      deviceId: hexField(b.deviceId, 'deviceId', 32),
      kemPublicKey: hexField(b.kemPublicKey, 'kemPublicKey', 32),
      signPublicKey: hexField(b.signPublicKey, 'signPublicKey', 32),
      statement: hexField(b.statement, 'statement', 72),
      confirmationCode: b.confirmationCode,
      applications: appIds(b.applications ?? []),
    });
    return { data: result };
  });

  // optional body (spec): no schema, so an absent body is `[]`, i.e. every application
  const relink = { summary: 'Widens a device\'s scope (add-only) and binds it where the scope reaches', params: DeviceParams, response: { 200: RelinkAnswer, ...Errors(400, 401, 403, 404) } };
  app.post('/admin-api/account/devices/:deviceId/relink', { schema: relink, config: { docs: { body: RelinkDoc } } }, async (req) => {
    const deviceId = deviceIdParam(req.params.deviceId);
    const b = req.body as { applications?: unknown } | undefined | null;
    const apps = b?.applications ?? [];
    if ((b != null && typeof b !== 'object') || !Array.isArray(apps) || apps.some((a) => typeof a !== 'string')) {
      throw badRequest('applications must be an array of application ids');
    }
    return { data: await accounts.relink(deviceId, appIds(apps as string[])) };
  });

  const scope = {
    summary: 'Replaces a device\'s scope (DeviceScope); namespaces no longer covered lose the binding',
    params: DeviceParams,
    body: ScopeRequest,
    response: { 200: RescopeAnswer, ...Errors(400, 401, 403, 404) },
  };
  app.put('/admin-api/account/devices/:deviceId/scope', { schema: scope }, async (req) => {
    const deviceId = deviceIdParam(req.params.deviceId);
    const s = req.body.scope;
    let scope: DeviceScope;
    if (s === 'all') scope = 'all';
    else {
      if (s.only.length === 0) throw badRequest('scope.only must name at least one application (ScopeReplacementEmpty)');
      if (s.only.length > MAX_SCOPE_APPLICATIONS) throw badRequest(`scope.only names more than ${MAX_SCOPE_APPLICATIONS} applications`);
      scope = { only: s.only.map((a) => requireId(a, `application id: '${a}'`)) };
    }
    return { data: await accounts.rescope(deviceId, scope) };
  });

  const label = {
    summary: 'Names a device (replicated; labelEpoch orders concurrent renames)',
    params: DeviceParams,
    body: LabelRequest,
    response: { 200: LabelAnswer, ...Errors(400, 401, 403, 404, 409, 429) },
  };
  app.put('/admin-api/account/devices/:deviceId/label', { schema: label }, async (req) => {
    const deviceId = deviceIdParam(req.params.deviceId);
    const label = req.body.label.trim();
    if (label === '') throw badRequest('label must not be empty');
    if ([...label].length > 64) throw badRequest('label must be at most 64 characters');
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(label)) throw badRequest('label must not contain control characters');
    return { data: await accounts.label(deviceId, label) };
  });

  const signWithRoot = { summary: 'Signs a challenge with the account root key', body: SignWithRootRequest, response: { 200: SignWithRootAnswer, ...Errors(400, 401, 403) } };
  app.post('/admin-api/account/sign-with-root', { schema: signWithRoot }, async (req) => {
    const { domain, text, payload } = req.body;
    if (text !== undefined && payload !== undefined && text.toLowerCase() !== payload.toLowerCase()) {
      throw badRequest('text and payload name different challenges; send one of them');
    }
    const challenge = text ?? payload;
    if (challenge === undefined) throw badRequest('text (the hex-encoded challenge) is required');
    if (challenge.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(challenge)) throw badRequest('text must be even-length hex');
    if (challenge.length / 2 > 4096) throw badRequest('text must decode to at most 4096 bytes');
    return { data: accounts.signWithRoot(domain, Buffer.from(challenge, 'hex')) };
  });
}
