// CSV exports against formula injection (security review #22, finding 7): a cell a spreadsheet would
// run as a formula (a leading =, +, -, @, tab or carriage return) is exported as text, with a leading
// apostrophe, by both exporters: the messages inbox (built on the server) and a collection's dashboard
// page (built in the browser, from the same helper's source).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startKiln, type TestKiln } from './support/kiln.ts';
import { signedIn } from './support/people.ts';
import { csvCell } from '../src/core/csv.ts';

let kiln: TestKiln;
before(async () => {
  kiln = await startKiln();
});
after(() => kiln.stop());

const json = { accept: 'application/json' };
const human = {
  webdriver: false,
  timeSpent: 12_000,
  mousePositions: [{ x: 1, y: 2, timestamp: 1, isTrusted: true }],
  keyboardEvents: [{ key: 'a' }],
  interactions: { clicks: [{}], touches: [], focusEvents: [{}], blurEvents: [], tabSwitches: [], keysSummary: ['a'] },
};

/** One value for each trigger, and what the exported cell must be. */
const TRIGGERS: Array<[string, string]> = [
  ['=HYPERLINK("http://x")', `"'=HYPERLINK(""http://x"")"`],
  ['+1+1', `"'+1+1"`],
  ['-2+3', `"'-2+3"`],
  ['@SUM(A1)', `"'@SUM(A1)"`],
  ['\t=cmd', `"'\t=cmd"`],
  ['\r=cmd', `"'\r=cmd"`],
];

test('the messages CSV exports every formula trigger as text, tab and carriage return included', async () => {
  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const host = kiln.hostOf(me.username);
  const fields = Object.fromEntries(TRIGGERS.map(([v], i) => [`f${i}`, v]));
  const from = { origin: `http://${host}`, referer: `http://${host}/contact.html`, 'sec-fetch-site': 'same-origin' };
  const sent = await kiln.client(host).post('/_/message', { ...fields, behaviorData: human }, { headers: from });
  assert.equal(sent.status, 200, sent.text);
  const csv = await main.get('/_/dashboard/messages.csv');
  assert.equal(csv.status, 200);
  for (const [value, cell] of TRIGGERS)
    assert.ok(csv.text.includes(`,${cell}`), `${JSON.stringify(value)} is exported as ${JSON.stringify(cell)}`);
  assert.equal(csv.text.split('\r\n')[0], 'sent,page,f0,f1,f2,f3,f4,f5', 'plain cells stay as they are');
});

test('the collection dashboard’s CSV download uses the same cell rule', async () => {
  for (const [value, cell] of TRIGGERS) assert.equal(csvCell(value), cell);
  assert.equal(csvCell('plain'), 'plain');
  assert.equal(csvCell('a,b'), '"a,b"');
  assert.equal(csvCell('1-2'), '1-2', 'a minus inside is no trigger');

  const main = kiln.client();
  const me = await signedIn(kiln, main);
  const made = await main.post('/_/dashboard/nodes', { type: 'folder', name: 'contact' }, { headers: json });
  assert.equal(made.status, 201, made.text);
  const marked = await main.post(
    `/_/dashboard/nodes/${made.json.node.id}/collection`,
    { collection: '1' },
    { headers: json },
  );
  assert.equal(marked.status, 201, marked.text);
  const page = await main.on(kiln.hostOf(me.username)).get('/contact/dashboard.html');
  assert.equal(page.status, 200);
  // The page defines the helper from its source, and its download maps every cell through it.
  assert.ok(page.text.includes(`const csvCell = ${String(csvCell)};`), 'the page carries the helper itself');
  assert.match(page.text, /\.map\(\(v\) => csvCell\(text\(v\)\)\)/);
});
