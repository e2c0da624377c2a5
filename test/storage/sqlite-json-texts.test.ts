/**
 * The JSON texts the embedded store's writer messages and profile log are joined from
 * (src/storage/sqlite/json-texts.ts): a value's text is exactly what JSON.stringify gives, for
 * every single UTF-16 code unit, surrogate pairs and lone halves, and any other JSON value.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { serialize } from 'node:v8';
import { dottedPath, pathText, splitPath, valueText } from '../../src/storage/sqlite/json-texts.js';

/** True when V8 keeps `text` as two bytes a character (its serialized tag, after any padding). */
function twoByte(text: string): boolean {
  const bytes = serialize(text);
  const tag = bytes[2] === 0 ? bytes[3] : bytes[2];
  return tag === 'c'.charCodeAt(0);
}

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

  test('a dotted path of ASCII segments stays one byte a character after they served as keys', () => {
    // The segments as the writer has them: split from a parsed text, then used as property keys,
    // which interns them (json-texts.ts: dottedPath says why the join matters).
    const [dotted] = JSON.parse('["traits.public.visits_as_keys"]') as [string];
    const path = splitPath(dotted);
    const profile: Record<string, unknown> = { traits: { public: {} } };
    for (const key of path) void (Object.hasOwn(profile, key) && profile[key]);
    assert.equal(twoByte('€'), true, 'the check tells a two-byte string');
    assert.equal(dottedPath(path), 'traits.public.visits_as_keys');
    assert.equal(twoByte(dottedPath(path)), false);
    assert.equal(twoByte(JSON.stringify([dottedPath(path), 1])), false);
  });
});
