// Kiln stops (SIGTERM) while an AI edit runs: the page hears `ai-edit/error` ("Kiln is restarting") on its bus
// stream before the stream is closed — it does not wait out hyperclayjs's 90 s watchdog — and the engine is
// ended. One process, and `kiln serve --workers 2` (where the page's stream and the request may be on different
// workers; PostgreSQL + Redis only). Kiln runs as a child process here: the test sends it the signal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnKiln, isAlive, pidIn, REPO } from './support/child.ts';
import { instance } from './support/instance.ts';
import { storage } from './support/kiln.ts';
import { SseClient } from './support/sse.ts';
import { until } from './support/wait.ts';

const ENGINE = path.join(REPO, 'test/support/ai-engine.mjs');

async function editInFlightWhenStopped(args: string[]) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kiln-ai-stop-'));
  // The engine answers a first piece, then never ends.
  const i = await instance({ AI_EDIT_COMMAND: `"${process.execPath}" ${ENGINE} ${dir} slow` });
  const kiln = await spawnKiln(i.env, { args });
  try {
    if (args.includes('--workers'))
      await until(() => kiln.output().includes('running with'), { what: 'workers ready' });
    const owner = i.owner(kiln.port);
    const page = await SseClient.open({
      port: kiln.port,
      host: i.host,
      path: '/_/bus/subscribe?channel=ai-edit',
      headers: { cookie: owner.jar.header(i.host) ?? '', 'sec-fetch-site': 'same-origin' },
    });
    assert.equal(page.status, 200, page.body);
    await page.comment('connected');
    const sent = await owner.post(
      '/_/bus/send',
      {
        channel: 'ai-edit',
        type: 'ai-edit/request',
        v: 1,
        sender: 'page-stop01',
        payload: {
          id: 'req-stop',
          editId: 'intro',
          tag: 'p',
          elementHTML: '<p data-edit-id="intro">Hi</p>',
          comment: 'longer',
          contextRefs: [],
        },
      },
      {
        headers: {
          'page-url': `http://${i.host}${i.doc}`,
          origin: `http://${i.host}`,
          'sec-fetch-site': 'same-origin',
        },
      },
    );
    assert.equal(sent.status, 200, sent.text);
    // The engine runs and its first piece reached the page.
    const mine = () => page.frames.map((f) => f.json).filter((e) => e?.payload?.id === 'req-stop');
    await until(() => mine().some((e) => e.type === 'ai-edit/delta'), {
      what: `the engine's first piece on the page's stream:\n${page.raw}\n${kiln.output()}`,
    });
    const engine = pidIn(path.join(dir, 'engine.pid'));
    assert.ok(engine && isAlive(engine), 'the engine runs');

    kiln.child.kill('SIGTERM');
    await page.end(30_000);
    const error = mine().find((e) => e.type === 'ai-edit/error');
    assert.ok(error, `the page was told before its stream closed; it got:\n${page.raw}`);
    assert.match(error.payload.message, /Kiln is restarting/);
    assert.ok(!mine().some((e) => e.type === 'ai-edit/done'));
    await kiln.kill();
    assert.deepEqual({ code: kiln.child.exitCode, signal: kiln.child.signalCode }, { code: 0, signal: null });
    await until(() => !isAlive(engine), { what: 'the engine to be ended' });
  } finally {
    await kiln.kill('SIGKILL');
    await i.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

test(
  'SIGTERM during an AI edit (one process): the page is told Kiln is restarting before its stream closes',
  {
    timeout: 90_000,
  },
  () => editInFlightWhenStopped([]),
);

test(
  'SIGTERM during an AI edit (kiln serve --workers 2): the page is told before its stream closes',
  {
    skip: (storage !== 'postgres' || !process.env.KILN_TEST_REDIS_URL) && 'workers need PostgreSQL + Redis',
    timeout: 90_000,
  },
  () => editInFlightWhenStopped(['--workers', '2']),
);
