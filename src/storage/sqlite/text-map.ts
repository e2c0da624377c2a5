/**
 * The bookkeeping the writer's bounded maps of profiles share (parsed-profiles.ts,
 * held-profiles.ts): entries in the order they were last set, each with the characters of its
 * document's text (`size`: exact, or for a held profile an upper bound), and the characters of all
 * of them, so that a map can keep within a budget of entries and characters.
 */
export class TextMap<E extends { size: number }> {
  private readonly entries = new Map<string, E>();
  private total = 0;

  get size(): number {
    return this.entries.size;
  }

  /** Characters of all entries (their sizes). */
  get chars(): number {
    return this.total;
  }

  get(id: string): E | undefined {
    return this.entries.get(id);
  }

  /** Sets the entry of `id` last in the order, in place of any it had. */
  set(id: string, entry: E): void {
    this.delete(id);
    this.entries.set(id, entry);
    this.total += entry.size;
  }

  delete(id: string): void {
    const entry = this.entries.get(id);
    if (entry === undefined) return;
    this.entries.delete(id);
    this.total -= entry.size;
  }

  /** The entry set longest ago, if any. */
  first(): [string, E] | undefined {
    const first = this.entries.entries().next();
    return first.done ? undefined : first.value;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }

  /** The entries, oldest first; deleting the current one while iterating is allowed. */
  [Symbol.iterator](): IterableIterator<[string, E]> {
    return this.entries.entries();
  }
}
