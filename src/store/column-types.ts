// How the two databases spell the columns migrations make (chosen in src/store/db.ts): below db.ts, so a
// migration does not import the module that registers it.
import type { ColumnDefinitionBuilder } from 'kysely';

/** The two column types that differ between the databases. */
export interface ColumnTypes {
  idType: 'integer' | 'serial';
  /** Ids are never reused (SQLite AUTOINCREMENT): sync clients remember node ids. */
  idColumn: (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
  bytes: 'blob' | 'bytea';
}
