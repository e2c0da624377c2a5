/** A 200 means committed (docs/api.md #track-response): what a request saved is in the store when it is answered. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { payload, startService, tempDir, TOKEN } from '../helpers.js';
import { freePort } from '../support/process.js';
import { allEvents, expectStatus, read, track, type Json } from './support.js';

test('after a 200, another process on the same data folder already sees the records', async () => {
  const dataDir = tempDir();
  const writer = await startService({ dataDir });
  const reader = await startService({ dataDir });
  try {
    await writer.createSource();
    for (let i = 0; i < 5; i++) {
      const body = payload({ events: [{ type: 'seen', properties: { i } }, { type: 'seen-too' }] });
      const res = await track(writer, body);
      // No wait, no close: the answer itself means the transaction is committed.
      const events = await allEvents(reader, { session_id: res.session.id });
      assert.equal(events.length, 2);
      assert.deepEqual((await read(reader, `/session/${res.session.id}`)).profile, { id: res.profile.id });
      assert.equal((await read(reader, `/profile/${res.profile.id}`)).stats.visits, 1);
    }
    const collected = expectStatus(await writer.post('/collect/seen/src-1', { c: 1 }), 200);
    assert.deepEqual((await read(reader, `/event/${collected.event.id}`)).properties, { c: 1 });
  } finally {
    await reader.close();
    await writer.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('records survive closing the app and opening a new one on the same data folder', async () => {
  const dataDir = tempDir();
  const answers: Json[] = [];
  const first = await startService({ dataDir });
  try {
    await first.createSource();
    answers.push(
      await track(first, payload({ context: { page: 1 }, events: [{ type: 'a' }, { type: 'b' }] })),
    );
    answers.push(await track(first, payload({ profile: answers[0]!.profile, events: [{ type: 'c' }] })));
    answers.push(expectStatus(await first.post('/collect/d/src-1', { x: 1 }), 200));
  } finally {
    await first.close();
  }
  const second = await startService({ dataDir });
  try {
    const events = await allEvents(second);
    assert.deepEqual(events.map((e) => e.type).sort(), ['a', 'b', 'c', 'd']);
    const profile = await read(second, `/profile/${answers[0]!.profile.id}`);
    assert.equal(profile.stats.visits, 2);
    assert.deepEqual((await read(second, `/session/${answers[0]!.session.id}`)).context, { page: 1 });
    assert.deepEqual((await read(second, `/event/${answers[2]!.event.id}`)).properties, { x: 1 });
    // And the service goes on from there.
    const next = await track(second, payload({ profile: answers[0]!.profile }));
    assert.equal(next.profile.id, answers[0]!.profile.id);
    assert.equal((await read(second, `/profile/${next.profile.id}`)).stats.visits, 3);
  } finally {
    await second.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('every acknowledged request survives a crash (SIGKILL) right after its answer', async (t) => {
  const dataDir = tempDir();
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      TRACK_DATA_DIR: dataDir,
      TRACK_API_TOKEN: TOKEN,
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr!.on('data', (chunk) => (errors += chunk));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  let healthy = false;
  for (let i = 0; i < 300 && !healthy; i++) {
    if (child.exitCode !== null) break;
    healthy = await fetch(`${base}/health`).then(
      (res) => res.ok,
      () => false,
    );
    if (!healthy) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.ok(healthy, `the server did not start: ${errors}`);

  const created = await fetch(`${base}/event-source`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'src-1' }),
  });
  assert.equal(created.status, 200);

  // Batches of concurrent requests, so that several share one commit; the last batch is killed
  // the moment its answers are in.
  const acknowledged: Json[] = [];
  for (let batch = 0; batch < 3; batch++) {
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        fetch(`${base}/track`, {
          method: 'POST',
          body: JSON.stringify(payload({ events: [{ type: 'crash', properties: { batch, i } }] })),
        }).then(async (res) => {
          assert.equal(res.status, 200);
          return (await res.json()) as Json;
        }),
      ),
    );
    acknowledged.push(...answers);
  }
  child.kill('SIGKILL');
  await once(child, 'exit');

  const service = await startService({ dataDir });
  try {
    const events = await allEvents(service, { type: 'crash' });
    assert.equal(events.length, acknowledged.length);
    for (const answer of acknowledged) {
      assert.deepEqual((await read(service, `/session/${answer.session.id}`)).profile, {
        id: answer.profile.id,
      });
      assert.equal((await read(service, `/profile/${answer.profile.id}`)).stats.visits, 1);
    }
  } finally {
    await service.close();
  }
});
