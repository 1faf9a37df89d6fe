/**
 * A set-valued index, key → members, for the lookups that must not scan (pods by node, COE
 * entries by name). A key whose last member goes is dropped, so the index holds nothing stale.
 */
export class SetIndex {
  private readonly map = new Map<string, Set<string>>();
  add(key: string, member: string): void {
    let set = this.map.get(key);
    if (!set) this.map.set(key, (set = new Set()));
    set.add(member);
  }
  remove(key: string, member: string): void {
    const set = this.map.get(key);
    if (!set) return;
    set.delete(member);
    if (set.size === 0) this.map.delete(key);
  }
  get(key: string): ReadonlySet<string> {
    return this.map.get(key) ?? new Set();
  }
  keys(): IterableIterator<string> {
    return this.map.keys();
  }
  clear(): void {
    this.map.clear();
  }
}
