// Contact messages through HTTP: what hyperclayjs's sendMessage posts (fields + behaviorData) is kept
// for the page's owner and mailed to them; robots (automation flag, no interaction, the honeypot) are
// refused with 400 bot-suspected; another site cannot post for a host; 5 an hour per address; the
// owner's inbox (JSON, page, CSV, delete); nobody else reads it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as cheerio from 'cheerio';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { mailsTo } from './support/stripe.ts';

let kiln: TestKiln;
before(async () => {
  kiln = await startKiln();
});
after(() => kiln.stop());

const json = { headers: { accept: 'application/json' } };
const human = {
  webdriver: false,
  timeSpent: 12_000,
  mousePositions: [{ x: 1, y: 2, timestamp: 1, isTrusted: true }],
  keyboardEvents: [{ key: 'a' }],
  interactions: { clicks: [{}], touches: [], focusEvents: [{}], blurEvents: [], tabSwitches: [], keysSummary: ['a'] },
};

test('a message from a page reaches its owner (inbox, mail, CSV); robots and other sites are refused', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const host = kiln.hostOf(me.username);
  const visitor = kiln.client(host);
  const from = { origin: `http://${host}`, referer: `http://${host}/contact.html`, 'sec-fetch-site': 'same-origin' };
  const sent = await visitor.post(
    '/_/message',
    { name: 'Ada', email: 'ada@example.com', message: 'Hello,\nlove the page', behaviorData: human },
    { headers: from },
  );
  assert.equal(sent.status, 200, sent.text);
  assert.deepEqual(sent.json, { msg: 'Message sent', msgType: 'success' });

  for (const [why, body] of [
    ['automation', { message: 'x', behaviorData: { ...human, webdriver: true } }],
    ['no interaction at all', { message: 'x', behaviorData: { timeSpent: 200, interactions: {} } }],
    ['the honeypot', { message: 'x', website: 'http://spam.example', behaviorData: human }],
    ['no behaviour data', { message: 'x' }],
  ] as const) {
    const r = await kiln.client(host).post('/_/message', body, { headers: from });
    assert.equal(r.status, 400, why);
    assert.equal(r.json.code, 'bot-suspected', why);
  }
  const other = await signedIn(kiln, kiln.client());
  const cross = await kiln.client(host).post(
    '/_/message',
    { message: 'x', behaviorData: human },
    {
      headers: { origin: `http://${kiln.hostOf(other.username)}`, 'sec-fetch-site': 'same-site' },
    },
  );
  assert.equal(cross.status, 403, 'another account’s page cannot post for this host');

  const box = await main.get('/_/dashboard/messages', json);
  assert.equal(box.json.unread, 1);
  assert.equal(box.json.messages.length, 1);
  assert.deepEqual(box.json.messages[0].fields, {
    name: 'Ada',
    email: 'ada@example.com',
    message: 'Hello,\nlove the page',
  });
  assert.equal(box.json.messages[0].page, `${host}/contact.html`);
  assert.match((await mailsTo(kiln, me.email)).at(-1)!.text, /message: Hello,/);
  const dash = cheerio.load((await main.page('/_/dashboard')).text);
  assert.match(dash('a[href="/_/dashboard/messages"]').text(), /Messages \(1 new\)/);
  const page = cheerio.load((await main.page('/_/dashboard/messages')).text);
  assert.match(page('dl').text(), /love the page/);
  assert.equal((await main.get('/_/dashboard/messages', json)).json.unread, 0, 'read once shown');
  const csv = await main.get('/_/dashboard/messages.csv');
  assert.match(String(csv.headers['content-type']), /text\/csv/);
  assert.equal(csv.text.split('\r\n')[0], 'sent,page,name,email,message');
  assert.match(csv.text, /"Hello,\nlove the page"/);

  // Nobody else reads or deletes it.
  const stranger = kiln.client();
  await signedIn(kiln, stranger);
  assert.equal((await stranger.get('/_/dashboard/messages', json)).json.messages.length, 0);
  const id = box.json.messages[0].id;
  assert.equal((await stranger.post(`/_/dashboard/messages/${id}/delete`, {}, json)).status, 404);
  assert.equal((await main.post(`/_/dashboard/messages/${id}/delete`, {}, json)).status, 200);
  assert.equal((await main.get('/_/dashboard/messages', json)).json.messages.length, 0);
});

test('one address sends at most 5 messages an hour (429 with Retry-After)', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const host = kiln.hostOf(me.username);
  const visitor = kiln.client(host);
  const from = { origin: `http://${host}`, 'sec-fetch-site': 'same-origin' };
  for (let i = 0; i < 5; i++)
    assert.equal(
      (await visitor.post('/_/message', { message: `m${i}`, behaviorData: human }, { headers: from })).status,
      200,
    );
  const sixth = await visitor.post('/_/message', { message: 'm5', behaviorData: human }, { headers: from });
  assert.equal(sixth.status, 429);
  assert.ok(Number(sixth.headers['retry-after']) > 0);
});
