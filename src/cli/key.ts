/**
 * `hearth key …` (issue #6; auth spec "Endpoints" `/admin/keys*`, `/admin/client-key`;
 * auth-wire §2.7–2.14): the node's root keys (who may log in) and client keys (scoped tokens
 * handed to applications and scripts).
 *
 * Secrets: a new root key's password comes from `--password-file`, `--password-stdin`,
 * `$HEARTH_KEY_PASSWORD` or a hidden prompt, never from an argument. A new client key's tokens are
 * written to `--out <file>` (mode 0600) when given; otherwise `--output json` prints them, and human
 * output prints them only with `--show-tokens` — without either it refuses before minting a key
 * whose tokens nobody would ever see.
 */
import { stat, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { clientIdOf, type ClientKey, type GenerateClientKeyRequest, type RootKey } from '../client/index.ts';
import { conflict } from '../errors.ts';
import { connectOptions, withCli, type ConnectOpts } from './connect.ts';
import { UsageError } from './exit.ts';
import { collect, idArg } from './id-args.ts';
import { MIN_PREFIX, refArg } from './refs.ts';
import { secondsArg } from './group-args.ts';
import { when } from './output.ts';
import { readSecretFrom } from './prompt.ts';
import { errnoText } from '../errno-text.ts';
import { registerOwnerTransfer } from './key-owner.ts';

interface CreateKeyFlags extends ConnectOpts {
  username?: string;
  publicKey?: string;
  authMethod: string;
  passwordFile?: string;
  passwordStdin?: boolean;
}

interface ClientCreateFlags extends ConnectOpts {
  context?: string;
  contextIdentity?: string;
  permission?: string[];
  application?: string;
  ttl?: number;
  showTokens?: boolean;
  out?: string;
  force?: boolean;
}

interface PermissionFlags extends ConnectOpts {
  add?: string[];
  remove?: string[];
}

/** Unix seconds → ISO 8601 (UTC), for people. */

export function registerKeyCommands(program: Command): void {
  const key = program.command('key').description('root keys (who may log in) and client keys (scoped tokens)');

  connectOptions(key.command('list').alias('ls').description('every root key, revoked ones included')).action(
    withCli(async (cli) => {
      const keys = await cli.client.auth.listRootKeys({ signal: cli.signal });
      cli.out.table<RootKey>(keys, [
        { header: 'key id', value: (k) => k.key_id },
        { header: 'public key', value: (k) => k.public_key },
        { header: 'method', value: (k) => k.auth_method },
        { header: 'permissions', value: (k) => k.permissions },
        { header: 'created', value: (k) => when(k.created_at) },
        { header: 'revoked', value: (k) => when(k.revoked_at) },
      ], 'no root keys');
    }),
  );

  connectOptions(
    key
      .command('create')
      .description('create (or overwrite) a username/password root key with admin permission')
      .option('--username <user>', 'the account name the key logs in with')
      .option('--public-key <text>', 'public key recorded with the key (default: the username)')
      .option('--auth-method <method>', 'auth method (the node knows user_password)', 'user_password')
      .option('--password-file <file>', 'read the password from a file')
      .option('--password-stdin', 'read the password from the first line of stdin'),
  ).action(
    withCli<CreateKeyFlags>(async (cli, _args, flags) => {
      if (!flags.username) throw new UsageError('pass --username <user> for the new key');
      const password = await readSecretFrom({
        label: 'password for the new key',
        file: flags.passwordFile,
        stdin: flags.passwordStdin,
        env: ['HEARTH_KEY_PASSWORD'],
      });
      const result = await cli.client.auth.createRootKey(
        {
          public_key: flags.publicKey ?? flags.username,
          auth_method: flags.authMethod,
          provider_data: { username: flags.username, password },
        },
        { signal: cli.signal },
      );
      if (!result.status) throw conflict(result.message);
      cli.out.result({ ...result, username: flags.username }, () => `${result.message} for ${flags.username} (see: hearth key list)`);
    }),
  );

  connectOptions(
    key.command('revoke').description('revoke a root key (the node keeps its last active one)').argument('<key>', `root key id (64 hex) or a unique prefix (${MIN_PREFIX}+)`, refArg('rootKey', 'root key id')),
    { destructive: true },
  ).action(
    withCli(async (cli, [keyId]) => {
      await cli.confirm(`revoke root key ${keyId}? Tokens issued to it stop working`);
      const result = await cli.client.auth.deleteRootKey(keyId, { signal: cli.signal });
      // hearth refuses the last admin key with 409; a reference node answers 200 and status false.
      if ('status' in result) throw conflict(result.message);
      cli.out.result(result, () => `revoked root key ${result.key_id} at ${when(result.revoked_at)}`);
    }),
  );

  connectOptions(
    key
      .command('permissions')
      .description("show a key's permissions, or change them with --add / --remove")
      .argument('<key>', `root key id (64 hex) or client key id (UUID), or a unique prefix (${MIN_PREFIX}+) of one`, refArg('key', 'key id'))
      .option('--add <permission>', 'grant a permission (repeatable)', collect)
      .option('--remove <permission>', 'withdraw a permission (repeatable)', collect),
  ).action(
    withCli<PermissionFlags>(async (cli, [keyId], flags) => {
      const change = Boolean(flags.add?.length || flags.remove?.length);
      const { permissions } = change
        ? await cli.client.auth.updateKeyPermissions(keyId, { add: flags.add ?? [], remove: flags.remove ?? [] }, { signal: cli.signal })
        : await cli.client.auth.getKeyPermissions(keyId, { signal: cli.signal });
      cli.out.result({ key_id: keyId, permissions }, () =>
        [`${change ? 'permissions of' : 'key'} ${keyId}${change ? ' are now' : ''}:`, ...permissions.map((p) => `  ${p}`)].join('\n'),
      );
    }),
  );

  registerOwnerTransfer(key);

  connectOptions(key.command('clients').description('every client key, revoked and expired ones included')).action(
    withCli(async (cli) => {
      const keys = await cli.client.auth.listClientKeysWithDetails({ signal: cli.signal });
      cli.out.table<ClientKey>(keys, [
        { header: 'client id', value: (k) => k.client_id },
        { header: 'root key', value: (k) => k.root_key_id },
        { header: 'name', value: (k) => k.name },
        { header: 'permissions', value: (k) => k.permissions },
        { header: 'expires', value: (k) => when(k.expires_at) },
        { header: 'valid', value: (k) => (k.is_valid ? 'yes' : 'no') },
      ], 'no client keys (create one with: hearth key client create)');
    }),
  );

  const client = key.command('client').description('mint and revoke client keys');

  connectOptions(
    client
      .command('create')
      .description('mint a scoped client key and print or save its tokens')
      .option('--context <id>', 'bind the key to this context (with --context-identity)', refArg('context', undefined, '--context'))
      .option('--context-identity <key>', 'the context identity (public key, 64 hex) the key acts as', idArg)
      .option('--permission <permission>', 'a permission for the key, held by your root key (repeatable)', collect)
      .option('--application <id>', 'bind the key to one application', refArg('application', undefined, '--application'))
      .option('--ttl <seconds>', "the key's lifetime (default: the node's, 30 days)", secondsArg)
      .option('--out <file>', 'write the tokens to this file (mode 0600) instead of printing them')
      .option('--force', 'replace an existing --out file')
      .option('--show-tokens', 'print the tokens in human output'),
  ).action(
    withCli<ClientCreateFlags>(async (cli, _args, flags) => {
      if (!flags.out && !flags.showTokens && !cli.out.json) {
        throw new UsageError('the tokens would be lost: pass --out <file> (written 0600), --show-tokens, or --output json');
      }
      if (Boolean(flags.context) !== Boolean(flags.contextIdentity)) {
        throw new UsageError('--context and --context-identity go together: the node binds a key to a context only with both');
      }
      const request: GenerateClientKeyRequest = {
        ...(flags.context ? { context_id: flags.context, context_identity: flags.contextIdentity } : {}),
        ...(flags.permission ? { permissions: flags.permission } : {}),
        ...(flags.application ? { application_id: flags.application } : {}),
        ...(flags.ttl ? { ttl_secs: flags.ttl } : {}),
      };
      const out = flags.out ? resolve(flags.out) : undefined;
      if (out && !flags.force && (await stat(out).then(() => true, () => false))) {
        throw new UsageError(`${flags.out} exists; pass --force to replace it`);
      }
      const { data } = await cli.client.auth.createClientKey(request, { signal: cli.signal });
      const tokens = { client_id: clientIdOf(data.access_token) ?? null, access_token: data.access_token, refresh_token: data.refresh_token };
      if (out) {
        await writeFile(out, `${JSON.stringify({ node: cli.nodeUrl, ...tokens }, null, 2)}\n`, { mode: 0o600, flag: flags.force ? 'w' : 'wx' }).catch(
          (err: NodeJS.ErrnoException) => {
            // The key exists on the node now: say which, so it can be revoked.
            const what = err.code === 'EEXIST' ? `${flags.out} exists (pass --force to replace it)` : `cannot write ${flags.out}: ${errnoText(err)}`;
            throw new UsageError(`${what}; the client key ${tokens.client_id ?? ''} was created and its tokens discarded — revoke it with: hearth key client revoke`);
          },
        );
        cli.out.result({ client_id: tokens.client_id, path: out }, () => `created client key ${tokens.client_id ?? '(id not reported)'}\ntokens written to ${out} (mode 0600)`);
        return;
      }
      cli.out.result(tokens, () =>
        [`created client key ${tokens.client_id ?? '(id not reported)'}`, `access token:  ${tokens.access_token}`, `refresh token: ${tokens.refresh_token}`].join('\n'),
      );
    }),
  );

  connectOptions(
    client
      .command('revoke')
      .description('revoke a client key (its tokens stop working)')
      .argument('<key>', `the root key it belongs to (64 hex, or a unique prefix of ${MIN_PREFIX}+)`, refArg('rootKey', 'root key id'))
      .argument('<client>', `client key id (UUID, or a unique prefix of ${MIN_PREFIX}+)`, refArg('clientKey', 'client key id')),
    { destructive: true },
  ).action(
    withCli(async (cli, [keyId, clientId]) => {
      await cli.confirm(`revoke client key ${clientId}? Its tokens stop working`);
      const result = await cli.client.auth.deleteClientKey(keyId, clientId, { signal: cli.signal });
      cli.out.result({ client_id: clientId, ...result }, () => `revoked client key ${clientId} at ${when(result.revoked_at)}`);
    }),
  );
}
