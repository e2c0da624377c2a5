/**
 * A profile change as the embedded store's writer receives it (src/storage/sqlite/write-set.ts):
 * its compact text is JSON of the change's tuples, and reads back as the change.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ProfileOp } from '../../src/model/profile-ops.js';
import type { ProfileChange } from '../../src/model/records.js';
import { decodeChange, encodeChange } from '../../src/storage/sqlite/write-set.js';

const path = ['traits', 'public', 'a"b'];

const change: ProfileChange = {
  at: '2026-01-02T03:04:05.000Z',
  steps: [
    {
      event: 'e-1',
      ops: [
        { op: 'set', path, value: { nested: ['x', 1, null, true], quote: '"\\\u0000\u2028' } },
        { op: 'set_once', path, value: 'once' },
        { op: 'increment', path: ['interests', 'shoes'], value: 0.5 },
        { op: 'append', path, value: ['a', 'b'] },
        { op: 'unset', path: ['consents', 'email'] },
      ],
    },
    {
      event: 'e-2 "quoted"',
      ops: [
        { op: 'add_segment', value: 'vip "one"' },
        { op: 'remove_segment', value: 'old' },
        { op: 'identify', type: 'email', value: 'a@example.com' },
        // The same path array again: its text is taken from the cache.
        { op: 'set', path, value: 2 },
      ],
    },
  ],
};

/** The tuples the text holds: the op, the dotted path or identity type ('' for a segment), the value. */
function tuples(c: ProfileChange): unknown {
  return [
    c.at,
    c.steps.map((step) => [
      step.event,
      step.ops.map((op: ProfileOp) => {
        if (op.op === 'identify') return [op.op, op.type, op.value];
        if (!('path' in op)) return [op.op, '', op.value];
        if (op.op === 'unset') return [op.op, op.path.join('.')];
        return [op.op, op.path.join('.'), op.value];
      }),
    ]),
  ];
}

describe('sqlite write set: profile changes', () => {
  test('the text is the JSON of the tuples, twice the same', () => {
    assert.equal(encodeChange(change), JSON.stringify(tuples(change)));
    assert.equal(encodeChange(change), JSON.stringify(tuples(change)));
  });

  test('the text reads back as the change', () => {
    // (An `unset` reads back with an undefined value, which JSON leaves out.)
    const plain = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;
    assert.deepEqual(plain(decodeChange(encodeChange(change))), plain(change));
  });

  test('a change without steps, and a value that JSON has not, as in an array', () => {
    assert.deepEqual(decodeChange(encodeChange({ at: 'now', steps: [] })), { at: 'now', steps: [] });
    const undefinedValue = {
      at: 'now',
      steps: [{ event: 'e', ops: [{ op: 'set', path: ['consents', 'x'], value: undefined } as ProfileOp] }],
    };
    assert.equal(encodeChange(undefinedValue), JSON.stringify(tuples(undefinedValue)));
  });
});
