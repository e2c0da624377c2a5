/**
 * The service's times as text (src/model/time.ts): a clock reading written by clockText is what
 * `toISOString` writes, whichever readings came before it.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { clockText, isoTime } from '../../src/model/time.js';

describe('time texts', () => {
  test('a clock reading is written as toISOString writes it, in any order of readings', () => {
    const readings = [
      Date.UTC(2026, 10, 27, 17, 4, 17, 123),
      Date.UTC(2026, 10, 27, 17, 4, 17, 123),
      Date.UTC(2026, 10, 27, 17, 4, 17, 124),
      Date.UTC(2026, 10, 27, 17, 4, 17, 123),
      Date.UTC(2024, 1, 29, 23, 59, 59, 999),
      Date.UTC(2025, 0, 1),
      0,
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    ];
    for (let i = 0; i < 1000; i++) readings.push(Date.UTC(2026, 0, 1) + Math.floor(i * 3.7) * 7_919);
    for (const ms of readings) {
      const date = new Date(ms);
      assert.equal(clockText(date), date.toISOString());
      assert.equal(clockText(date), isoTime(ms));
    }
  });

  test('an invalid date fails as toISOString fails', () => {
    clockText(new Date(0));
    assert.throws(() => clockText(new Date(Number.NaN)), RangeError);
    assert.throws(() => clockText(new Date(Number.NaN)), RangeError);
  });
});
