// A minimal context app around `seal_to` / `open_sealed`, for the sealing end-to-end test
// (test/e2e/runtime/sealing.e2e.test.ts): `init` commits an empty state; `seal_open` seals text to a key
// and opens it again in the same call, as an app keeping a secret in its replicated state would.
// AssemblyScript source; built by test/helpers/wasm-apps.ts.
import * as env from './lib/env';
import * as sdk from './lib/sdk';

function str(name: string): string {
  const v = sdk.jsonString(sdk.readInput(), name);
  return v === null ? '' : v!;
}

export function init(): void {
  sdk.noArguments('init');
  sdk.commit(new ArrayBuffer(32), new ArrayBuffer(0));
}

// {key: hex, text} -> {sealed: 0|1, opened: 0|1, text: string | null}
export function seal_open(): void {
  const text = str('text');
  const sealed = env.seal_to(sdk.buf(sdk.fromHex(str('key'))), sdk.buf(sdk.utf8(text)), sdk.REG);
  if (sealed != 1) {
    sdk.returnOk('{"sealed":0,"opened":0,"text":null}');
    return;
  }
  const envelope = sdk.readRegister();
  const opened = env.open_sealed(sdk.buf(envelope), sdk.REG);
  const plain = opened == 1 ? sdk.quote(sdk.text(sdk.readRegister())) : 'null';
  sdk.returnOk('{"sealed":1,"opened":' + opened.toString() + ',"text":' + plain + '}');
}
