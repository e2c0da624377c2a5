/**
 * The JSON texts the embedded store's writer messages and profile log are joined from
 * (src/storage/sqlite/json-texts.ts): a value's text is exactly what JSON.stringify gives, for
 * every single UTF-16 code unit, surrogate pairs and lone halves, and any other JSON value.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pathText, splitPath, valueText } from '../../src/storage/sqlite/json-texts.js';

describe('sqlite json texts', () => {
  test('a string is written as JSON.stringify writes it, whatever its code units', () => {
    for (let unit = 0; unit <= 0xffff; unit++) {
      const one = String.fromCharCode(unit);
      for (const text of [one, `a${one}b`])
        assert.equal(valueText(text), JSON.stringify(text), `U+${unit.toString(16)}`);
    }
    for (const text of ['', 'plain', 'é ü 中文 😀', '\ud83d\ude00x', 'x\ud83d', '\u2028\u2029', 'a"b\\c\n']) {
      assert.equal(valueText(text), JSON.stringify(text), text);
    }
  });

  test('numbers, booleans, null, undefined and structures as JSON.stringify writes them', () => {
    const values = [
      0,
      -0,
      1,
      -1.5,
      0.1 + 0.2,
      1e21,
      1e-7,
      2 ** 53,
      NaN,
      Infinity,
      -Infinity,
      true,
      false,
      null,
    ];
    for (const value of values) assert.equal(valueText(value), JSON.stringify(value), String(value));
    assert.equal(valueText(undefined), 'null');
    const nested = { a: [1, 'x"', { b: null }], c: '\u0000' };
    assert.equal(valueText(nested), JSON.stringify(nested));
  });

  test('a path goes out as its dotted text and comes back as its segments', () => {
    const path = ['traits', 'public', 'a"b'];
    assert.equal(pathText(path), JSON.stringify('traits.public.a"b'));
    assert.deepEqual(splitPath('traits.public.n'), ['traits', 'public', 'n']);
    assert.equal(splitPath('traits.public.n'), splitPath('traits.public.n'));
  });
});
