// Outgoing mail. With SMTP_URL: nodemailer over SMTP. Without: every message is written to
// DATA_DIR/outbox as a JSON file and its first link is logged, so a self-hosted Kiln works with no
// mail server (and tests read confirmation links from the outbox).
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
}

export class OutboxMailer implements Mailer {
  readonly dir: string;
  private from: string;
  private log: (line: string) => void;
  constructor(dir: string, from: string, log: (line: string) => void = (line) => console.log(line)) {
    this.dir = dir;
    this.from = from;
    this.log = log;
  }

  async send(mail: Mail): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true });
    const at = new Date().toISOString();
    const file = path.join(this.dir, `${at.replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.json`);
    await fs.writeFile(file, JSON.stringify({ from: this.from, at, ...mail }, null, 2));
    const link = /https?:\/\/\S+/.exec(mail.text)?.[0];
    this.log(`mail to ${mail.to}: "${mail.subject}"${link ? ` — ${link}` : ''} (${file})`);
  }

  /** Messages written so far, oldest first (for tests and the admin). */
  async messages(): Promise<Array<Mail & { from: string; at: string; file: string }>> {
    let names: string[];
    try {
      names = (await fs.readdir(this.dir)).filter((n) => n.endsWith('.json')).sort();
    } catch {
      return [];
    }
    return Promise.all(
      names.map(async (n) => ({ ...JSON.parse(await fs.readFile(path.join(this.dir, n), 'utf8')), file: n })),
    );
  }
}

export class SmtpMailer implements Mailer {
  private transport: Promise<import('nodemailer').Transporter>;
  private from: string;
  constructor(url: string, from: string) {
    this.from = from;
    this.transport = import('nodemailer').then((m) => m.default.createTransport(url));
  }

  async send(mail: Mail): Promise<void> {
    await (await this.transport).sendMail({ from: this.from, ...mail });
  }
}
