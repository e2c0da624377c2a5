import assert from 'node:assert/strict';
import { test } from 'node:test';
import { timeOrderedId } from '../../src/domain/ids.js';

test('time-ordered ids are UUIDv7-shaped, unique, and sort by time', () => {
  const shape = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const ids = Array.from({ length: 10_000 }, () => timeOrderedId());
  for (const id of ids.slice(0, 100)) assert.match(id, shape);
  assert.equal(new Set(ids).size, ids.length);
  const earlier = timeOrderedId(Date.parse('2026-01-01T00:00:00Z'));
  const later = timeOrderedId(Date.parse('2026-01-01T00:00:00.001Z'));
  assert.ok(earlier < later);
  assert.equal(
    earlier.slice(0, 13),
    `${Date.parse('2026-01-01T00:00:00Z').toString(16).padStart(12, '0').slice(0, 8)}-${Date.parse('2026-01-01T00:00:00Z').toString(16).padStart(12, '0').slice(8)}`,
  );
});
