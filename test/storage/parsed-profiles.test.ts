/**
 * The writer's memo of parsed profiles (src/storage/sqlite/parsed-profiles.ts): a record is given
 * back only for exactly the text it was parsed from, and the memo stays within its bounds.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newProfile } from '../../src/model/profiles.js';
import { ParsedProfiles } from '../../src/storage/sqlite/parsed-profiles.js';

const AT = '2026-01-01T00:00:00.000Z';

describe('ParsedProfiles', () => {
  test('answers the record only for the text it was kept with', () => {
    const memo = new ParsedProfiles();
    const record = newProfile('p1', AT);
    const text = JSON.stringify(record);
    memo.set('p1', text, record);
    // Equal text read from the store again (another string object): the same record.
    assert.equal(memo.get('p1', JSON.stringify(JSON.parse(text))), record);
    // The row was written by something else since (a rolled-back batch, a merge): not this record.
    const changed = JSON.stringify({ ...record, segments: ['other'] });
    assert.equal(memo.get('p1', changed), undefined);
    assert.equal(memo.get('p2', text), undefined);
  });

  test('keeps at most its entries and characters, the oldest written leaving first', () => {
    const memo = new ParsedProfiles({ maxEntries: 3, maxChars: 100_000, maxTextChars: 10_000 });
    const texts = new Map<string, string>();
    for (const id of ['a', 'b', 'c', 'd']) {
      const record = newProfile(id, AT);
      texts.set(id, JSON.stringify(record));
      memo.set(id, texts.get(id)!, record);
    }
    assert.equal(memo.size, 3);
    assert.equal(memo.get('a', texts.get('a')!), undefined);
    assert.ok(memo.get('d', texts.get('d')!));

    const record = newProfile('x', AT);
    const text = JSON.stringify(record);
    const small = new ParsedProfiles({
      maxEntries: 100,
      maxChars: text.length * 5,
      maxTextChars: text.length,
    });
    for (let i = 0; i < 20; i++) small.set(`p${i}`, text, record);
    assert.equal(small.size, 5);
    assert.equal(small.get('p14', text), undefined);
    assert.equal(small.get('p19', text), record);
    // A text longer than maxTextChars is not kept at all.
    const big = JSON.stringify({ ...record, segments: ['a'] });
    small.set('big', big, record);
    assert.equal(small.get('big', big), undefined);
    assert.equal(small.size, 5);
  });
});
