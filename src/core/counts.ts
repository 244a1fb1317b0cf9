// How many of something each key holds now (open streams per address, bus subscriptions per account and
// channel, AI edits per owner), each taken with a function that gives it back once, however often it is called.
export class Counts<K> {
  private readonly n = new Map<K, number>();

  get(key: K): number {
    return this.n.get(key) ?? 0;
  }

  /** Counts one more for each key; the returned function counts them back (once). */
  take(...keys: K[]): () => void {
    for (const k of keys) this.n.set(k, this.get(k) + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      for (const k of keys) {
        const left = this.get(k) - 1;
        if (left <= 0) this.n.delete(k);
        else this.n.set(k, left);
      }
    };
  }
}
