import { describe, expect, it } from 'vitest';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, defaultConfig, parseConfig, renderConfig } from './config.ts';
import { HomeExistsError, initHome, resolveHome } from './home.ts';

describe('config.toml', () => {
  it('round-trips every setting through TOML', () => {
    const cfg = defaultConfig('n1');
    cfg.server.port = 3000;
    cfg.auth.allowedCallbackOrigins = ['https://app.example'];
    expect(parseConfig(renderConfig(cfg), 'x')).toEqual(cfg);
  });

  it('ignores unknown keys and keeps defaults for absent ones', () => {
    const cfg = parseConfig('[server]\nport = 4000\nfuture_key = 1\n[unknown]\na = 1\n', 'n');
    expect(cfg.server.port).toBe(4000);
    expect(cfg.swarm.port).toBe(2428);
  });

  it('reads the [network] keys (relays, DHT, AutoNAT, hole punching) by their TOML names, defaults otherwise', () => {
    expect(defaultConfig('n').network).toEqual({
      relayServer: false,
      relayMaxReservations: 128,
      relayDataLimitBytes: 1 << 30,
      relayDurationLimitSecs: 3_600,
      relayClient: true,
      dht: true,
      dhtClient: false,
      autonat: true,
      holePunching: true,
    });
    const cfg = parseConfig(
      '[network]\nrelay_server = true\nrelay_max_reservations = 8\nrelay_data_limit_bytes = 1048576\nrelay_duration_limit_secs = 120\nrelay_client = false\ndht = false\ndht_client = true\nautonat = false\nhole_punching = false\n',
      'n',
    );
    expect(cfg.network).toEqual({ relayServer: true, relayMaxReservations: 8, relayDataLimitBytes: 1_048_576, relayDurationLimitSecs: 120, relayClient: false, dht: false, dhtClient: true, autonat: false, holePunching: false });
    expect(renderConfig(cfg)).toContain('relay_server = true');
    expect(parseConfig(renderConfig(cfg), 'n').network).toEqual(cfg.network);
    expect(parseConfig('[network]\nrelay_server = true\n', 'n').network).toMatchObject({ relayServer: true, relayMaxReservations: 128, dht: true });
    expect(() => parseConfig('[network]\nrelay_server = "yes"\n', 'n')).toThrow(/network\.relay_server/);
    expect(() => parseConfig('[network]\nrelay_max_reservations = "many"\n', 'n')).toThrow(ConfigError);
    expect(() => parseConfig('[network]\ndht_client = "yes"\n', 'n')).toThrow(/network\.dht_client/);
  });

  it('refuses a key of the wrong type and names it', () => {
    expect(() => parseConfig('[server]\nport = "80"\n', 'n')).toThrow(ConfigError);
    expect(() => parseConfig('[server]\nport = "80"\n', 'n')).toThrow(/server\.port/);
  });
});

describe('node home', () => {
  it('creates config, key, secret and data dir with private permissions, and refuses to re-init without force', async () => {
    const paths = resolveHome({ home: await mkdtemp(join(tmpdir(), 'hearth-home-')), node: 'n1' });
    await initHome(paths, { name: 'n1', serverPort: 3001, development: true });
    const cfg = parseConfig(await readFile(paths.config, 'utf8'), 'x');
    expect(cfg.server.port).toBe(3001);
    expect(cfg.node.development).toBe(true);
    expect((await stat(paths.tokenSecret)).mode & 0o077).toBe(0);
    expect((await stat(paths.nodeKey)).mode & 0o077).toBe(0);
    expect((await stat(paths.data)).isDirectory()).toBe(true);
    await expect(initHome(paths, { name: 'n1' })).rejects.toBeInstanceOf(HomeExistsError);
    const secret = await readFile(paths.tokenSecret, 'utf8');
    await initHome(paths, { name: 'n1', force: true });
    expect(await readFile(paths.tokenSecret, 'utf8')).not.toBe(secret);
  });
});
