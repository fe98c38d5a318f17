/**
 * Where TEE evidence comes from (admin spec "TEE and network"; admin-wire-b §9). The node talks to
 * a {@link TeeProvider}; which one is chosen by `tee.provider` in `config.toml`:
 *
 * - `"none"` (the default): this machine has no TEE. Information answers truthfully that none is
 *   present; attestation is refused with 501, as the reference answers without TDX hardware.
 * - anything else: the path of an ES module (absolute, or relative to the node's home) whose
 *   `createTeeProvider()` returns a provider. This is how a real attestation provider plugs in
 *   (a TDX guest's configfs-tsm, a cloud vTPM service, …) without changing the node. A module that
 *   is missing or fails to load leaves the node running; attestation then answers 501 naming why.
 *
 * Quote verification stays the caller's (the spec removed `verify-quote`): a provider produces
 * evidence, the node never judges it.
 */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** `GET /tee/info` fields (admin-wire-b §9.2). */
export interface TeeInfo {
  /** `gcp`, … or `unknown` */
  cloudProvider: string;
  osImage: string;
  /** the TD launch measurement, hex (48 bytes on TDX); empty when there is none */
  mrtd: string;
}

export interface TeeQuote {
  /** the raw quote */
  quote: Uint8Array;
  /** the quote decoded as the reference shows it (`header`, `body`, `signature`, …), when the provider decodes it */
  parsed?: Record<string, unknown>;
  /** verification collateral, when asked for and available */
  collateral?: Record<string, unknown>;
}

export interface TeeProvider {
  /** shown in `GET /tee/info` and in refusals */
  readonly name: string;
  info(signal: AbortSignal): Promise<TeeInfo>;
  /**
   * A quote whose report data is exactly `reportData` (64 bytes). Throws when the hardware refuses;
   * the message reaches the caller, so it must not carry secrets.
   */
  quote(reportData: Uint8Array, opts: { includeCollateral: boolean; signal: AbortSignal }): Promise<TeeQuote>;
}

/** The provider chosen by configuration, or why there is none to attest with. */
export type TeeBackend = { kind: 'ready'; provider: TeeProvider } | { kind: 'absent'; name: string; reason: string };

export const NO_TEE = 'none';

/**
 * Resolves `tee.provider`. Never throws: a provider that cannot be loaded is reported as absent with
 * the reason, so the node still starts and the TEE routes explain themselves.
 */
export async function loadTeeBackend(setting: string, home: string): Promise<TeeBackend> {
  const name = setting.trim() === '' ? NO_TEE : setting.trim();
  if (name === NO_TEE) {
    return { kind: 'absent', name, reason: 'this machine has no TEE (tee.provider = "none" in config.toml)' };
  }
  const path = isAbsolute(name) ? name : resolve(home, name);
  let mod: { createTeeProvider?: unknown };
  try {
    mod = (await import(pathToFileURL(path).href)) as { createTeeProvider?: unknown };
  } catch (err) {
    return { kind: 'absent', name, reason: `the configured TEE provider ${path} could not be loaded: ${(err as Error).message.split('\n')[0]}` };
  }
  if (typeof mod.createTeeProvider !== 'function') {
    return { kind: 'absent', name, reason: `the configured TEE provider ${path} does not export createTeeProvider()` };
  }
  try {
    const provider = (await (mod.createTeeProvider as () => unknown)()) as TeeProvider;
    if (typeof provider?.info !== 'function' || typeof provider?.quote !== 'function') {
      return { kind: 'absent', name, reason: `the configured TEE provider ${path} returned no info()/quote() provider` };
    }
    return { kind: 'ready', provider };
  } catch (err) {
    return { kind: 'absent', name, reason: `the configured TEE provider ${path} failed to start: ${(err as Error).message.split('\n')[0]}` };
  }
}
