/**
 * A profile change as the embedded store's writer receives it (src/storage/sqlite/change-text.ts):
 * its shapes text holds each distinct list of a step's operations once, its values text the
 * values, and the two read back as the change, whatever shapes the writer read before.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ProfileOp } from '../../src/model/profile-ops.js';
import type { ProfileChange } from '../../src/model/records.js';
import {
  decodeChange,
  encodeChange,
  SHAPE_CACHE_BOUNDS,
  shareShapes,
} from '../../src/storage/sqlite/change-text.js';

const path = ['traits', 'public', 'a"b'];

const first: ProfileOp[] = [
  { op: 'set', path, value: { nested: ['x', 1, null, true], quote: '"\\\u0000\u2028' } },
  { op: 'set_once', path, value: 'once' },
  { op: 'increment', path: ['interests', 'shoes'], value: 0.5 },
  { op: 'append', path, value: ['a', 'b'] },
  { op: 'unset', path: ['consents', 'email'] },
];

const second: ProfileOp[] = [
  { op: 'add_segment', value: 'vip "one"' },
  { op: 'remove_segment', value: 'old' },
  { op: 'identify', type: 'email', value: 'a@example.com' },
  // The same path array again: its text is taken from the cache.
  { op: 'set', path, value: 2 },
];

const change: ProfileChange = {
  at: '2026-01-02T03:04:05.000Z',
  steps: [
    { event: 'e-1', ops: first },
    { event: 'e-2 "quoted"', ops: second },
    // The first step's shape again, with other values.
    { event: 'e-3', ops: first.map((op) => ('value' in op ? { ...op, value: 7 } : op) as ProfileOp) },
  ],
};

/** An operation's shape: its name, and its dotted path or identity type (none for a segment). */
function shape(op: ProfileOp): unknown[] {
  if (op.op === 'identify') return [op.op, op.type];
  if (!('path' in op)) return [op.op];
  return [op.op, op.path.join('.')];
}

/** An operation's value (null for unset). */
const value = (op: ProfileOp): unknown => ('value' in op ? op.value : null);

/** (An `unset` reads back with no value, which JSON leaves out.) */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

describe('sqlite change text: profile changes', () => {
  test('each distinct shape once, with the values of each step', () => {
    const [shapes, values] = encodeChange(change);
    assert.equal(shapes, JSON.stringify([first.map(shape), second.map(shape)]));
    assert.equal(
      values,
      JSON.stringify([
        change.at,
        change.steps.map((step, i) => [step.event, i === 1 ? 1 : 0, step.ops.map(value)]),
      ]),
    );
    assert.deepEqual(encodeChange(change), [shapes, values]);
  });

  test('the texts read back as the change', () => {
    assert.deepEqual(plain(decodeChange(encodeChange(change))), plain(change));
  });

  test('a change without steps, and a value that JSON has not, as in an array', () => {
    assert.deepEqual(decodeChange(encodeChange({ at: 'now', steps: [] })), { at: 'now', steps: [] });
    const undefinedValue = {
      at: 'now',
      steps: [{ event: 'e', ops: [{ op: 'set', path: ['consents', 'x'], value: undefined } as ProfileOp] }],
    };
    assert.equal(encodeChange(undefinedValue)[1], '["now",[["e",0,[null]]]]');
  });

  test('a step like the last but for its identity type or path gets its own shape', () => {
    const ofOp = (op: ProfileOp): ProfileChange => ({ at: 'now', steps: [{ event: 'e', ops: [op] }] });
    const ops: ProfileOp[] = [
      { op: 'identify', type: 'email', value: 'a@example.com' },
      { op: 'identify', type: 'phone', value: '+15550100' },
      { op: 'set', path: ['traits', 'public', 'a'], value: 1 },
      // Equal segments in another array: the same shape, told by its text.
      { op: 'set', path: ['traits', 'public', 'a'], value: 2 },
      { op: 'set', path: ['traits', 'public', 'b'], value: 3 },
      { op: 'set_once', path: ['traits', 'public', 'b'], value: 4 },
    ];
    const shapes = ops.map((op) => encodeChange(ofOp(op))[0]);
    assert.deepEqual(
      shapes,
      ops.map((op) => JSON.stringify([[shape(op)]])),
    );
    for (const op of ops) assert.deepEqual(decodeChange(encodeChange(ofOp(op))), ofOp(op));
  });

  test('many distinct shapes, past what the writer keeps, all read back', () => {
    const count = SHAPE_CACHE_BOUNDS.maxEntries + 50;
    const changes = Array.from({ length: count }, (_, i) => ({
      at: 'now',
      steps: [{ event: `e-${i}`, ops: [{ op: 'set', path: ['traits', 'public', `k${i}`], value: i }] }],
    })) as ProfileChange[];
    for (const c of [...changes, ...changes]) assert.deepEqual(decodeChange(encodeChange(c)), c);
    // One request whose events all have shapes of their own.
    const many: ProfileChange = { at: 'now', steps: changes.flatMap((c) => c.steps) };
    const texts = encodeChange(many);
    assert.equal((JSON.parse(texts[0] as string) as unknown[]).length, count);
    assert.deepEqual(decodeChange(texts), many);
  });

  test("a batch's message holds each shapes text once, and its changes read back", () => {
    const ofOps = (ops: ProfileOp[], n: number): ProfileChange => ({
      at: `t${n}`,
      steps: [{ event: `e-${n}`, ops }],
    });
    const other: ProfileOp[] = [{ op: 'increment', path: ['interests', 'x'], value: 1 }];
    const batch = [ofOps(first, 1), ofOps(first, 2), ofOps(other, 3), ofOps(first, 4), ofOps(other, 5)];
    const texts = batch.map(encodeChange);
    // Changes of the same shape alone have the same shapes text.
    assert.equal(texts[1]![0], encodeChange(ofOps(first, 6))[0]);
    const shared = shareShapes(texts);
    assert.deepEqual(shared, [encodeChange(batch[0]!)[0], encodeChange(batch[2]!)[0]]);
    assert.deepEqual(
      texts.map(([shapes]) => shapes),
      [0, 0, 1, 0, 1],
    );
    assert.deepEqual(
      texts.map((text) => plain(decodeChange(text, shared))),
      batch.map(plain),
    );
    assert.throws(() => decodeChange([2, texts[0]![1]], shared), /no shapes 2 in the batch/);
  });
});
