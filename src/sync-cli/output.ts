// What `kiln sync` tells people and machines: one line per change (stdout), or with --json one JSON
// object per event; a progress bar (files, bytes) on a terminal's stderr during a first sync; more with
// --verbose.
export interface SyncEvent {
  event: string;
  path?: string;
  [k: string]: unknown;
}

const kb = (n: number) =>
  n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : n >= 1024 ? `${Math.round(n / 1024)} KB` : `${n} B`;

export class Output {
  readonly json: boolean;
  readonly verbose: boolean;
  private bar: { files: number; bytes: number; doneFiles: number; doneBytes: number } | null = null;
  private readonly tty: boolean;
  private readonly out: NodeJS.WritableStream;
  private readonly err: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

  constructor(opts: { json: boolean; verbose: boolean; out?: NodeJS.WritableStream; err?: NodeJS.WriteStream }) {
    this.json = opts.json;
    this.verbose = opts.verbose;
    this.out = opts.out ?? process.stdout;
    this.err = opts.err ?? process.stderr;
    this.tty = Boolean((this.err as { isTTY?: boolean }).isTTY) && !opts.json;
  }

  /** An event: a JSON line, or a line for people (`text`), or nothing (`text` null and not verbose). */
  emit(e: SyncEvent, text: string | null, opts: { verboseOnly?: boolean; toErr?: boolean } = {}): void {
    if (this.json) {
      this.out.write(`${JSON.stringify({ time: new Date().toISOString(), ...e })}\n`);
      return;
    }
    if (text === null || (opts.verboseOnly && !this.verbose)) return;
    this.clearBar();
    (opts.toErr ? this.err : this.out).write(`${text}\n`);
    this.drawBar();
  }

  startBar(files: number, bytes: number): void {
    if (!this.tty || files === 0) return;
    this.bar = { files, bytes, doneFiles: 0, doneBytes: 0 };
    this.drawBar();
  }

  tick(bytes: number): void {
    if (!this.bar) return;
    this.bar.doneFiles++;
    this.bar.doneBytes += bytes;
    this.drawBar();
  }

  endBar(): void {
    if (!this.bar) return;
    this.clearBar();
    this.bar = null;
  }

  private drawBar(): void {
    if (!this.bar) return;
    const b = this.bar;
    const width = 30;
    const f = b.files ? b.doneFiles / b.files : 1;
    const fill = Math.round(f * width);
    this.err.write(
      `\r[${'#'.repeat(fill)}${'-'.repeat(width - fill)}] ${b.doneFiles}/${b.files} files, ${kb(b.doneBytes)}/${kb(b.bytes)}`,
    );
  }

  private clearBar(): void {
    if (this.bar) this.err.write('\r\x1b[2K');
  }
}

export { kb };
