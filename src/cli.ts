// The `kiln` command.
import { parseArgs } from 'node:util';
import { ConfigError, ENV_HELP, loadConfig } from './config.ts';
import { startServer, createServices, closeServices } from './server.ts';

const HELP = `kiln — self-hostable service for single-file HTML apps

Usage:
  kiln [serve]                 start the server (default)
  kiln user add --email E --username U --password P [--plan free|personal|maker] [--superadmin]
  kiln --help                  this text

Environment:
${ENV_HELP.map(([k, v]) => `  ${k.padEnd(22)}${v}`).join('\n')}
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
      process.stderr.write(`kiln user add: missing ${missing.map((k) => '--' + k).join(', ')}\n\n${HELP}`);
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
  process.stderr.write(`Unknown command: ${argv.join(' ')}\n\n${HELP}`);
  process.exitCode = 2;
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof ConfigError) {
    process.stderr.write(err.message + '\n');
    process.exit(2);
  }
  process.stderr.write(`${err?.message ?? err}\n`);
  process.exit(1);
});
