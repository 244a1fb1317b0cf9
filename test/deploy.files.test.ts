// The packaging files: the Dockerfile (two stages, an unprivileged user, a health check), compose.yaml
// (two Kilns on PostgreSQL, Redis, an S3-compatible store and Caddy, wired by the variables Kiln reads)
// and the systemd unit. No container runtime is needed: where `docker compose` or `hadolint` exist they
// check the files too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { parse } from 'yaml';
import { REPO } from './support/child.ts';
import { ENV_HELP, loadConfig } from '../src/config.ts';

const read = (f: string) => readFileSync(path.join(REPO, f), 'utf8');
const has = (cmd: string, args: string[]) => {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

test('Dockerfile: a build stage and a slim one, run as the unprivileged node user, with a health check', () => {
  const d = read('Dockerfile');
  assert.equal(d.match(/^FROM /gm)?.length, 2);
  assert.match(d, /^USER node$/m);
  assert.match(d, /^HEALTHCHECK .*\n.*\/_\/health/m);
  assert.match(d, /^ENTRYPOINT \["node", "bin\/kiln.js"\]$/m);
  assert.match(d, /postgresql-client/, 'pg_dump for backups');
  if (has('hadolint', ['--version'])) execFileSync('hadolint', [path.join(REPO, 'Dockerfile')]);
});

test('compose.yaml: two Kilns on PostgreSQL, Redis and an S3 store, behind Caddy; every variable is one Kiln reads', () => {
  const c = parse(read('compose.yaml'), { merge: true });
  for (const s of ['postgres', 'redis', 'minio', 'kiln1', 'kiln2', 'caddy']) assert.ok(c.services[s], s);
  const known = new Set(ENV_HELP.map(([k]) => k));
  for (const k of ['kiln1', 'kiln2']) {
    const env = c.services[k].environment as Record<string, string>;
    for (const name of Object.keys(env)) assert.ok(known.has(name), `${k}: ${name} is not a Kiln variable`);
    // The configuration is valid for Kiln (placeholders filled as compose would).
    const filled = Object.fromEntries(
      Object.entries(env).map(([n, v]) => [n, String(v).replace(/\$\{(\w+):-([^}]*)\}/g, (_m, _k, d) => d)]),
    );
    const config = loadConfig(filled);
    assert.equal(config.blobs.store, 's3');
    assert.ok(config.databaseUrl && config.redisUrl);
  }
  assert.equal(c.services.kiln2.environment.BACKUP_EVERY, '', 'one process takes the scheduled backups');
  assert.deepEqual(c.services.caddy.volumes[0], './deploy/Caddyfile:/etc/caddy/Caddyfile:ro');
  assert.match(c.services.caddy.environment.KILN_UPSTREAM, /kiln1:8080 kiln2:8080/);
  if (has('docker', ['compose', 'version']))
    execFileSync('docker', ['compose', '-f', path.join(REPO, 'compose.yaml'), 'config', '--quiet']);
});

test('the systemd unit starts kiln serve, stops it with SIGTERM, and reads its secrets from a file', () => {
  const u = read('deploy/kiln.service');
  assert.match(u, /^ExecStart=\/usr\/bin\/node bin\/kiln\.js serve/m);
  assert.match(u, /^KillSignal=SIGTERM$/m);
  assert.match(u, /^EnvironmentFile=-\/etc\/kiln\/env$/m);
  for (const [, name] of u.matchAll(/^Environment=(\w+)=/gm))
    assert.ok(ENV_HELP.some(([k]) => k === name) || name === 'NODE_ENV', `${name} is a Kiln variable`);
});
