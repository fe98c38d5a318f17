/**
 * `hearth tee info | attest | registration-attest` (issue #15) over the TEE routes (admin spec "TEE
 * and network"; docs/tee.md). On a machine without a TEE `info` and the attestations fail with the
 * node's 501, naming why.
 */
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { idArgFor } from './id-args.ts';
import { connectOptions, withCli, type ConnectOpts } from './connect.ts';
import type { TeeAttestResult } from '../client/index.ts';

const nonceArg = (v: string): string => {
  if (!/^[0-9a-fA-F]{64}$/.test(v)) throw new Error('--nonce must be 32 bytes as 64 hex characters');
  return v.toLowerCase();
};

const renderQuote = (nonce: string, r: TeeAttestResult) =>
  [`nonce:        ${nonce}`, `quote:        ${r.quoteB64.length} base64 characters`, ...(r.boundPublicKey ? [`bound key:    ${r.boundPublicKey}`] : [])].join('\n');

export function registerTeeCommands(program: Command): void {
  const tee = program.command('tee').description('TEE information and attestation quotes');

  connectOptions(tee.command('info').description('what TEE the node runs in (no login needed)')).action(
    withCli(async (cli) => {
      const info = await cli.client.tee.info({ signal: cli.signal });
      // a node without a TEE answers 501 naming why: that error is the answer (one line, exit code)
      cli.out.result(info, () => [`cloud provider: ${info.cloudProvider}`, `os image:       ${info.osImage}`, `mrtd:           ${info.mrtd || '-'}`].join('\n'));
    }),
  );

  connectOptions(
    tee
      .command('attest')
      .description('a quote whose report data starts with a nonce (no login needed)')
      .option('--nonce <hex>', '32 bytes as 64 hex (default: fresh random)', nonceArg)
      .option('--application <id>', "bind this installed application's bundle", idArgFor('application id'))
      .option('--bind-node-key', "bind the node's signing key")
      .option('--collateral', 'include verification collateral'),
  ).action(
    withCli<ConnectOpts & { nonce?: string; application?: string; bindNodeKey?: boolean; collateral?: boolean }>(async (cli, _args, o) => {
      const nonce = o.nonce ?? randomBytes(32).toString('hex');
      const r = await cli.client.tee.attest(
        { nonce, ...(o.application ? { applicationId: o.application } : {}), ...(o.bindNodeKey ? { bindNodeKey: true } : {}), ...(o.collateral ? { includeCollateral: true } : {}) },
        { signal: cli.signal },
      );
      cli.out.result({ nonce, ...r }, () => renderQuote(nonce, r));
    }),
  );

  connectOptions(
    tee.command('registration-attest').description("a quote binding a nonce to the node's account and signing key").option('--nonce <hex>', '32 bytes as 64 hex (default: fresh random)', nonceArg),
  ).action(
    withCli<ConnectOpts & { nonce?: string }>(async (cli, _args, o) => {
      const nonce = o.nonce ?? randomBytes(32).toString('hex');
      const r = await cli.client.tee.registrationAttest({ nonce }, { signal: cli.signal });
      cli.out.result({ nonce, ...r }, () => renderQuote(nonce, r));
    }),
  );
}
