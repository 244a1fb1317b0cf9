// The `kiln` command.
import { personRow, teamRow } from './store/accounts.ts';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, ENV_HELP, loadConfig, type Config } from './config.ts';
import { createServices, closeServices } from './server.ts';
import type { Services } from './services.ts';
import type { Plan, TeamRole } from './store/schema.ts';
import { createLimiterFactory } from './ratelimit/limiters.ts';
import { systemClock } from './clock.ts';
import { limits } from './limits.ts';

/** What the client commands read (they need none of the server's configuration). */
const CLIENT_ENV_HELP: Array<[string, string]> = [
  ['KILN_URL', `the main address of the Kiln \`kiln mcp\` talks to (default http://localhost:8080)`],
  ['KILN_KEY', 'the key `kiln mcp` and `kiln sync` act with (a sync key, hcsk_…, from the dashboard)'],
];

/** The environment table's first column: the longest name and two spaces (at least the commands' 25). */
const ENV_NAME_WIDTH = Math.max(25, ...ENV_HELP.map(([k]) => k.length + 2));

const HELP = `kiln — self-hostable service for single-file HTML apps

Usage:
  kiln [serve]                 start the server (default)
  kiln user add --email E --username U --password P [--plan free|personal|maker] [--superadmin]
  kiln key add --user U [--force]
                               print a new sync key for U (needs a plan that includes sync, or an
                               owner/editor role on such a team; --force: generate anyway)
  kiln team add --name T --owner U [--plan free|personal|maker]
                               create team T owned by U (plan: U's when it includes sync, else free)
  kiln team member add --team T --user U [--role owner|editor|viewer]
                               add U to team T (default editor) or change U's role
  kiln export --user U [--versions] [--out FILE]
                               the account's whole tree as a zip (to FILE, else standard output)
  kiln import --user U --file FILE
                               a zip into the account's tree (all or nothing; taken names refuse it)
  kiln ratelimit reset         clear every rate-limit counter (run with the server's DATA_DIR,
                               DATABASE_URL and REDIS_URL)
  kiln blobs migrate --to filesystem|postgres|s3
                               copy every upload's bytes from the configured BLOB_STORE to another
                               (the target's variables as for BLOB_STORE; run while serving, then
                               switch BLOB_STORE: files not yet copied are read from DATA_DIR/blobs)
  kiln blobs sweep             delete blobs no file names (older than a day; runs hourly anyway)
  kiln backup DIR|s3://bucket/prefix
                               a consistent backup while the server runs (database + blobs)
  kiln restore BACKUP          put a backup (its folder, or s3://bucket/prefix/kiln-backup-…) into
                               this configuration's empty instance (server stopped)
  kiln ai-edit serve --url URL --key hcsk_… --command "CMD" [--engine NAME] [--env VAR,…]
                    [--timeout S] [--concurrency N]
                               (or the key in KILN_SYNC_KEY, out of the process list)
                               answer the AI edit requests of the pages on URL (your document host,
                               e.g. https://you.example.com) with a local command: it reads the prompt
                               on stdin and writes the element on stdout. --engine: only requests that
                               start with @NAME (default: those naming no engine). The command gets
                               PATH, HOME, LANG and the variables --env names, never the key. --timeout: a
                               command still running after S seconds is ended and the page told
                               (default ${limits.aiEdit.timeoutMs / 1000}, as Kiln's own engines); --concurrency: at most N
                               commands at once, a request beyond them refused (default ${limits.aiEdit.perOwner})
  kiln sync DIR [--url URL] [--team NAME] [--once] [--dry-run] [--json] [--verbose]
                               keep folder DIR and your account on URL (or team NAME) in step: the
                               first run reconciles both sides, then it watches both until stopped
                               (--once: reconcile and exit). Key: KILN_KEY, or \`kiln login\`. URL and
                               team are remembered in DIR/.kiln/state.json
  kiln push DIR | kiln pull DIR [--url URL] [--team NAME] [--dry-run] [--prune] [--json] [--verbose]
                               one way: the account like DIR (push), or DIR like the account (pull);
                               --prune also removes what the source lacks (into Kiln's trash, or into
                               DIR/.kiln/trash/). Exit codes: 0 in step, 1 error, 2 usage, 3 files left
                               out (refused, or changed on both sides), 4 server unreachable, 5 key refused
  kiln login --url URL         check a sync key (read from standard input) and keep it for URL in
                               ~/.config/kiln/credentials.json (0600)
  kiln mcp                     Kiln's tools for an agent that starts a command (Claude Desktop, Claude Code,
                               Cursor): an MCP server on standard input and output that forwards to the Kiln at
                               KILN_URL with the key in KILN_KEY (see below); what is wrong goes to standard
                               error, exit 1. E.g. claude mcp add kiln -e KILN_URL=… -e KILN_KEY=… -- node /path/to/kiln/bin/kiln.js mcp
  kiln --version               Kiln's version and the Node.js it runs on
  kiln --help                  this text

Environment:
${ENV_HELP.map(([k, v]) => `  ${k.padEnd(ENV_NAME_WIDTH)}${v}`).join('\n')}

Environment of the client commands (kiln mcp, kiln sync, push, pull):
${CLIENT_ENV_HELP.map(([k, v]) => `  ${k.padEnd(ENV_NAME_WIDTH)}${v}`).join('\n')}
`;

