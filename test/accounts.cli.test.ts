// The `kiln` command: --help, configuration errors, and `kiln user add` creating accounts a server then signs in.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENV_HELP } from '../src/config.ts';
import { freshPostgres, startKiln, storage } from './support/kiln.ts';
import { newPerson } from './support/people.ts';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const BIN = path.join(ROOT, 'bin', 'kiln.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/kiln.js ...args` with only the given environment (plus PATH/HOME); killed after 60 s. */
function kilnCmd(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// The storage `kiln user add` writes to: a temporary DATA_DIR (SQLite) or a fresh PostgreSQL database.
let dataDir: string;
let pgdb: Awaited<ReturnType<typeof freshPostgres>> | null = null;
let storageEnv: Record<string, string>;
before(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'kiln-cli-'));
  if (storage === 'postgres') pgdb = await freshPostgres();
  storageEnv = { DATA_DIR: dataDir, ...(pgdb ? { DATABASE_URL: pgdb.url } : {}) };
});
after(async () => {
  await pgdb?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('kiln --help lists every environment variable and the user add command', async () => {
  const run = await kilnCmd(['--help'], {});
  assert.equal(run.code, 0, run.stderr);
  for (const [name] of ENV_HELP) assert.match(run.stdout, new RegExp(`^\\s+${name}\\s`, 'm'), name);
  assert.match(run.stdout, /kiln user add --email E --username U --password P/);
});

test('kiln --version prints the package version and the Node.js it runs on', async () => {
  const run = await kilnCmd(['--version'], {});
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, `kiln 0.1.0 (Node.js ${process.versions.node})\n`);
});

test('a bad environment variable stops kiln with a non-zero exit and a message naming it', async () => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ ROOT_DOMAIN: 'Not A Host' }, 'ROOT_DOMAIN'],
    [{ BASE_URL: 'ftp://kiln.example' }, 'BASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
  ];
  for (const [env, name] of cases) {
    // Everything else is valid and would start a server on a free loopback port if the bad value were accepted.
    const run = await kilnCmd(['serve'], { PORT: '0', HOST: '127.0.0.1', ...storageEnv, ...env });
    assert.notEqual(run.code, 0, `${name}: ${run.stdout}`);
    assert.match(run.stderr, new RegExp(`\\b${name}\\b`), run.stderr);
  }
});

test('a PostgreSQL database that does not exist stops kiln, with or without workers, in one line naming DATABASE_URL', async () => {
  // A database name no test creates, on the test server: the server answers, the database is missing.
  const missing = (process.env.KILN_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test').replace(
    /\/[^/]*$/,
    '/kiln_no_such_database',
  );
  const redis = process.env.KILN_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  for (const args of [['serve'], ['serve', '--workers', '2']]) {
    const run = await kilnCmd(args, { PORT: '0', HOST: '127.0.0.1', DATABASE_URL: missing, REDIS_URL: redis });
    assert.equal(run.code, 1, `${args.join(' ')}: ${run.stderr}`);
    const lines = run.stderr.trim().split('\n');
    assert.equal(lines.length, 1, run.stderr);
    assert.match(
      lines[0],
      /^DATABASE_URL names database "kiln_no_such_database" on .*, which does not exist: create it/,
    );
  }
});

