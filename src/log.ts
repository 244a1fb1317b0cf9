// Where the log goes: stdout, written in the background (pino's SonicBoom), through a bounded buffer. A log
// reader that stalls (a full pipe nobody reads) would otherwise keep every line in memory: 40 000 requests
// with long URLs took 430 MB. Past `limits.logBufferBytes` waiting to be written, lines are dropped and
// counted; once the buffer has drained, one line says how many were lost, and the metrics count them all
// (kiln_log_lines_dropped_total, src/metrics/metrics.ts). One per process: every Kiln in it shares stdout.
import pino from 'pino';
import { limits } from './limits.ts';

/** What the logger needs to report dropped lines (a pino logger). */
interface Warns {
  warn(obj: object, msg: string): void;
}

export class BoundedLog {
  /** Lines dropped since the process started. */
  dropped = 0;
  /** Bytes accepted and not yet written. */
  buffered = 0;
  private unreported = 0;
  private reporter: Warns | undefined;
  private readonly out: ReturnType<typeof pino.destination>;
  private readonly max: number;

  constructor(fd: number, max: number) {
    this.max = max;
    // Asynchronous: a slow reader never blocks the event loop (what is left is flushed at exit).
    this.out = pino.destination({ dest: fd, sync: false });
    this.out.on('write', (n: number) => {
      this.buffered = Math.max(0, this.buffered - n);
    });
    this.out.on('drain', () => this.report());
  }

  /** Called by pino for each line. */
  write(line: string): boolean {
    const n = Buffer.byteLength(line);
    if (this.buffered + n > this.max) {
      this.dropped++;
      this.unreported++;
      return false;
    }
    this.buffered += n;
    this.out.write(line);
    return true;
  }

  flush(cb?: (err?: Error) => void): void {
    this.out.flush(cb);
  }

  flushSync(): void {
    this.out.flushSync();
  }

  /** The logger that says, once the buffer drains, how many lines were dropped. */
  reportTo(log: Warns): void {
    this.reporter ??= log;
  }

  private report(): void {
    if (this.unreported === 0 || !this.reporter) return;
    const dropped = this.unreported;
    this.unreported = 0;
    this.reporter.warn(
      { dropped },
      `${dropped} log line${dropped === 1 ? ' was' : 's were'} dropped: stdout was not read fast enough (more than ${this.max} bytes waited)`,
    );
  }
}

let shared: BoundedLog | undefined;

/** The process's log destination (made on first use). */
export function logDestination(): BoundedLog {
  // As pino does: touching process.stdout makes a pipe non-blocking, so a write to a full one waits for room
  // in the background (retried) instead of holding a thread-pool thread.
  shared ??= new BoundedLog(process.stdout.fd ?? 1, limits.logBufferBytes);
  return shared;
}

/** Lines dropped and bytes waiting, for the metrics (zeros while nothing has logged). */
export function logBufferStats(): { dropped: number; buffered: number } {
  return { dropped: shared?.dropped ?? 0, buffered: shared?.buffered ?? 0 };
}
