/**
 * The quarantine's writes that take part in replays (docs/api.md#replay), on the writer thread
 * (writer.ts): the claim of a replayed record inside the commit of its events, and the update of a
 * record refused again, which never puts back a record that is gone.
 */
import type Database from 'better-sqlite3';

export function prepareRejectedWrites(db: Database.Database) {
  const s = {
    exists: db.prepare('SELECT 1 FROM rejected WHERE id = ?').pluck(),
    delete: db.prepare('DELETE FROM rejected WHERE id = ?'),
    update: db.prepare('UPDATE rejected SET doc = ?, size = ? WHERE id = ?'),
  };
  return {
    /**
     * The claim of a write set that replays a quarantined record, in two steps inside the commit:
     * `held` before the write set writes anything (false: the record is gone, the write set is the
     * conflict `rejected`), `take` once it can no longer conflict. Nothing runs between the two on
     * this one writing connection, so of several write sets replaying one record, in one batch or
     * in several, exactly one finds it.
     */
    claim: {
      held: (id: string): boolean => s.exists.get(id) !== undefined,
      take: (id: string): void => void s.delete.run(id),
    },
    ops: {
      /** Replaces the document of a stored record; false (and nothing written) when it is gone. */
      updateRejected(id: string, doc: string): boolean {
        return s.update.run(doc, Buffer.byteLength(doc), id).changes > 0;
      },
    },
  };
}