test('kiln user add creates an account that signs in on a server using the same storage', async () => {
  const p = newPerson();
  const admin = newPerson();
  let run = await kilnCmd(
    ['user', 'add', '--email', p.email, '--username', p.username, '--password', p.password, '--plan', 'personal'],
    storageEnv,
  );
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, new RegExp(`Created ${p.username} <${p.email}>.*plan personal`));
  run = await kilnCmd(
    [
      'user',
      'add',
      '--email',
      admin.email,
      '--username',
      admin.username,
      '--password',
      admin.password,
      '--plan',
      'maker',
      '--superadmin',
    ],
    storageEnv,
  );
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /superadmin/);

  const kiln = await startKiln({ env: storageEnv });
  try {
    const res = await kiln.client().post('/_/login', { email: p.email, password: p.password });
    assert.equal(res.status, 200);
    assert.equal(res.json.username, p.username);
    const adminLogin = await kiln
      .client()
      .post(
        '/_/login',
        { email: admin.username, password: admin.password },
        { form: true, headers: { accept: 'text/html' } },
      );
    assert.equal(adminLogin.status, 302);
    assert.equal(adminLogin.headers.location, '/_/dashboard');
    // The instance is set up: the first-run page refuses.
    const setup = await kiln
      .client()
      .post('/_/setup', { email: 'x@example.com', username: 'someone', password: 'Another-long-pw-1' });
    assert.equal(setup.status, 409);

    const rows = await kiln.services.database.db
      .selectFrom('accounts')
      .innerJoin('people', 'people.account_id', 'accounts.id')
      .select([
        'accounts.username',
        'accounts.plan',
        'accounts.has_active_subscription',
        'people.is_superadmin',
        'people.email_confirmed',
        'people.account_type',
      ])
      .orderBy('accounts.id')
      .execute();
    assert.deepEqual(rows, [
      {
        username: p.username,
        plan: 'personal',
        has_active_subscription: 1,
        is_superadmin: 0,
        email_confirmed: 1,
        account_type: 'dev',
      },
      {
        username: admin.username,
        plan: 'maker',
        has_active_subscription: 1,
        is_superadmin: 1,
        email_confirmed: 1,
        account_type: 'dev',
      },
    ]);
  } finally {
    await kiln.stop();
  }
});

test('kiln user add refuses bad input with a non-zero exit and the rule', async () => {
  const taken = newPerson();
  assert.equal(
    (
      await kilnCmd(
        ['user', 'add', '--email', taken.email, '--username', taken.username, '--password', taken.password],
        storageEnv,
      )
    ).code,
    0,
  );
  const p = newPerson();
  const cases: Array<[string[], RegExp]> = [
    [['--email', p.email, '--username', p.username], /missing --password/],
    [['--email', p.email, '--username', p.username, '--password', 'short'], /at least 8 characters/],
    [['--email', p.email, '--username', p.username, '--password', 'password1'], /most common/],
    [['--email', p.email, '--username', 'admin', '--password', p.password], /reserved/],
    [
      ['--email', p.email, '--username', p.username, '--password', p.password, '--plan', 'gold'],
      /Plan must be one of free, personal, maker/,
    ],
    [['--email', p.email, '--username', taken.username, '--password', p.password], /username is taken/],
    [['--email', taken.email, '--username', p.username, '--password', p.password], /email already exists/],
  ];
  for (const [args, message] of cases) {
    const run = await kilnCmd(['user', 'add', ...args], storageEnv);
    assert.notEqual(run.code, 0, args.join(' '));
    assert.match(run.stderr, message, args.join(' '));
  }
});

test('kiln listens on 127.0.0.1 unless HOST is set', async () => {
  const { loadConfig } = await import('../src/config.ts');
  const { startServer } = await import('../src/server.ts');
  assert.equal(loadConfig({}).host, '127.0.0.1');
  assert.equal(loadConfig({ HOST: '0.0.0.0' }).host, '0.0.0.0');
  const run = await kilnCmd(['--help'], {});
  assert.match(run.stdout, /^\s+HOST\s+address to bind \(default 127\.0\.0\.1/m);
  // A server started without HOST answers on loopback only.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-host-'));
  const running = await startServer(
    loadConfig({ PORT: '0', DATA_DIR: dir, LOG_LEVEL: 'silent', ...(pgdb ? { DATABASE_URL: pgdb.url } : {}) }),
  );
  try {
    const address = running.app.server.address() as { address: string; port: number };
    assert.equal(address.address, '127.0.0.1');
    const res = await fetch(`http://127.0.0.1:${address.port}/_/login`, { headers: { host: 'kiln.localhost:8080' } });
    assert.equal(res.status, 200);
  } finally {
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
