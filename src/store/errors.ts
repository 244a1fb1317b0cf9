// What a database error means, in either database: a name taken, the database away, the disk full.

/** True when `err` is a unique-constraint violation in either database. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** True when `err` means the database cannot be reached right now, as opposed to a fault of the request:
 *  a connection refused, lost or timed out; the server shutting down, restarting or still recovering;
 *  refusing new connections (a database with ALLOW_CONNECTIONS false, `max_connections` or a role's
 *  limit reached); or read-only (a standby, or recovery, where a primary was expected). */
export function isStorageUnavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string; errno?: string } | null;
  if (!e) return false;
  const code = e.code ?? '';
  const msg = e.message ?? '';
  // PostgreSQL class 08: connection exceptions; 57P01–57P05: shut down, crashed, cannot connect now,
  // database dropped, idle session ended; 53300: too many connections; 25006: a read-only transaction.
  if (/^08/.test(code) || /^57P0[1-5]$/.test(code) || code === '53300' || code === '25006') return true;
  // 55000 (object not in prerequisite state) is a refusal only when it says the database takes no connections.
  if (code === '55000' && /not currently accepting connections/i.test(msg)) return true;
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH'].includes(code)) return true;
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection terminated unexpectedly/i.test(
    msg,
  );
}

/** True when `err` means the disk is full or read-only: the write did not happen (507). */
export function isStorageFull(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return (
    !!code &&
    ['ENOSPC', 'EDQUOT', 'EROFS', 'SQLITE_FULL', 'SQLITE_READONLY', 'SQLITE_IOERR_WRITE', '53100'].includes(code)
  );
}
