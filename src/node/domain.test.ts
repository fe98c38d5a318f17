import { describe, expect, it } from 'vitest';
import { domainsReady, quiesceDomains, startDomains, stopDomains, type Domain } from './domain.ts';

/** A domain that writes each lifecycle call to `log`. */
const traced = (name: string, log: string[], fail?: 'stop' | 'beforeStop'): Domain => ({
  name,
  start: async () => void log.push(`start ${name}`),
  ready: async () => void log.push(`ready ${name}`),
  beforeStop: () => {
    log.push(`beforeStop ${name}`);
    if (fail === 'beforeStop') throw new Error(name);
  },
  stop: async () => {
    log.push(`stop ${name}`);
    if (fail === 'stop') throw new Error(name);
  },
});

describe('the domain list', () => {
  it('starts in order, quiesces in order and stops in reverse', async () => {
    const log: string[] = [];
    const list = [traced('store', log), { name: 'thin' }, traced('network', log), traced('sync', log)];
    await startDomains(list);
    await domainsReady(list);
    quiesceDomains(list);
    await stopDomains(list);
    expect(log).toEqual([
      'start store', 'start network', 'start sync',
      'ready store', 'ready network', 'ready sync',
      'beforeStop store', 'beforeStop network', 'beforeStop sync',
      'stop sync', 'stop network', 'stop store',
    ]);
  });

  it('stops the rest when told to ignore failures (a failed start), and throws otherwise', async () => {
    const log: string[] = [];
    const list = [traced('store', log), traced('network', log, 'stop'), traced('sync', log, 'beforeStop')];
    const errors: unknown[] = [];
    quiesceDomains(list, (err) => errors.push(err));
    await stopDomains(list, (err) => errors.push(err));
    expect(log).toEqual(['beforeStop store', 'beforeStop network', 'beforeStop sync', 'stop sync', 'stop network', 'stop store']);
    expect(errors).toHaveLength(2);
    await expect(stopDomains(list)).rejects.toThrow('network');
  });
});
