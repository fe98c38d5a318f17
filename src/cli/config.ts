/**
 * `hearth config get [key] | set <key> <value>` (issue #6): reads and edits a local node's
 * config.toml (keys as `section.toml_key`, e.g. `server.port`), typed and checked as the node
 * loads it, written atomically. A running node reads its config at start: `set` says so.
 */
import type { Command } from 'commander';
import { configKeys, ConfigError, getConfigValue, loadConfig, saveConfig, setConfigValue } from '../config/config.ts';
import { DEFAULT_NODE_NAME } from '../config/defaults.ts';
import { isInitialised, resolveHome } from '../config/home.ts';
import { localNodeOptions, report } from './connect.ts';
import { UsageError } from './exit.ts';
import { Output } from './output.ts';
import type { GlobalOpts } from './options.ts';

interface ConfigFlags extends GlobalOpts {
  home?: string;
  node?: string;
}

async function open(flags: ConfigFlags) {
  const paths = resolveHome(flags);
  if (!(await isInitialised(paths))) throw new UsageError(`${paths.dir} is not initialised: run "hearth init" first`);
  return { paths, config: await loadConfig(paths.config, flags.node ?? DEFAULT_NODE_NAME) };
}

const guard = (flags: ConfigFlags, fn: () => Promise<void>) =>
  fn().catch((err: unknown) => {
    throw report(err instanceof ConfigError ? new UsageError(err.message) : err, flags);
  });

export function registerConfigCommands(program: Command): void {
  const config = program.command('config').description("read or change a local node's config.toml");

  localNodeOptions(config.command('get').description('print one key, or every key').argument('[key]', `one of: ${configKeys().join(', ')}`)).action(
    (key: string | undefined, _flags: ConfigFlags, command: Command) => {
      const flags = command.optsWithGlobals() as ConfigFlags;
      return guard(flags, async () => {
        const { config: cfg } = await open(flags);
        const out = new Output(flags.output ?? 'table');
        if (key) {
          const value = getConfigValue(cfg, key);
          out.result({ key, value }, () => (Array.isArray(value) ? value.join(',') : String(value)));
          return;
        }
        const all = Object.fromEntries(configKeys().map((k) => [k, getConfigValue(cfg, k)]));
        out.record(all);
      });
    },
  );

  localNodeOptions(config.command('set').description('change one key (restart the node to apply)').argument('<key>').argument('<value>')).action(
    (key: string, value: string, _flags: ConfigFlags, command: Command) => {
      const flags = command.optsWithGlobals() as ConfigFlags;
      return guard(flags, async () => {
        const { paths, config: cfg } = await open(flags);
        const next = setConfigValue(cfg, key, value);
        await saveConfig(paths.config, next);
        const stored = getConfigValue(next, key);
        new Output(flags.output ?? 'table').result({ key, value: stored, path: paths.config }, () =>
          `${key} = ${Array.isArray(stored) ? stored.join(',') : String(stored)} in ${paths.config}\nrestart the node to apply it`,
        );
      });
    },
  );
}