async function aiEditServe(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      url: { type: 'string' },
      key: { type: 'string' },
      command: { type: 'string' },
      engine: { type: 'string' },
      env: { type: 'string' },
      timeout: { type: 'string' },
      concurrency: { type: 'string' },
    },
  });
  // The key may come from the environment instead: a command line is visible to every user of the machine.
  values.key ??= process.env.KILN_SYNC_KEY;
  const missing = (['url', 'key', 'command'] as const).filter((k) => !values[k]);
  if (missing.length) {
    process.stderr.write(
      `kiln ai-edit serve: missing ${missing.map((k) => `--${k}`).join(', ')}${values.key ? '' : ' (or KILN_SYNC_KEY)'}\n`,
    );
    process.exitCode = 2;
    return;
  }
  const whole = (name: string, raw: string | undefined, fallback: number, max: number) => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (Number.isInteger(n) && n >= 1 && n <= max) return n;
    process.stderr.write(`kiln ai-edit serve: --${name} must be a whole number from 1 to ${max}\n`);
    process.exitCode = 2;
    return null;
  };
  // As AI_EDIT_TIMEOUT_MS and AI_EDIT_CONCURRENCY allow (src/ai-edit/config.ts).
  const timeoutS = whole('timeout', values.timeout, limits.aiEdit.timeoutMs / 1000, 3600);
  const concurrency = whole('concurrency', values.concurrency, limits.aiEdit.perOwner, 1000);
  if (timeoutS === null || concurrency === null) return;
  const { commandWords } = await import('./ai-edit/engines.ts');
  const { serveAgent } = await import('./ai-edit/agent.ts');
  const stop = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
  try {
    await serveAgent({
      url: values.url!,
      key: values.key!,
      command: commandWords(values.command!),
      engine: values.engine?.replace(/^@/, '').toLowerCase(),
      env: (values.env ?? '')
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean),
      timeoutMs: timeoutS * 1000,
      concurrency,
      log: (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`),
      signal: stop.signal,
    });
  } catch (err) {
    process.stderr.write(`kiln ai-edit serve: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}

async function main(argv: string[]) {
  if (argv.includes('--help') || argv.includes('-h') || argv[0] === 'help') {
    process.stdout.write(HELP);
    return;
  }
  if (argv[0] === '--version' || argv[0] === '-v') {
    // src/cli.ts and dist/kiln.mjs are both one folder below package.json.
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    process.stdout.write(`kiln ${pkg.version} (Node.js ${process.versions.node})\n`);
    return;
  }
  const [cmd = 'serve', sub] = argv;
  // An agent on the owner's machine: needs none of the server's configuration.
  if (cmd === 'ai-edit' && sub === 'serve') return aiEditServe(argv.slice(2));
  // Kiln's tools for a local agent: a client of a Kiln, without the server's configuration.
  if (cmd === 'mcp') {
    const { mcpStdio } = await import('./mcp/stdio.ts');
    process.exitCode = await mcpStdio();
    // Open keep-alive connections to Kiln must not hold the process once the agent is gone.
    process.stderr.write('', () => process.exit(process.exitCode));
    return;
  }
  // A folder kept in step with an account: a client, also without the server's configuration.
  if (cmd === 'sync' || cmd === 'push' || cmd === 'pull' || cmd === 'login') {
    const { syncCli } = await import('./sync-cli/main.ts');
    const code = await syncCli(cmd, argv.slice(1));
    // Open keep-alive connections must not hold the process once the work is done and saved.
    process.stdout.write('', () => process.exit(code));
    return;
  }
  const config = loadConfig();
  if (cmd === 'serve') {
    const { values } = parseArgs({ args: argv.slice(1), options: { workers: { type: 'string' } } });
    const workers = values.workers === undefined ? 1 : Number(values.workers);
    if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
      process.stderr.write('kiln serve: --workers is a number from 1 to 64 (one per core)\n');
      process.exitCode = 2;
      return;
    }
    const { serve } = await import('./workers.ts');
    return serve(config, workers);
  }
  if (cmd === 'user' && sub === 'add') {
    const { values } = parseArgs({
      args: argv.slice(2),
      options: {
        email: { type: 'string' },
        username: { type: 'string' },
        password: { type: 'string' },
        plan: { type: 'string', default: 'free' },
        superadmin: { type: 'boolean', default: false },
      },
    });
    const missing = (['email', 'username', 'password'] as const).filter((k) => !values[k]);
    if (missing.length) {
      process.stderr.write(`kiln user add: missing ${missing.map((k) => `--${k}`).join(', ')}\n\n${HELP}`);
      process.exitCode = 2;
      return;
    }
    const services = await createServices(config);
    try {
      const { createPerson } = await import('./accounts/people.ts');
      const person = await createPerson(services, {
        email: values.email!,
        username: values.username!,
        password: values.password!,
        plan: values.plan as never,
        isSuperadmin: values.superadmin,
        accountType: 'dev',
        emailConfirmed: true,
      });
      const role = values.superadmin ? ', superadmin' : '';
      console.log(`Created ${person.username} <${person.email}> (id ${person.id}, plan ${person.plan}${role})`);
    } finally {
      await closeServices(services);
    }
    return;
  }
  if (cmd === 'key' && sub === 'add') return keyAdd(config, argv.slice(2));
  if (cmd === 'ratelimit' && sub === 'reset') return ratelimitReset(config);
  if (cmd === 'backup') {
    if (!sub) return usage('backup: name a folder or s3://bucket/prefix');
    return withServices(config, async (s) => {
      const { takeBackup } = await import('./backup/backup.ts');
      const started = Date.now();
      const { location, manifest } = await takeBackup(s, sub);
      const mb = (manifest.bytes / 1024 / 1024).toFixed(1);
      console.log(`Backed up to ${location}: ${manifest.blobs} blob(s), ${mb} MB, in ${Date.now() - started} ms.`);
    });
  }
  if (cmd === 'restore') {
    if (!sub) return usage('restore: name a backup folder or s3:// address');
    const { restoreBackup } = await import('./backup/backup.ts');
    const { blobStoreFor } = await import('./blobs/open.ts');
    const m = await restoreBackup(config, sub, () => blobStoreFor(config.blobs, config.dataDir));
    console.log(`Restored the backup of ${m.createdAt} (${m.blobs} blob(s)). Start Kiln as usual.`);
    return;
  }
  if (cmd === 'blobs' && sub === 'migrate') return blobsMigrate(config, argv.slice(2));
  if (cmd === 'blobs' && sub === 'sweep')
    return withServices(config, async (s) => {
      const { sweepBlobs } = await import('./blobs/sweep.ts');
      const r = await sweepBlobs(s);
      console.log(`Deleted ${r.deleted} unreferenced blob(s); ${r.kept} kept.`);
    });
  if (cmd === 'export') return exportCommand(config, argv.slice(1));
  if (cmd === 'import') return importCommand(config, argv.slice(1));
  if (cmd === 'team' && sub === 'add') return teamAdd(config, argv.slice(2));
  if (cmd === 'team' && sub === 'member' && argv[2] === 'add') return teamMemberAdd(config, argv.slice(3));
  process.stderr.write(`Unknown command: ${argv.join(' ')}\n\n${HELP}`);
  process.exitCode = 2;
}

/** Copies the configured store's blobs into the store `--to` names (configured by the same variables). */
async function blobsMigrate(config: Config, args: string[]) {
  const { values } = parseArgs({ args, options: { to: { type: 'string' } } });
  if (!required('blobs migrate', values, ['to'])) return;
  const to = values.to as string;
  if (!['filesystem', 'postgres', 's3'].includes(to)) {
    process.stderr.write('kiln blobs migrate: --to is filesystem, postgres or s3\n');
    process.exitCode = 2;
    return;
  }
  const { blobStoreFor } = await import('./blobs/open.ts');
  const { copyBlobs } = await import('./blobs/sweep.ts');
  const target = await blobStoreFor(loadConfig({ ...process.env, BLOB_STORE: to }).blobs, config.dataDir);
  // The source is the configured store, and the files of DATA_DIR/blobs when that is not the filesystem.
  const sources = [await blobStoreFor(config.blobs, config.dataDir)];
  if (config.blobs.store !== 'filesystem') sources.push(await blobStoreFor({ store: 'filesystem' }, config.dataDir));
  try {
    for (const source of sources) {
      if (source.kind === target.kind) continue;
      const r = await copyBlobs(source, target, (n) => n % 100 === 0 && console.log(`  ${n} copied…`));
      console.log(`From ${source.kind} to ${to}: ${r.copied} copied, ${r.present} already there.`);
    }
  } finally {
    await Promise.all([target.close(), ...sources.map((s) => s.close())]);
  }
}

function usage(line: string) {
  process.stderr.write(`kiln ${line}\n\n${HELP}`);
  process.exitCode = 2;
}

/** Refuses with the usage when a required flag is missing; true when all are there. */
function required(cmd: string, values: Record<string, unknown>, names: string[]): boolean {
  const missing = names.filter((k) => !values[k]);
  if (missing.length === 0) return true;
  process.stderr.write(`kiln ${cmd}: missing ${missing.map((k) => `--${k}`).join(', ')}\n\n${HELP}`);
  process.exitCode = 2;
  return false;
}

async function withServices(config: Config, fn: (s: Services) => Promise<void>) {
  const services = await createServices(config);
  try {
    await fn(services);
  } finally {
    await closeServices(services);
  }
}

async function accountIdOf(s: Services, username: string, kind: 'person' | 'team'): Promise<number> {
  const row =
    kind === 'team' ? await teamRow(s.database.db, username.trim()) : await personRow(s.database.db, { username });
  if (!row) throw new Error(`There is no ${kind === 'team' ? 'team' : 'person'} named "${username}".`);
  return row.id;
}

/** Kiln itself, acting from the shell (the CLI's commands pass every access check). */
async function asSystem(s: Services) {
  const [{ contextOf }, { SYSTEM }] = await Promise.all([import('./context.ts'), import('./access/caller.ts')]);
  return contextOf(s, SYSTEM);
}

async function exportCommand(config: Config, args: string[]) {
  const { values } = parseArgs({
    args,
    options: { user: { type: 'string' }, versions: { type: 'boolean', default: false }, out: { type: 'string' } },
  });
  if (!required('export', values, ['user'])) return;
  await withServices(config, async (s) => {
    const { exportTree } = await import('./accounts/export.ts');
    const id = await accountIdOf(s, values.user!, 'person');
    const zip = await exportTree(await asSystem(s), { ownerId: id, versions: values.versions });
    const { pipeline } = await import('node:stream/promises');
    const { createWriteStream } = await import('node:fs');
    await pipeline(zip, values.out ? createWriteStream(values.out) : process.stdout);
    if (values.out) console.error(`Wrote ${values.out}`);
  });
}

async function importCommand(config: Config, args: string[]) {
  const { values } = parseArgs({ args, options: { user: { type: 'string' }, file: { type: 'string' } } });
  if (!required('import', values, ['user', 'file'])) return;
  await withServices(config, async (s) => {
    const { importTree, importedInWords } = await import('./accounts/export.ts');
    const id = await accountIdOf(s, values.user!, 'person');
    const r = await importTree(await asSystem(s), { ownerId: id, file: values.file! });
    console.log(`Imported ${importedInWords(r)} into ${values.user}.`);
  });
}

async function ratelimitReset(config: Config) {
  const limiters = await createLimiterFactory(config, systemClock);
  try {
    process.stdout.write(`${await limiters.resetAll()}\n`);
  } finally {
    await limiters.close();
  }
}

async function keyAdd(config: Config, args: string[]) {
  const { values } = parseArgs({
    args,
    options: { user: { type: 'string' }, force: { type: 'boolean', default: false } },
  });
  if (!required('key add', values, ['user'])) return;
  await withServices(config, async (s) => {
    const { assertMayGenerateKey, createSyncKey } = await import('./sync/keys.ts');
    const id = await accountIdOf(s, values.user!, 'person');
    if (!values.force) await assertMayGenerateKey(s, id);
    const made = await createSyncKey(s, id);
    // The key alone on stdout (for scripts); what it is on stderr.
    process.stdout.write(`${made.key}\n`);
    process.stderr.write(
      `Sync key ${made.prefix}… for ${values.user!.toLowerCase()}, expires ${made.expiresAt}. It is shown only this once.\n`,
    );
  });
}

async function teamAdd(config: Config, args: string[]) {
  const { values } = parseArgs({
    args,
    options: { name: { type: 'string' }, owner: { type: 'string' }, plan: { type: 'string' } },
  });
  if (!required('team add', values, ['name', 'owner'])) return;
  await withServices(config, async (s) => {
    const { createTeam, planIncludesSync } = await import('./teams/teams.ts');
    const ownerId = await accountIdOf(s, values.owner!, 'person');
    const owner = (await personRow(s.database.db, { id: ownerId }))!;
    const plan = (values.plan ?? (planIncludesSync(owner) ? owner.plan : 'free')) as Plan;
    const team = await createTeam(s, { username: values.name!, ownerId, plan });
    console.log(
      `Created team ${team.username} (id ${team.id}, plan ${team.plan}), owner ${values.owner!.toLowerCase()}`,
    );
  });
}

async function teamMemberAdd(config: Config, args: string[]) {
  const { values } = parseArgs({
    args,
    options: { team: { type: 'string' }, user: { type: 'string' }, role: { type: 'string', default: 'editor' } },
  });
  if (!required('team member add', values, ['team', 'user'])) return;
  await withServices(config, async (s) => {
    const { setMember } = await import('./teams/teams.ts');
    const teamId = await accountIdOf(s, values.team!, 'team');
    const m = await setMember(await asSystem(s), {
      teamId,
      username: values.user!,
      role: values.role as TeamRole,
    });
    console.log(`${m.username} is ${m.role} of ${values.team!.toLowerCase()}`);
  });
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`${err?.message ?? err}\n`);
  process.exit(1);
});
