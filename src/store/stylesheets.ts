// The stylesheets store: each document's compiled utility stylesheet (src/stylesheet/compiler.ts).
import type { Executor, NewRow } from './schema.ts';

/** What a compile stores: the CSS, the checksum of the HTML it came from, and when. */
export type CompiledStylesheet = Omit<NewRow<'stylesheets'>, 'node_id'>;

/** A document's compiled stylesheet and the checksum of the HTML it was compiled from, or undefined. */
export function storedStylesheet(db: Executor, nodeId: number) {
  return db
    .selectFrom('stylesheets')
    .select(['css', 'source_checksum as sourceChecksum'])
    .where('node_id', '=', nodeId)
    .executeTakeFirst();
}

/** Whether a document has a compiled stylesheet. */
export async function hasStylesheet(db: Executor, nodeId: number): Promise<boolean> {
  return !!(await db.selectFrom('stylesheets').select('node_id').where('node_id', '=', nodeId).executeTakeFirst());
}

/** Replaces a document's compiled stylesheet. */
export async function updateStylesheet(db: Executor, nodeId: number, row: CompiledStylesheet): Promise<void> {
  await db.updateTable('stylesheets').set(row).where('node_id', '=', nodeId).execute();
}

/** Stores a document's first compiled stylesheet. */
export async function insertStylesheet(db: Executor, nodeId: number, row: CompiledStylesheet): Promise<void> {
  await db
    .insertInto('stylesheets')
    .values({ node_id: nodeId, ...row })
    .execute();
}
