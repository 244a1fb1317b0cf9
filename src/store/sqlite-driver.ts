// SQLite through Kysely with two connections to the one file: a writer, for transactions and for every statement
// that is not a SELECT (one at a time, as SQLite allows one writer), and a reader for SELECTs outside
// transactions. In WAL mode the reader sees the last commit while a transaction is open, so a request that only
// reads never waits for a write in progress (its disk flush included), and saves that arrive meanwhile get
// through their own reads and join that write's commit (src/store/writes.ts).
//
// Kysely's own SQLite driver has one connection behind one lock, prepares every statement anew, and rolls back
// after SQLite already did (SQLITE_FULL, SQLITE_IOERR roll back by themselves: Kysely's ROLLBACK then fails with
// "no transaction is active" and hides the cause, a full disk answering 500 instead of 507); this one caches
// prepared statements by SQL text and rolls back only what is still open.
import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';

type Connection = BetterSqlite3.Database;

/** Prepared statements kept per connection. */
const MAX_STATEMENTS = 2_000;

export class SqliteDialectWithReader implements Dialect {
  private readonly writer: Connection;
  private readonly reader: Connection;
  constructor(writer: Connection, reader: Connection) {
    this.writer = writer;
    this.reader = reader;
  }
  createDriver(): Driver {
    return new SqliteDriverWithReader(this.writer, this.reader);
  }
  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }
  createAdapter() {
    return new SqliteAdapter();
  }
  createIntrospector(db: Kysely<unknown>) {
    return new SqliteIntrospector(db);
  }
}

class SqliteDriverWithReader implements Driver {
  private readonly writerLock = new Lock();
  private readonly writer: Statements;
  private readonly reader: Statements;

  private readonly writerFile: Connection;
  private readonly readerFile: Connection;
  constructor(writerFile: Connection, readerFile: Connection) {
    this.writerFile = writerFile;
    this.readerFile = readerFile;
    this.writer = new Statements(writerFile);
    this.reader = new Statements(readerFile);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new RoutedConnection(this.writer, this.reader, this.writerLock);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as RoutedConnection).begin();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as RoutedConnection;
    // A COMMIT that fails keeps the writer: Kysely rolls back next (rollbackTransaction, which lets it go). Let
    // go now, the next transaction waiting would begin in between: that one would be rolled back, or the
    // ROLLBACK would wait for it to end and then fail with "no transaction is active", hiding a full disk (500
    // instead of 507). SQLite may have rolled back already (a full disk at COMMIT does): then nothing is sent.
    await c.executeQuery(CompiledQuery.raw('commit'));
    c.end();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as RoutedConnection;
    try {
      if (this.writerFile.inTransaction) await c.executeQuery(CompiledQuery.raw('rollback'));
    } finally {
      c.end();
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as RoutedConnection).end();
  }

  async destroy(): Promise<void> {
    this.readerFile.close();
    this.writerFile.close();
  }
}

/** One Kysely connection: in a transaction it holds the writer; outside one, SELECTs go to the reader and other
 *  statements take the writer for themselves alone. */
class RoutedConnection implements DatabaseConnection {
  private holding = false;

  private readonly writer: Statements;
  private readonly reader: Statements;
  private readonly lock: Lock;
  constructor(writer: Statements, reader: Statements, lock: Lock) {
    this.writer = writer;
    this.reader = reader;
    this.lock = lock;
  }

  async begin(): Promise<void> {
    await this.lock.acquire();
    this.holding = true;
    try {
      this.writer.run(CompiledQuery.raw('begin'));
    } catch (err) {
      this.end();
      throw err;
    }
  }

  end(): void {
    if (!this.holding) return;
    this.holding = false;
    this.lock.release();
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.holding) return this.writer.run(query);
    if (SelectQueryNode.is(query.query)) return this.reader.run(query);
    await this.lock.acquire();
    try {
      return this.writer.run(query);
    } finally {
      this.lock.release();
    }
  }

  // biome-ignore lint/correctness/useYield: never streams
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming queries are not used with SQLite');
  }
}

/** A connection's statements, prepared once per SQL text (SQLite statements are reusable; each runs to its end
 *  before the next starts). */
class Statements {
  private readonly cache = new Map<string, BetterSqlite3.Statement>();
  private readonly file: Connection;
  constructor(file: Connection) {
    this.file = file;
  }

  run<R>(query: CompiledQuery): QueryResult<R> {
    let stmt = this.cache.get(query.sql);
    if (!stmt) {
      stmt = this.file.prepare(query.sql);
      if (this.cache.size < MAX_STATEMENTS) this.cache.set(query.sql, stmt);
    }
    const parameters = query.parameters as unknown[];
    if (stmt.reader) return { rows: stmt.all(parameters) as R[] };
    const { changes, lastInsertRowid } = stmt.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }
}

/** Waiters take the writer in the order they asked. */
class Lock {
  private held = false;
  private readonly waiting: Array<() => void> = [];

  acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }
}
