/**
 * `hearth call <method> --context <id>` (issue #6; reference CLI `meroctl call`, product.md B4):
 * runs an application method through `POST /jsonrpc` `execute` (admin-wire-a §7; docs/contexts.md
 * "JSON-RPC"). Prints the method's output: with `--output json` the value exactly as the node sent
 * it (u64 values exact), in human mode strings as they are and anything else as compact JSON.
 *
 * An application error, panic or unknown method is a node error (exit 1) printing the node's
 * error; an application's error payload (bytes in the reference's message) is shown as text.
 */
import type { Command } from 'commander';
import { RpcError } from '../client/index.ts';
import { contextRefArg, humanValue, parseIdArg, readJsonArg, resolveRef, type Ref } from './context-args.ts';
import { connectOptions, withCli, type Cli, type ConnectOpts } from './connect.ts';
import { abiMethods, argsText, ARGUMENT_SHAPE, unknownMethodHint } from './abi-methods.ts';

interface CallFlags extends ConnectOpts {
  context: Ref;
  args?: string;
  executor?: string;
}

/** Mounted twice, as the reference's `call` and as `context call` (the issue's context verbs). */
export function registerCallCommand(parent: Command): void {
  connectOptions(
    parent
      .command('call')
      .description("call a method of a context's application (JSON-RPC execute) and print its output")
      .argument('<method>', 'the application method')
      .requiredOption('--context <id|alias>', 'the context to call (id, unique prefix, alias or @last)', contextRefArg('--context'))
      .option('--args <json|@file|->', 'the arguments as JSON, @file, or - for stdin')
      .option('--executor <public key>', 'executor public key (sent for older nodes; a hearth node executes as itself)', parseIdArg),
  ).action(
    withCli<CallFlags>(async (cli, [method], flags) => {
      const contextId = await resolveRef(cli, flags.context, 'context', '--context');
      const args = await readJsonArg(flags.args, '--args', {});
      let output: unknown;
      try {
        output = await cli.client.rpc.execute(contextId, method, args, { executorPublicKey: flags.executor, signal: cli.signal });
      } catch (err) {
        if (!(err instanceof RpcError)) throw err;
        throw await withMethodHint(cli, contextId, method, readableRpcError(err));
      }
      cli.out.result(output ?? null, () => humanValue(output, method));
    }),
  );
}

/**
 * A failed call says what the application offers (issue #34 §2): a method its ABI does not declare
 * lists the declared ones; a failure that reads as an argument-shape error shows the arguments the
 * method expects. The ABI is read best effort: without one (or an unreachable context) the node's
 * error stands as it is.
 */
async function withMethodHint(cli: Cli, contextId: string, method: string, err: RpcError): Promise<RpcError> {
  if (err.type !== 'FunctionCallError') return err;
  let methods;
  try {
    const { applicationId } = await cli.client.contexts.get(contextId, { signal: cli.signal });
    methods = abiMethods(await cli.client.applications.abi(applicationId, { signal: cli.signal }));
  } catch {
    return err;
  }
  if (methods.length === 0) return err;
  const found = methods.find((m) => m.name === method);
  const detail = typeof err.data === 'string' ? err.data : '';
  if (!found) return new RpcError(err.type, `${detail ? `${detail}: ` : ''}${unknownMethodHint(method, methods)}`, err.code);
  if (ARGUMENT_SHAPE.test(detail)) return new RpcError(err.type, `${detail}; ${method} expects --args ${argsText(found)}`, err.code);
  return err;
}

/**
 * The reference reports an application's error payload as its bytes
 * (`the method call returned an error: [123, 34, …]`); applications return UTF-8 JSON there, so
 * the message shows that text instead. Anything else is kept as the node sent it.
 */
export function readableRpcError(err: RpcError): RpcError {
  if (typeof err.data !== 'string') return err;
  const m = /^(.*?)\[(\d{1,3}(?:,\s*\d{1,3})*)\]$/s.exec(err.data);
  if (!m) return err;
  const bytes = m[2].split(',').map((b) => Number(b.trim()));
  if (bytes.some((b) => b > 255)) return err;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
    return new RpcError(err.type, `${m[1]}${text}`, err.code);
  } catch {
    return err;
  }
}
