/** An unreachable store gives 503 with Retry-After, never a 500 (docs/api.md #settings /health, §8). */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import type { LightMyRequestResponse } from 'fastify';
import { SqliteStore } from '../../src/storage/sqlite/store.js';
import { AUTH, payload, startService, tempDir } from '../helpers.js';
import { allEvents, expectError, expectStatus, statusOf } from './support.js';

function expectUnavailable(res: LightMyRequestResponse, what: string): void {
  assert.equal(res.statusCode, 503, `${what}: ${res.statusCode} ${res.body}`);
  expectError(res, 503);
  const retry = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retry) && retry >= 0, `${what}: Retry-After ${res.headers['retry-after']}`);
}

test('a closed store: /health and every route answer 503 with Retry-After', async () => {
  const dataDir = tempDir();
  const store = new SqliteStore({ dataDir, sync: 'normal', writeQueueLimit: 100 });
  const service = await startService({ dataDir }, { store });
  try {
    await service.createSource();
    expectStatus(await service.post('/track', payload()), 200);
    await store.close();

    expectUnavailable(await service.app.inject({ method: 'GET', url: '/health' }), 'GET /health');
    expectUnavailable(await service.post('/track', payload()), 'POST /track');
    expectUnavailable(await service.post('/collect/a/src-1', {}), 'POST /collect');
    expectUnavailable(await service.get('/events'), 'GET /events');
    expectUnavailable(await service.get('/profile/x'), 'GET /profile');
    expectUnavailable(await service.manage('POST', '/event-source', { id: 'x' }), 'POST /event-source');
    expectUnavailable(
      await service.app.inject({ method: 'DELETE', url: '/profile/x', headers: AUTH }),
      'DELETE /profile',
    );
  } finally {
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a store locked by another process: /track answers 503 with Retry-After and stores nothing', async () => {
  const service = await startService();
  const holder = new Database(join(service.dataDir, 'collector.db'));
  try {
    await service.createSource();
    holder.exec('BEGIN IMMEDIATE');
    const body = payload();
    // Waits for the store's busy timeout, then gives up.
    expectUnavailable(await service.post('/track', body), 'POST /track while locked');
    holder.exec('ROLLBACK');

    assert.equal(await statusOf(service, `/session/${(body.session as { id: string }).id}`), 404);
    assert.deepEqual(await allEvents(service), []);
    expectStatus(await service.post('/track', body), 200);
    assert.equal((await allEvents(service)).length, 1);
  } finally {
    if (holder.inTransaction) holder.exec('ROLLBACK');
    holder.close();
    await service.close();
  }
});

test('a full write queue: 503 with Retry-After, and nothing of the refused requests is stored', async () => {
  const service = await startService({ writeQueueLimit: 1 });
  try {
    await service.createSource();
    const bodies = Array.from({ length: 30 }, (_, i) =>
      payload({ events: [{ type: 'queued', properties: { i } }] }),
    );
    const answers = await Promise.all(bodies.map((body) => service.post('/track', body)));
    const statuses = answers.map((res) => res.statusCode);
    assert.ok(
      statuses.every((s) => s === 200 || s === 503),
      `statuses: ${statuses.join(',')}`,
    );
    assert.ok(statuses.includes(503), `no request was refused: ${statuses.join(',')}`);
    assert.ok(statuses.includes(200), `no request was accepted: ${statuses.join(',')}`);
    for (const [i, res] of answers.entries()) {
      const sid = (bodies[i]!.session as { id: string }).id;
      if (res.statusCode === 503) {
        expectUnavailable(res, `request ${i}`);
        assert.equal(await statusOf(service, `/session/${sid}`), 404);
      } else {
        assert.equal(await statusOf(service, `/session/${sid}`), 200);
        assert.equal(await statusOf(service, `/profile/${res.json().profile.id}`), 200);
      }
    }
    const stored = await allEvents(service, { type: 'queued' });
    assert.equal(stored.length, statuses.filter((s) => s === 200).length);
  } finally {
    await service.close();
  }
});
