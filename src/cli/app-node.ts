/**
 * The node half of `hearth app` (issue #6; reference tree product.md B4; admin spec "Applications
 * and packages", admin-wire-a §3): install, list, inspect and uninstall applications on a node,
 * and read its packages. The offline half (keygen, bundle, publish) is src/cli/app.ts.
 *
 * Installs: `install <package>[@<version>]` (or `<package> <version>`) asks the node to resolve the bundle from its configured
 * registry (the node accepts only `{package, version}`, so a URL or a hash cannot be passed on);
 * `install-dev <path>` installs a signed `.mpk` from the node's own filesystem — a relative path is
 * made absolute here, which is right when the node runs on this machine. Applications can be named
 * by id or by application alias (looked up with the node's `alias/lookup`).
 */
import { isAbsolute, resolve } from 'node:path';
import type { Command } from 'commander';
import type { Application } from '../client/index.ts';
import { connectOptions, withCli, type ConnectOpts } from './connect.ts';
import { notFound } from '../errors.ts';
import { UsageError } from './exit.ts';
import { resolveRef, type IdRef } from './id-args.ts';
import { refArg } from './refs.ts';
import { bytes } from './progress.ts';
import { aliasesOf } from './context.ts';
import { abiMethods } from './abi-methods.ts';

const PACKAGE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A node installs signed bundles only (admin spec, install rules): the refusal names the command that makes one. */
const RAW_WASM = 'a raw WebAssembly module is not installable; bundle and sign it first: hearth app bundle --wasm <file> --package <name> --version <semver> --key <signing key> (key: hearth app keygen <file>), then hearth app install-dev <bundle.mpk>';

