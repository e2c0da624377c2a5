/**
 * What stops the start says so in one line on standard error, without a stack trace: a port in use,
 * a database that cannot be reached, a data folder used by another process.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { tempDir } from '../helpers.js';
import { freePort, spawnServer, waitForHealth } from '../support/process.js';

/** Runs the service until it exits; answers its exit code and what it wrote. */
async function failedStart(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const { child, output } = spawnServer(env);
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output: output() };
}

function oneLine(output: string, pattern: RegExp): void {
  const lines = output.split('\n').filter((line) => line.trim() !== '');
  assert.equal(lines.length, 1, `one line expected:\n${output}`);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(output, /\n\s+at /, 'no stack trace');
}

test('a port in use: one line, exit code 1', async (t) => {
  const port = await freePort();
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
  t.after(() => taken.close());
  const { code, output } = await failedStart({ PORT: String(port), TRACK_DATA_DIR: tempDir() });
  assert.equal(code, 1);
  oneLine(output, new RegExp(`^cannot start: 127\\.0\\.0\\.1:${port} is already in use by another process`));
});

test('an unreachable DATABASE_URL: one line naming the database without its password, exit code 1', async () => {
  const port = await freePort(); // nothing listens there
  const { code, output } = await failedStart({
    DATABASE_URL: `postgres://collector:s3cret@127.0.0.1:${port}/events`,
    TRACK_DATA_DIR: tempDir(),
    PORT: '0',
  });
  assert.equal(code, 1);
  oneLine(
    output,
    new RegExp(
      `^cannot start: the database postgres://collector@127\\.0\\.0\\.1:${port}/events cannot be reached`,
    ),
  );
  assert.doesNotMatch(output, /s3cret/);
});

test('a second process on the same TRACK_DATA_DIR refuses to start; a new one starts once the first has stopped', async (t) => {
  const dataDir = tempDir();
  const port = await freePort();
  const first = spawnServer({ PORT: String(port), TRACK_DATA_DIR: dataDir });
  t.after(() => first.child.kill('SIGKILL'));
  await waitForHealth(`http://127.0.0.1:${port}`, first.child, first.output);

  const second = await failedStart({ PORT: String(await freePort()), TRACK_DATA_DIR: dataDir });
  assert.equal(second.code, 1);
  oneLine(second.output, /^cannot start: another process is using the data folder .*: stop it first/);
  // The migration command of the embedded store refuses too while the service runs.
  const { child: migrating, output: migrateOutput } = spawnServer({ TRACK_DATA_DIR: dataDir }, ['migrate']);
  const [migrateCode] = (await once(migrating, 'exit')) as [number | null];
  assert.equal(migrateCode, 1);
  oneLine(migrateOutput(), /^cannot start: another process is using the data folder/);

  // The lock goes with the process, however it ends: after a kill, the next start is accepted.
  first.child.kill('SIGKILL');
  await once(first.child, 'exit');
  const third = spawnServer({ PORT: String(port), TRACK_DATA_DIR: dataDir });
  t.after(() => third.child.kill('SIGKILL'));
  await waitForHealth(`http://127.0.0.1:${port}`, third.child, third.output);
});
