// The cap on event streams per client address (MAX_STREAMS_PER_ADDRESS, here 3): live-sync lanes and
// sync streams count together; beyond the cap 429 rate-limited with Retry-After; a closed stream frees
// its slot; other addresses are not affected.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { keyHolder } from './support/sync-client.ts';
import { signedIn, actingAs } from './support/people.ts';
import { SseClient } from './support/sse.ts';
import { createNode } from '../src/nodes/tree.ts';
import { loadConfig } from '../src/config.ts';

let kiln: TestKiln;
let port: number;
before(async () => {
  kiln = await startKiln({ env: { MAX_STREAMS_PER_ADDRESS: '3' } });
  port = Number(new URL(kiln.url).port);
});
after(() => kiln.stop());

test('the default cap is 100 streams per address', () => {
  assert.equal(loadConfig({}).maxStreamsPerAddress, 100);
});

test('beyond the cap a new stream is 429 with Retry-After; closing one frees its slot', async () => {
  const { key } = await keyHolder(kiln);
  const owner = kiln.client();
  const person = await signedIn(kiln, owner);
  const host = kiln.hostOf(person.username);
  const doc = await createNode(await actingAs(kiln.services, person.id), {
    ownerId: person.id,
    parentId: 0,
    type: 'site',
    name: 'capped.html',
    html: '<p>x</p>',
  });
  const sync = () =>
    SseClient.open({ port, host: kiln.config.rootDomain, path: '/_/sync/stream', headers: { 'x-api-key': key } });
  const live = () =>
    SseClient.open({
      port,
      host,
      path: `/_/sync?document-url=${encodeURIComponent(`http://${host}/${doc.name}`)}&lane=live`,
      headers: { cookie: owner.jar.header(host) },
    });

  const open = [await sync(), await sync(), await live()];
  for (const s of open) assert.equal(s.status, 200);
  for (const extra of [sync, live]) {
    const refused = await extra();
    assert.equal(refused.status, 429);
    assert.equal(refused.json.code, 'rate-limited');
    assert.ok(Number(refused.headers['retry-after']) > 0);
  }
  open[0].close();
  let again: SseClient | undefined;
  for (let i = 0; i < 50 && again?.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 50));
    again = await live();
  }
  assert.equal(again!.status, 200, 'a closed stream frees its slot');
  again!.close();
  open[1].close();
  open[2].close();
});