/** `metadata` is UTF-8 JSON bytes on the wire; people want to read it. */
function metadataOf(app: Application): unknown {
  try {
    return JSON.parse(Buffer.from(app.metadata ?? []).toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * `<package> <version>` or `<package>@<version>`. The version is not an option: the root
 * program's `--version` would take it when it is the first option after the command.
 */
function coordinates(arg: string, version: string | undefined): { pkg: string; version: string } {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(arg)) {
    throw new UsageError(
      `${arg}: the node installs from its configured registry by package and version (hearth app install <package>@<version>), or a bundle on its own filesystem (hearth app install-dev <path>)`,
    );
  }
  if (/\.wasm$/i.test(arg)) throw new UsageError(`${arg}: ${RAW_WASM}`);
  if (/\.mpk$/i.test(arg)) throw new UsageError(`${arg} is a bundle file: install it with hearth app install-dev ${arg}`);
  const at = arg.lastIndexOf('@');
  const pkg = at > 0 ? arg.slice(0, at) : arg;
  const fromArg = at > 0 ? arg.slice(at + 1) : undefined;
  if (fromArg !== undefined && version !== undefined && fromArg !== version) {
    throw new UsageError(`${arg} and ${version} disagree: give the version once`);
  }
  const v = fromArg ?? version;
  if (!PACKAGE.test(pkg)) throw new UsageError(`${pkg}: not a package name (reverse-DNS, e.g. com.example.kv)`);
  if (!v) throw new UsageError(`which version of ${pkg}? pass ${pkg}@<version> (installed versions: hearth app versions ${pkg})`);
  return { pkg, version: v };
}

export function registerAppNodeCommands(app: Command): Command {
  connectOptions(
    app
      .command('install')
      .description("install an application from the node's registry by package and version")
      .argument('<package>', 'package name, optionally with @<version>')
      .argument('[version]', 'the version to install (or give it as <package>@<version>)'),
  ).action(
    withCli(async (cli, [arg, versionArg]) => {
      const { pkg, version } = coordinates(arg, versionArg);
      const progress = cli.progress(`installing ${pkg}@${version}`);
      progress.phase("resolving and verifying the bundle on the node's registry");
      const result = await cli.client.applications.install(pkg, version, { signal: cli.signal });
      cli.remember('application', result.applicationId);
      progress.done('installed');
      cli.out.result({ ...result, package: pkg, version }, () => `installed ${pkg}@${version}\napplication id: ${result.applicationId}`);
    }),
  );

  connectOptions(
    app
      .command('install-dev')
      .description("install a signed .mpk bundle from the node's own filesystem")
      .argument('<path>', 'the bundle file (made absolute against the current directory)'),
  ).action(
    withCli(async (cli, [path]) => {
      if (/\.wasm$/i.test(path)) throw new UsageError(`${path}: ${RAW_WASM}`);
      const absolute = isAbsolute(path) ? path : resolve(path);
      const progress = cli.progress(`installing ${absolute}`);
      progress.phase('verifying the bundle on the node');
      const result = await cli.client.applications.installDev(absolute, { signal: cli.signal });
      cli.remember('application', result.applicationId);
      progress.done('installed');
      cli.out.result({ ...result, path: absolute }, () => `installed ${absolute}\napplication id: ${result.applicationId}`);
    }),
  );

  connectOptions(app.command('list').alias('ls').description('applications installed on the node')).action(
    withCli(async (cli) => {
      const [list, aliases] = await Promise.all([cli.client.applications.list({ signal: cli.signal }), aliasesOf(cli, 'application')]);
      const apps = list.map((a) => ({ ...a, aliases: aliases.get(a.id) ?? [] }));
      cli.out.table(apps, [
        { header: 'application id', value: (a) => a.id },
        { header: 'alias', value: (a) => (a.aliases.length ? a.aliases.join(', ') : null) },
        { header: 'package', value: (a) => a.package },
        { header: 'version', value: (a) => a.version },
        { header: 'size', value: (a) => bytes(a.size) },
        { header: 'source', value: (a) => a.source },
      ], 'no applications installed (install one with: hearth app install <package>@<version>)');
    }),
  );

  connectOptions(
    app.command('get').description('one installed application').argument('<app>', 'application id, unique prefix (6+ hex), alias or @last', refArg('application', undefined, '<app>')),
  ).action(
    withCli(async (cli, [ref]) => {
      const id = await resolveRef(cli, 'application', ref as unknown as IdRef);
      const application = await cli.client.applications.get(id, { signal: cli.signal });
      cli.out.result(application, () => {
        const lines = [
          `application id: ${application.id}`,
          `package:        ${application.package ?? '-'}`,
          `version:        ${application.version ?? '-'}`,
          `signer:         ${application.signer_id ?? '-'}`,
          `size:           ${bytes(application.size)}`,
          `source:         ${application.source}`,
          `bytecode blob:  ${application.blob.bytecode}`,
        ];
        if (application.services) lines.push(`services:       ${Object.keys(application.services).join(', ')}`);
        const meta = metadataOf(application);
        if (meta !== undefined) lines.push(`metadata:       ${JSON.stringify(meta)}`);
        return lines.join('\n');
      });
    }),
  );

  connectOptions(
    app
      .command('methods')
      .description("an application's methods from its ABI: name, arguments, return type, read or write")
      .argument('<app>', 'application id, unique prefix (6+ hex), alias or @last', refArg('application', undefined, '<app>'))
      .option('--service <name>', 'the service of a multi-service bundle'),
  ).action(
    withCli<ConnectOpts & { service?: string }>(async (cli, [ref], flags) => {
      const id = await resolveRef(cli, 'application', ref as unknown as IdRef);
      const abi = await cli.client.applications.abi(id, { serviceName: flags.service, signal: cli.signal });
      if (abi === null) throw notFound(`application ${id} carries no ABI, so its methods are unknown (hearth app bundle --abi <file> embeds one)`);
      const methods = abiMethods(abi);
      cli.out.table(methods, [
        { header: 'method', value: (m) => m.name },
        { header: 'arguments', value: (m) => m.args.map((a) => `${a.name}: ${a.type}`).join(', ') || null },
        { header: 'returns', value: (m) => m.returns },
        { header: 'access', value: (m) => m.access },
      ], 'the ABI declares no methods');
    }),
  );

  connectOptions(app.command('packages').alias('list-packages').description('packages with an installed version')).action(
    withCli(async (cli) => {
      const packages = await cli.client.applications.packages({ signal: cli.signal });
      cli.out.result(packages, () => (packages.length ? packages.join('\n') : 'no packages installed'));
    }),
  );

  connectOptions(
    app.command('versions').alias('list-versions').description('installed versions of a package, newest first').argument('<package>', 'package name'),
  ).action(
    withCli(async (cli, [pkg]) => {
      const versions = await cli.client.applications.packageVersions(pkg, { signal: cli.signal });
      cli.out.result(versions, () => (versions.length ? versions.join('\n') : `no installed versions of ${pkg} (see: hearth app packages)`));
    }),
  );

  connectOptions(
    app.command('uninstall').description('uninstall an application').argument('<app>', 'application id, unique prefix (6+ hex), alias or @last', refArg('application', undefined, '<app>')),
    { destructive: true },
  ).action(
    withCli(async (cli, [ref]) => {
      const id = await resolveRef(cli, 'application', ref as unknown as IdRef);
      await cli.confirm(`uninstall application ${id}?`);
      const result = await cli.client.applications.uninstall(id, { signal: cli.signal });
      cli.forget('application');
      cli.out.result(result, () => `uninstalled application ${result.applicationId}`);
    }),
  );
  return app;
}
