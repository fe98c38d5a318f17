/** The application's ABI of a context, loaded once per application (abi.ts reads it). */
import type { Context } from '../../../src/client/index.ts';
import type { AbiDoc } from './abi.ts';
import { useDashboard } from './app-context.ts';
import { useLoad } from './ui.tsx';

/** The application's ABI for a context (the call form and the state browser read it). */
export function useAbi(context: Context) {
  const { client } = useDashboard();
  return useLoad(
    async (signal) => {
      const doc = (await client.applications.abi(context.applicationId, { signal, serviceName: context.serviceName })) as AbiDoc | null;
      // `init` runs once, when the context is created; it is not for calling
      return { methods: Array.isArray(doc?.methods) ? doc.methods.filter((m) => m.name !== 'init') : [], types: doc?.types ?? {} };
    },
    [context.applicationId, context.serviceName],
  );
}

