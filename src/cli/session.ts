/**
 * `hearth login | logout | profile list` (issue #6): log in once per profile and node; the token
 * pair lives in the profile file (0600) and the SDK refreshes it automatically; `logout` runs the
 * auth spec's logout procedure (end the session, revoke the client key) and forgets the tokens.
 * The password is read from `--password-file`, `--password-stdin`, `$HEARTH_PASSWORD` or a hidden
 * prompt — never from an argument.
 */
import type { Command } from 'commander';
import { createClient } from '../client/index.ts';
import { connectOptions, homeRoot, report, withCli, type ConnectOpts } from './connect.ts';
import { Output } from './output.ts';
import type { GlobalOpts } from './options.ts';
import { Profiles, ProfileTokenStore } from './profiles.ts';
import { readSecretFrom } from './prompt.ts';
import { UsageError } from './exit.ts';

interface LoginFlags extends ConnectOpts {
  username?: string;
  passwordFile?: string;
  passwordStdin?: boolean;
}

export function registerSessionCommands(program: Command): void {
  connectOptions(
    program
      .command('login')
      .description('log in to a node and keep the tokens in a profile (refreshed automatically)')
      .option('--username <user>', 'account name (or $HEARTH_USER)')
      .option('--password-file <file>', 'read the password from a file')
      .option('--password-stdin', 'read the password from the first line of stdin'),
  ).action(
    withCli<LoginFlags>(async (cli, _args, flags) => {
      const username = flags.username ?? process.env.HEARTH_USER;
      if (!username) throw new UsageError('pass --username <user> (or set HEARTH_USER)');
      const password = await readSecretFrom({
        label: 'password',
        file: flags.passwordFile,
        stdin: flags.passwordStdin,
        env: ['HEARTH_PASSWORD'],
      });
      // A fresh profile record for this node: tokens of another node must not survive a login.
      const profile = { name: cli.profile.name, node: cli.nodeUrl, username };
      const tokenStore = new ProfileTokenStore(cli.profiles, profile);
      const client = createClient({ baseUrl: cli.nodeUrl, tokenStore });
      await client.auth.login({ username, password }, { signal: cli.signal });
      cli.out.result({ profile: profile.name, node: cli.nodeUrl, username }, () =>
        `logged in to ${cli.nodeUrl} as ${username} (profile "${profile.name}", ${cli.profiles.path(profile.name)})`,
      );
    }),
  );

  connectOptions(program.command('logout').description('end the session on the node, revoke its client key and forget the tokens')).action(
    withCli(async (cli) => {
      if (!cli.profile.tokens) {
        cli.out.result({ profile: cli.profile.name, loggedOut: false, revoked: null }, () => `profile "${cli.profile.name}" is not logged in`);
        return;
      }
      const client = createClient({ baseUrl: cli.profile.node ?? cli.nodeUrl, tokenStore: new ProfileTokenStore(cli.profiles, cli.profile) });
      const result = await client.auth.logout({ signal: cli.signal });
      // Whatever the node said, the local tokens are gone: a logout must never leave them behind.
      await cli.profiles.write({ name: cli.profile.name, node: cli.profile.node, username: cli.profile.username });
      const problems = result.errors.map((e) => (e instanceof Error ? e.message : String(e)));
      cli.out.result({ profile: cli.profile.name, loggedOut: result.loggedOut, revoked: result.revoked, problems }, () =>
        [
          `logged out of ${cli.profile.node ?? cli.nodeUrl} (profile "${cli.profile.name}")`,
          // a password login holds no client key (auth spec rule 5b): nothing to say about one
          `  session ended: ${result.loggedOut ? 'yes' : 'no'}${result.revoked === null ? '' : `; client key revoked: ${result.revoked ? 'yes' : 'no'}`}`,
          ...problems.map((p) => `  note: ${p}`),
        ].join('\n'),
      );
    }),
  );

  const profile = program.command('profile').description('connection profiles (node URL and tokens)');
  profile
    .command('list')
    .alias('ls')
    .description('list profiles and whether they hold tokens')
    .option('--home <dir>', 'root of node homes and profiles (default ~/.hearth, or $HEARTH_HOME)')
    .action(async (_opts: unknown, command: Command) => {
      const opts = command.optsWithGlobals() as GlobalOpts & { home?: string };
      try {
        const rows = (await new Profiles(homeRoot(opts.home)).list()).map((p) => ({
          profile: p.name,
          node: p.node ?? null,
          username: p.username ?? null,
          loggedIn: Boolean(p.tokens),
        }));
        new Output(opts.output ?? 'table', process.stdout, { wide: opts.wide }).table(rows, [
          { header: 'profile', value: (r) => r.profile },
          { header: 'node', value: (r) => r.node },
          { header: 'user', value: (r) => r.username },
          { header: 'logged in', value: (r) => (r.loggedIn ? 'yes' : 'no') },
        ], 'no profiles yet: hearth login --username <user>');
      } catch (err) {
        throw report(err, opts);
      }
    });
}
