/** Settings of the PostgreSQL store and of scale-out, read from the environment. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, defaultConfig, loadConfig } from '../src/config.js';

const PG = { DATABASE_URL: 'postgres://user:pw@db:5432/collector' };

test('PostgreSQL settings default to a pool of 10, migrations at start and LISTEN/NOTIFY', () => {
  for (const config of [loadConfig({}), loadConfig(PG), defaultConfig()]) {
    assert.equal(config.pgPoolSize, 10);
    assert.equal(config.pgMigrate, true);
    assert.equal(config.pgNotify, true);
  }
  assert.equal(
    loadConfig({ ...PG, TRACK_PG_POOL: ' ', TRACK_PG_MIGRATE: '', TRACK_PG_NOTIFY: '' }).pgPoolSize,
    10,
  );
});

test('TRACK_PG_POOL is a whole number of connections, at least 1', () => {
  assert.equal(loadConfig({ ...PG, TRACK_PG_POOL: '25' }).pgPoolSize, 25);
  assert.equal(loadConfig({ ...PG, TRACK_PG_POOL: '1' }).pgPoolSize, 1);
  for (const bad of ['0', '-3', '2.5', 'ten', '1e999']) {
    assert.throws(
      () => loadConfig({ ...PG, TRACK_PG_POOL: bad }),
      (error: unknown) =>
        error instanceof ConfigError && /TRACK_PG_POOL must be an integer >= 1/.test(error.message),
      bad,
    );
  }
});

test('TRACK_PG_MIGRATE and TRACK_PG_NOTIFY are yes/no flags', () => {
  for (const word of ['no', 'NO', 'false', '0', 'off', ' off ']) {
    const config = loadConfig({ ...PG, TRACK_PG_MIGRATE: word, TRACK_PG_NOTIFY: word });
    assert.equal(config.pgMigrate, false, word);
    assert.equal(config.pgNotify, false, word);
  }
  for (const word of ['yes', 'true', '1', 'on', 'Yes']) {
    const config = loadConfig({ ...PG, TRACK_PG_MIGRATE: word, TRACK_PG_NOTIFY: word });
    assert.equal(config.pgMigrate, true, word);
    assert.equal(config.pgNotify, true, word);
  }
  assert.throws(() => loadConfig({ ...PG, TRACK_PG_MIGRATE: 'later' }), /TRACK_PG_MIGRATE must be yes or no/);
  assert.throws(() => loadConfig({ ...PG, TRACK_PG_NOTIFY: 'maybe' }), /TRACK_PG_NOTIFY must be yes or no/);
});

test('the settings are independent of each other and of the store (ignored by the embedded one)', () => {
  const config = loadConfig({ TRACK_PG_POOL: '3', TRACK_PG_MIGRATE: 'no', TRACK_PG_NOTIFY: 'yes' });
  assert.equal(config.databaseUrl, undefined);
  assert.deepEqual([config.pgPoolSize, config.pgMigrate, config.pgNotify], [3, false, true]);
  assert.ok(Object.isFrozen(config));
});

test('TRACK_WORKERS: 1 by default, more only with DATABASE_URL', () => {
  assert.equal(loadConfig({}).workers, 1);
  assert.equal(loadConfig({ ...PG, TRACK_WORKERS: '4' }).workers, 4);
  assert.throws(() => loadConfig({ TRACK_WORKERS: '2' }), /needs the PostgreSQL store/);
  assert.throws(() => loadConfig({ ...PG, TRACK_WORKERS: '0' }), /TRACK_WORKERS must be an integer >= 1/);
});

test('the caches bounded by TTLs: EVENT_VALIDATOR_TTL 180 s and TRACK_SOURCE_TTL 5 s by default, 0 allowed', () => {
  const defaults = loadConfig({});
  assert.equal(defaults.validatorTtlSec, 180);
  assert.equal(defaults.sourceTtlSec, 5);
  const off = loadConfig({ EVENT_VALIDATOR_TTL: '0', TRACK_SOURCE_TTL: '0' });
  assert.deepEqual([off.validatorTtlSec, off.sourceTtlSec], [0, 0]);
  assert.throws(() => loadConfig({ TRACK_SOURCE_TTL: '-1' }), /TRACK_SOURCE_TTL/);
});

test('event time and enrichment settings: defaults and parsing', () => {
  const base = loadConfig({});
  assert.equal(base.clockSkewSec, 60);
  assert.equal(base.trustProxy, false);
  assert.equal(base.enrich, true);
  assert.equal(base.bots, 'tag');
  assert.equal(base.ipAnonymize, false);
  const set = loadConfig({
    TRACK_CLOCK_SKEW: '0',
    TRACK_ENRICH: 'no',
    TRACK_BOTS: 'DROP',
    TRACK_IP_ANONYMIZE: 'yes',
  });
  assert.deepEqual([set.clockSkewSec, set.enrich, set.bots, set.ipAnonymize], [0, false, 'drop', true]);
  for (const [name, value, message] of [
    ['TRACK_CLOCK_SKEW', '-1', /TRACK_CLOCK_SKEW must be an integer >= 0/],
    ['TRACK_CLOCK_SKEW', '1.5', /TRACK_CLOCK_SKEW must be an integer >= 0/],
    ['TRACK_BOTS', 'block', /TRACK_BOTS must be tag or drop, got "block"/],
    ['TRACK_ENRICH', 'maybe', /TRACK_ENRICH must be yes or no/],
    ['TRACK_IP_ANONYMIZE', '2', /TRACK_IP_ANONYMIZE must be yes or no/],
  ] as const) {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (error: unknown) => error instanceof ConfigError && message.test(error.message),
      `${name}=${value}`,
    );
  }
});

test('TRACK_TRUST_PROXY: no, yes, a number of hops, or a list of addresses and networks', () => {
  const trust = (value: string) => loadConfig({ TRACK_TRUST_PROXY: value }).trustProxy;
  for (const word of ['no', 'false', 'off', '0', 'NO']) assert.equal(trust(word), false, word);
  for (const word of ['yes', 'true', 'on', 'Yes']) assert.equal(trust(word), true, word);
  assert.equal(trust('1'), 1);
  assert.equal(trust('3'), 3);
  assert.deepEqual(trust('10.0.0.0/8, 192.168.1.1,2001:db8::/32, loopback'), [
    '10.0.0.0/8',
    '192.168.1.1',
    '2001:db8::/32',
    'loopback',
  ]);
  for (const bad of ['10.0.0.0/33', 'proxy.example', '10.0.0.1,', '1.2.3.4/8/9', '::1/129', '5000', '-1']) {
    assert.throws(
      () => trust(bad),
      (error: unknown) => error instanceof ConfigError && /TRACK_TRUST_PROXY must be/.test(error.message),
      bad,
    );
  }
});
