/**
 * The TEE routes without HTTP (admin spec "TEE and network"; admin-wire-b §9.2–§9.4): what this
 * node reports about its TEE, and attestation quotes bound to a caller's nonce.
 *
 * Report data (64 bytes) = the caller's 32-byte nonce ‖ a 32-byte binding:
 * - `attest`: zeros when nothing is bound; otherwise
 *   `domain_hash("hearth.tee.report.v1", [application bundle blob id | ε, node signing key | ε])`,
 *   so a verifier that knows what it asked for recomputes it;
 * - `registration-attest`: `domain_hash("hearth.tee.registration.v1", [account id, node signing key])`,
 *   a value `attest` never produces.
 * `bindTransportKey` is refused (409): this node has no transport key separate from its signing key.
 */
import type { NodeIdentity } from '../identity/identity.ts';
import type { ApplicationCatalog } from '../applications/index.ts';
import { domainHash, requireId } from '../crypto/ids.ts';
import { badRequest, conflict, HearthError, notFound, notImplemented } from '../errors.ts';
import { type TeeBackend, type TeeInfo, type TeeQuote } from './provider.ts';
import type { TeeAttestRequest } from '../wire/tee.ts';

/** How long a provider may take to produce a quote or its information. */
export const TEE_DEADLINE_MS = 30_000;
/**
 * Quotes being produced at once, at most. `attest` is public (as the reference routes it), so anyone
 * could otherwise make the node queue unbounded work at its TEE (a quote costs the hardware, or a
 * cloud call); beyond this, 503 with `Retry-After` at once (issue #23 section 6).
 */
export const TEE_MAX_QUOTES_IN_FLIGHT = 4;

export interface TeeServiceDeps {
  backend: TeeBackend;
  identity: NodeIdentity;
  applications: Pick<ApplicationCatalog, 'get'>;
}



export interface AttestAnswer {
  quoteB64: string;
  quote?: Record<string, unknown>;
  boundPublicKey?: string;
  collateral?: Record<string, unknown>;
}

const ZERO32 = Buffer.alloc(32);

function nonceBytes(nonce: unknown): Buffer {
  if (typeof nonce !== 'string' || !/^[0-9a-fA-F]{64}$/.test(nonce)) throw badRequest('nonce must be 32 bytes as 64 hex characters');
  return Buffer.from(nonce, 'hex');
}

export class TeeService {
  private quotesInFlight = 0;

  constructor(private readonly d: TeeServiceDeps) {}

  /**
   * TeeInfoResponseData exactly (`cloudProvider`, `osImage`, `mrtd`; admin-wire-b §9.2). Without a
   * TEE: 501 naming why (reference README: a clear error status; clients read a failure as "no TEE
   * information").
   */
  async info(signal?: AbortSignal): Promise<TeeInfo> {
    const b = this.d.backend;
    if (b.kind === 'absent') throw notImplemented(`TEE information is unavailable: ${b.reason}`);
    const info = await this.call((s) => b.provider.info(s), signal);
    return { cloudProvider: info.cloudProvider, osImage: info.osImage, mrtd: info.mrtd };
  }

  async attest(req: TeeAttestRequest, signal?: AbortSignal): Promise<AttestAnswer> {
    const nonce = nonceBytes(req.nonce);
    const applicationId = req.applicationId === undefined ? undefined : requireId(req.applicationId, 'applicationId');
    this.requireProvider();
    if (req.bindTransportKey) throw conflict('bindTransportKey: this node has no transport key separate from its signing key (bind the node key instead)');
    let bundle: Buffer | undefined;
    if (applicationId) {
      const app = await this.d.applications.get(applicationId);
      if (!app) throw notFound(`application '${applicationId}' is not installed on this node`);
      bundle = Buffer.from(app.bundleBlobId, 'hex');
    }
    const nodeKey = req.bindNodeKey ? Buffer.from(this.d.identity.publicKey, 'hex') : undefined;
    const binding = bundle || nodeKey ? domainHash('hearth.tee.report.v1', [bundle ?? Buffer.alloc(0), nodeKey ?? Buffer.alloc(0)]) : ZERO32;
    const q = await this.quote(Buffer.concat([nonce, binding]), req.includeCollateral ?? false, signal);
    return {
      quoteB64: Buffer.from(q.quote).toString('base64'),
      ...(q.parsed ? { quote: q.parsed } : {}),
      ...(nodeKey ? { boundPublicKey: this.d.identity.publicKey } : {}),
      ...(req.includeCollateral && q.collateral ? { collateral: q.collateral } : {}),
    };
  }

  async registrationAttest(req: { nonce: string }, signal?: AbortSignal): Promise<AttestAnswer> {
    const nonce = nonceBytes(req.nonce);
    this.requireProvider();
    const { accountId, publicKey } = this.d.identity;
    const binding = domainHash('hearth.tee.registration.v1', [Buffer.from(accountId, 'hex'), Buffer.from(publicKey, 'hex')]);
    const q = await this.quote(Buffer.concat([nonce, binding]), false, signal);
    return { quoteB64: Buffer.from(q.quote).toString('base64'), ...(q.parsed ? { quote: q.parsed } : {}) };
  }

  /** 501 naming why there is nothing to attest with (reference: no TDX hardware → 501). */
  private requireProvider(): void {
    const b = this.d.backend;
    if (b.kind === 'absent') throw notImplemented(`TEE attestation is unavailable: ${b.reason}`);
  }

  private async quote(reportData: Buffer, includeCollateral: boolean, signal?: AbortSignal): Promise<TeeQuote> {
    const b = this.d.backend;
    if (b.kind === 'absent') throw notImplemented(`TEE attestation is unavailable: ${b.reason}`);
    if (this.quotesInFlight >= TEE_MAX_QUOTES_IN_FLIGHT) {
      throw new HearthError('unavailable', `the TEE is producing ${this.quotesInFlight} quotes already; retry shortly`, { retryAfterSecs: 1 });
    }
    this.quotesInFlight++;
    try {
      return await this.call((s) => b.provider.quote(reportData, { includeCollateral, signal: s }), signal);
    } finally {
      this.quotesInFlight--;
    }
  }

  /** A provider call under the deadline; its own failures are the provider's (502), never a 500. */
  private async call<T>(fn: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const deadline = AbortSignal.timeout(TEE_DEADLINE_MS);
    const s = signal ? AbortSignal.any([signal, deadline]) : deadline;
    try {
      return await fn(s);
    } catch (err) {
      if (err instanceof HearthError) throw err;
      if (deadline.aborted) throw new HearthError('gateway_timeout', `the TEE provider did not answer within ${TEE_DEADLINE_MS / 1000} s`);
      throw new HearthError('bad_gateway', `the TEE provider failed: ${(err as Error).message}`);
    }
  }
}
