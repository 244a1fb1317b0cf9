// Compiles utility stylesheets after saves, off the request path. Saves to one document coalesce:
// while a compile runs, only the newest pending HTML is kept. A failed compile never fails a save.
import { nodeById } from '../store/nodes.ts';
import { hasStylesheet, insertStylesheet, storedStylesheet, updateStylesheet } from '../store/stylesheets.ts';
import type { Db } from '../store/schema.ts';
import type { Clock } from '../clock.ts';
import { checksum } from '../core/checksum.ts';
import { compileUtilityCss, linksUtilityStylesheet } from './tailwind.ts';

export class StylesheetCompiler {
  private running = new Map<number, Promise<void>>();
  private pending = new Map<number, string>();

  private db: Db;
  private clock: Clock;
  private log: (err: unknown) => void;
  constructor(
    db: Db,
    clock: Clock,
    log: (err: unknown) => void = (err) => console.error('stylesheet compile failed:', err),
  ) {
    this.db = db;
    this.clock = clock;
    this.log = log;
  }

  /** The compiled stylesheet of a document and the checksum of the HTML it was compiled from, if any. */
  stored(nodeId: number): Promise<{ css: string; sourceChecksum: string } | undefined> {
    return storedStylesheet(this.db, nodeId);
  }

  /** Called after a document's content changed. Returns when this HTML (or a newer one) is compiled. */
  schedule(nodeId: number, html: string): Promise<void> {
    if (!linksUtilityStylesheet(html)) return Promise.resolve();
    this.pending.set(nodeId, html);
    const current = this.running.get(nodeId);
    if (current) return current.then(() => this.running.get(nodeId));
    const run = this.drain(nodeId).finally(() => this.running.delete(nodeId));
    this.running.set(nodeId, run);
    return run;
  }

  private async drain(nodeId: number) {
    for (let html = this.pending.get(nodeId); html !== undefined; html = this.pending.get(nodeId)) {
      this.pending.delete(nodeId);
      try {
        const css = await compileUtilityCss(html);
        const row = { css, source_checksum: checksum(html), compiled_at: this.clock.now().toISOString() };
        if (await hasStylesheet(this.db, nodeId)) await updateStylesheet(this.db, nodeId, row);
        else {
          const alive = await nodeById(this.db, nodeId);
          if (alive) await insertStylesheet(this.db, nodeId, row);
        }
      } catch (err) {
        this.log(err);
      }
    }
  }

  /** Waits for every scheduled compile (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all(this.running.values());
  }
}
