/**
 * The dotted paths the embedded store's writer messages and profile log carry
 * (src/storage/sqlite/json-texts.ts): joined and split again, and kept one byte a character.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { serialize } from 'node:v8';
import { dottedPath, pathText, splitPath } from '../../src/storage/sqlite/json-texts.js';

/** True when V8 keeps `text` as two bytes a character (its serialized tag, after any padding). */
function twoByte(text: string): boolean {
  const bytes = serialize(text);
  const tag = bytes[2] === 0 ? bytes[3] : bytes[2];
  return tag === 'c'.charCodeAt(0);
}

describe('sqlite json texts', () => {
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
