// An owner with a folder marked as a collection, made as a person makes one (the dashboard's routes).
import assert from 'node:assert/strict';
import type { TestKiln } from './kiln.ts';
import { signedIn } from './people.ts';
import type { NewPerson } from '../../src/accounts/people.ts';

const JSON_HEADERS = { accept: 'application/json' };

export async function markedCollection(
  kiln: TestKiln,
  opts: { folder?: string; person?: Partial<NewPerson>; homePage?: string } = {},
) {
  const folder = opts.folder ?? 'contact';
  const main = kiln.client();
  const me = await signedIn(kiln, main, opts.person);
  let homeId: number | undefined;
  if (opts.homePage !== undefined) {
    const home = await main.post('/_/dashboard/nodes', { type: 'site', name: 'index.html', html: opts.homePage });
    assert.equal(home.status, 201, home.text);
    homeId = home.json.node.id as number;
  }
  const made = await main.post('/_/dashboard/nodes', { type: 'folder', name: folder }, { headers: JSON_HEADERS });
  assert.equal(made.status, 201, made.text);
  const folderId = made.json.node.id as number;
  const marked = await main.post(
    `/_/dashboard/nodes/${folderId}/collection`,
    { collection: '1' },
    { headers: JSON_HEADERS },
  );
  assert.equal(marked.status, 201, marked.text);
  const info = await main.get(`/_/dashboard/nodes/${folderId}/collection`, { headers: JSON_HEADERS });
  assert.equal(info.status, 200, info.text);
  const host = kiln.hostOf(me.username);
  const c = info.json.collection;
  return {
    me,
    main,
    host,
    folderId,
    homeId,
    id: c.id as string,
    token: c.submitToken as string,
    owner: main.on(host),
    visitor: kiln.client(host),
    records: `/_/collection/${c.id}/records`,
    info: c,
  };
}
