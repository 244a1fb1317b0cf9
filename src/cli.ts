// The `kiln` command.
import { personRow, teamRow } from './store/accounts.ts';
import { parseArgs } from 'node:util';
import { ConfigError, ENV_HELP, loadConfig, type Config } from './config.ts';
import { startServer, createServices, closeServices } from './server.ts';
import type { Services } from './services.ts';
import type { Plan, TeamRole } from './store/schema.ts';
import { createLimiterFactory } from './ratelimit/limiters.ts';
import { systemClock } from './clock.ts';

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
  kiln --help                  this text

Environment:
${ENV_HELP.map(([k, v]) => `  ${k.padEnd(25)}${v}`).join('\n')}
`;

async function main(argv: string[]) {
  if (argv.includes('--help') || argv.includes('-h') || argv[0] === 'help') {
    process.stdout.write(HELP);
    return;
  }
  const config = loadConfig();
  const [cmd = 'serve', sub] = argv;
  if (cmd === 'serve') {
    const running = await startServer(config);
    console.log(`Kiln is running: main app ${config.baseUrl}  (documents at http://<username>.${config.rootDomain}/)`);
    const stop = async () => {
      await running.close();
      process.exit(0);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    return;
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
  if (cmd === 'export') return exportCommand(config, argv.slice(1));
  if (cmd === 'import') return importCommand(config, argv.slice(1));
  if (cmd === 'team' && sub === 'add') return teamAdd(config, argv.slice(2));
  if (cmd === 'team' && sub === 'member' && argv[2] === 'add') return teamMemberAdd(config, argv.slice(3));
  process.stderr.write(`Unknown command: ${argv.join(' ')}\n\n${HELP}`);
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

async function exportCommand(config: Config, args: string[]) {
  const { values } = parseArgs({
    args,
    options: { user: { type: 'string' }, versions: { type: 'boolean', default: false }, out: { type: 'string' } },
  });
  if (!required('export', values, ['user'])) return;
  await withServices(config, async (s) => {
    const { exportTree } = await import('./accounts/export.ts');
    const id = await accountIdOf(s, values.user!, 'person');
    const zip = await exportTree(s, id, id, { versions: values.versions });
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
    const { importTree } = await import('./accounts/export.ts');
    const { readFile } = await import('node:fs/promises');
    const id = await accountIdOf(s, values.user!, 'person');
    const r = await importTree(s, id, id, await readFile(values.file!));
    console.log(`Imported ${r.documents} documents, ${r.uploads} files and ${r.folders} folders into ${values.user}.`);
  });
}

async function ratelimitReset(config: Config) {
  const limiters = createLimiterFactory(config, systemClock);
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
    const m = await setMember(s, null, { teamId, username: values.user!, role: values.role as TeamRole });
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
