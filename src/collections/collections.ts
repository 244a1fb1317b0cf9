// Collections: a folder marked as a collection gathers submissions. Marking it adds three things in one
// transaction: `submission-form.html` (public), `dashboard.html` (private: its owner's) and `records/`,
// where every record is one JSON upload (`1.json`, `2.json` …), so records sync to Hyperclay Local as
// files like any others. The collection's id (`col_…`) names the folder's row, not its path: it stays
// the same through renames and moves.
//
// Records are private data: the records folder and everything put into it are private (src/store/nodes.ts
// `visibilityUnder`), so `records/1.json` answers like a missing file to everyone but the owner, on every
// path; the submitter reads its own record through the API with its edit token.
//
// What anonymous submitters may store is bounded per collection (its owner sets the bounds; defaults in
// src/limits.ts `collection`): records, total bytes, and submissions per address in an hour, refused
// (413, 429) before a byte is stored. A submitter's change to its record (its edit token) counts against the
// byte cap too, and is limited per record and per address in an hour. The caps hold under concurrency: a
// write first takes its room in one transaction (the records folder's row locked, what the collection uses
// counted, the room held: `collection_held`), then stores its bytes, then writes its file and gives the room
// back to it in a second transaction. Bytes a submitter's change replaced stay counted until the blob sweep
// may free them (limits.collection.replacedKeptMs), as do bytes stored for a write that then failed.
//
// Who may do what (on the owner's own host only; any other host answers 404):
//   create  anyone with the collection's submit token
//   list    the owner (and a team's owners and editors)
//   read    the owner, or whoever holds the record's edit token (returned when it was created)
//   update  the owner, or the record's edit-token holder
//   delete  the owner
// Records are any JSON value up to 1 MB (limits.body.jsonCollection). Every change reaches open collection
// dashboards as a `collection-record` event (src/collections/events.ts), however it was made.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { TOO_DEEP, nestsDeeperThan, type Json } from '../core/json.ts';
import { ifMatchHolds, type IfMatch } from '../core/conditional.ts';
import type { Services } from '../services.ts';
import type { Tx, NodeRow } from '../store/schema.ts';
import type { AfterCommit } from '../store/transaction.ts';
import type { Actor } from '../access/actor.ts';
import type { Ctx } from '../context.ts';
import type { SseStream } from '../sse/stream.ts';
import { recordsView } from './events.ts';
import { channels } from '../events/bus.ts';
import { grants } from '../events/revocations.ts';
import { KilnError, badRequest, fail, forbidden, notFound, tooLarge, tooMany } from '../errors.ts';
import { createIn, deleteNode, nameConflict } from '../nodes/tree.ts';
import { childPathOf } from '../nodes/find.ts';
import { childNamed, makeSubtreePrivate, nodeById, updateNode } from '../store/nodes.ts';
import {
  type CollectionRow,
  collectionById,
  collectionOfFolder,
  collectionUsage,
  deleteCollection,
  forgetHeld,
  hold,
  insertCollection,
  recordFiles,
  setCollectionLimits,
  setRecordsFolder,
  settleHold,
  takeRecordKey,
} from '../store/collections.ts';
import { inTransaction } from '../store/transaction.ts';
import { publishVisibilityChanged } from '../events/publish.ts';
import { limits } from '../limits.ts';
import { formatSize } from '../core/size.ts';
import { effectivePlan, loadPlanAccount } from '../billing/plans.ts';
import { assertUploadSize, insertUpload, replaceUpload, storeBytes, type StoredBytes } from '../uploads/upload.ts';
import { checksum } from '../core/checksum.ts';
import { dashboardPage, submissionFormPage } from './starters.ts';

export const COLLECTION_FILES = {
  form: 'submission-form.html',
  dashboard: 'dashboard.html',
  records: 'records',
} as const;

/** Record keys: what a file name before `.json` may be (numbers for submissions; a synced file may
 *  bring its own name). */
const RECORD_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** What anonymous submitters may store in one collection. */
export interface CollectionLimits {
  maxRecords: number;
  maxBytes: number;
  maxPerAddressHour: number;
}

export interface CollectionInfo {
  id: string;
  submitToken: string;
  folderId: number;
  /** The folder's path in the owner's tree (`forms/contact`). */
  path: string;
  limits: CollectionLimits;
}

/** A record as the API answers it. */
export interface RecordView {
  id: string;
  data: Json;
  modifiedAt: string;
  size: number;
}

const bounds = limits.collection;

export const limitsOf = (c: CollectionRow): CollectionLimits => ({
  maxRecords: c.max_records ?? bounds.records.default,
  maxBytes: c.max_bytes ?? bounds.bytes.default,
  maxPerAddressHour: c.max_per_address_hour ?? bounds.perAddressHour.default,
});

const infoOf = (c: CollectionRow, folder: NodeRow): CollectionInfo => ({
  id: c.id,
  submitToken: c.submit_token,
  folderId: folder.id,
  path: childPathOf(folder),
  limits: limitsOf(c),
});

/** Makes a records folder and what it holds private; visitors' open streams of what was public end. */
async function recordsPrivate(s: Services, trx: Tx, folderId: number, after: AfterCommit) {
  const changed = await makeSubtreePrivate(trx, folderId);
  if (changed.length > 0) after.push(() => Promise.all(changed.map((n) => publishVisibilityChanged(s, n, 'private'))));
}

/** The folder, when the caller may manage it: the table's answer through `ctx.nodes` (404 for one they may
 *  not see, 403 `viewer` for a team's viewer, 400 `not-owner` for another account's public one); a document
 *  or file is no folder (400). */
async function managedFolder(ctx: Pick<Ctx, 'nodes'>, folderId: number): Promise<NodeRow> {
  const folder = await ctx.nodes.open(folderId, 'manage');
  if (folder.type !== 'folder') throw fail('not-a-folder', 'Only a folder can be a collection.');
  return folder;
}

/** Marks a folder as a collection (again: answers the existing one). Its pages count against the
 *  plan's documents like any others; if they do not fit, nothing is made. */
export async function markCollection(
  ctx: Ctx,
  input: { folderId: number },
): Promise<{ folder: NodeRow; info: CollectionInfo }> {
  const opened = await managedFolder(ctx, input.folderId);
  const actorId = ctx.caller.actor?.accountId ?? opened.owner_id;
  const now = ctx.clock.now().toISOString();
  return inTransaction(ctx, async (trx, after) => {
    // As the transaction sees it (a concurrent change may have deleted it meanwhile).
    const folder = await nodeById(trx, opened.id);
    if (!folder) throw notFound('No such folder.');
    const existing = await collectionOfFolder(trx, folder.id);
    if (existing) return { folder, info: infoOf(existing, folder) };
    const id = `col_${randomBytes(8).readBigUInt64BE().toString(36).padStart(10, '0').slice(-10)}`;
    const token = randomBytes(18).toString('base64url');
    const make = async (type: 'site' | 'folder', name: string, html?: string) =>
      (await childNamed(trx, folder.owner_id, folder.id, name)) ??
      createIn(ctx, trx, actorId, { ownerId: folder.owner_id, parentId: folder.id, type, name, html }, now, after);
    const records = await make('folder', COLLECTION_FILES.records);
    if (records.type !== 'folder') throw fail('not-a-folder', `"${COLLECTION_FILES.records}" here is not a folder.`);
    await recordsPrivate(ctx, trx, records.id, after);
    await make('site', COLLECTION_FILES.form, submissionFormPage(id, token));
    const dashboard = await make('site', COLLECTION_FILES.dashboard, dashboardPage(id));
    if (dashboard.visibility !== 'private') await updateNode(trx, dashboard.id, { visibility: 'private' });
    const row: CollectionRow = {
      id,
      owner_id: folder.owner_id,
      folder_id: folder.id,
      records_folder_id: records.id,
      submit_token: token,
      next_key: 1,
      created_at: now,
      max_records: null,
      max_bytes: null,
      max_per_address_hour: null,
    };
    await insertCollection(trx, row);
    return { folder, info: infoOf(row, folder) };
  }).catch(nameConflict);
}

/** The collection of a folder the caller manages (null: the folder is none), with what its records use of its
 *  limits. */
export async function collectionOf(
  ctx: Ctx,
  input: { folderId: number },
): Promise<{ folder: NodeRow; info: (CollectionInfo & { usage: { records: number; bytes: number } }) | null }> {
  const folder = await ctx.nodes.open(input.folderId, 'manage');
  const { db } = ctx.database;
  const c = await collectionOfFolder(db, folder.id);
  const usage = c ? await collectionUsage(db, c, c.records_folder_id, heldSince(ctx)) : null;
  return { folder, info: c && usage ? { ...infoOf(c, folder), usage } : null };
}

/** The owner sets what anonymous submitters may store (each a whole number from 1 to its maximum). */
export async function setLimits(
  ctx: Ctx,
  input: { folderId: number } & CollectionLimits,
): Promise<{ folder: NodeRow; set: CollectionLimits }> {
  const { folder, info: c } = await collectionOf(ctx, input);
  if (!c) throw notFound('That folder is not a collection.');
  const check = (value: number, max: number, what: string) => {
    if (!Number.isSafeInteger(value) || value < 1 || value > max)
      throw fail('invalid', `${what} must be a whole number from 1 to ${max.toLocaleString('en')}.`);
    return value;
  };
  const row = {
    max_records: check(input.maxRecords, bounds.records.max, 'Records'),
    max_bytes: check(input.maxBytes, bounds.bytes.max, 'Bytes'),
    max_per_address_hour: check(input.maxPerAddressHour, bounds.perAddressHour.max, 'Submissions per address'),
  };
  await setCollectionLimits(ctx.database.db, c.id, row);
  const set = { maxRecords: row.max_records, maxBytes: row.max_bytes, maxPerAddressHour: row.max_per_address_hour };
  return { folder, set };
}

/** The folder stops being a collection; its pages and records stay as they are. */
export async function unmarkCollection(ctx: Ctx, input: { folderId: number }): Promise<NodeRow> {
  const { folder, info: c } = await collectionOf(ctx, input);
  if (!c) throw notFound('That folder is not a collection.');
  await deleteCollection(ctx.database.db, c.id);
  return folder;
}

// ------------------------------------------------------------------ records

/** What the records' use cases run with: the caller on the collection's host (a collection is reached on
 *  its owner's host only: another host answers 404). */
type RecordsCtx = Ctx;

/** A collection whose folder still exists, within the caller's reach (`ctx.nodes`: on its owner's host only). */
async function liveCollection(ctx: Pick<Ctx, 'nodes' | 'database'>, id: string) {
  const { db } = ctx.database;
  const c = /^col_[a-z0-9]{1,20}$/.test(id) ? await collectionById(db, id) : undefined;
  const folder = c ? await nodeById(db, c.folder_id) : undefined;
  if (!c || !folder || !ctx.nodes.reaches(folder)) throw notFound('No such collection.');
  return { c, folder };
}

/** The collection's owner (a person who manages its folder, as the table says: its account, or a team's owner
 *  or editor), or nobody: 401 signed out, 403 signed in as someone else. */
async function collectionOwner(ctx: Pick<Ctx, 'caller' | 'nodes'>, folder: NodeRow): Promise<Actor> {
  const actor = ctx.caller.actor;
  if (!actor) throw fail('login-required', 'Sign in as the collection’s owner.');
  if (!(await ctx.nodes.may(folder, 'manage'))) throw forbidden('Only the collection’s owner may do that.');
  return actor;
}

/** The edit token of one record: an HMAC of the instance secret, so nothing is stored and keys are never
 *  reused (they come from a counter), so a token never outlives its record's key. */
export function recordToken(s: Services, collectionId: string, key: string): string {
  return createHmac('sha256', s.secret).update(`collection-record:${collectionId}:${key}`).digest('base64url');
}

const sameSecret = (given: string | undefined, expected: string) => {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** A record as its file. Bodies are depth-checked when parsed (src/http/app.ts); should a value still be too
 *  deep to serialize, the answer is 400, not a stack overflow's 500. */
function recordBytes(data: Json): Buffer {
  try {
    return Buffer.from(`${JSON.stringify(data, null, 2)}\n`, 'utf8');
  } catch (e) {
    if (e instanceof RangeError) throw fail('invalid-body', TOO_DEEP);
    throw e;
  }
}

async function ownerPlan(s: Services, ownerId: number) {
  return effectivePlan(await loadPlanAccount(s, s.database.db, ownerId));
}

/** The records folder, made again if its owner deleted it. */
async function recordsFolder(s: Services, c: CollectionRow, folder: NodeRow): Promise<NodeRow> {
  const current = await nodeById(s.database.db, c.records_folder_id);
  if (current?.type === 'folder' && current.parent_id === folder.id) return current;
  const now = s.clock.now().toISOString();
  return inTransaction(s, async (trx, after) => {
    const made =
      (await childNamed(trx, c.owner_id, folder.id, COLLECTION_FILES.records)) ??
      (await createIn(
        s,
        trx,
        c.owner_id,
        { ownerId: c.owner_id, parentId: folder.id, type: 'folder', name: COLLECTION_FILES.records },
        now,
        after,
      ));
    if (made.type !== 'folder') throw fail('not-a-folder', `"${COLLECTION_FILES.records}" here is not a folder.`);
    await recordsPrivate(s, trx, made.id, after);
    await setRecordsFolder(trx, c.id, made.id);
    return made;
  }).catch(nameConflict);
}

export interface Submission {
  /** The submit token (X-Submit-Token header or `token` field). */
  token: string | undefined;
  /** Undefined when the body has none (refused after the token is checked). */
  data: Json | undefined;
  /** The submitter's address (counted per collection and hour). */
  address: string;
}

/** A new record from a public form: 201 with its id and its edit token. */
export async function submitRecord(
  s: RecordsCtx,
  id: string,
  sub: Submission,
): Promise<RecordView & { editToken: string }> {
  const { c, folder } = await liveCollection(s, id);
  if (!sameSecret(sub.token, c.submit_token)) throw fail('bad-submit-token', 'The submit token is not right.');
  if (sub.data === undefined) throw fail('missing-field', 'Send the record as JSON {"data": …}.');
  const bytes = recordBytes(sub.data);
  const bound = limitsOf(c);
  const hit = await s.submissionLimiter.hit(`${c.id}:${sub.address}`);
  if (hit.count > bound.maxPerAddressHour)
    throw tooMany(
      `This form takes at most ${bound.maxPerAddressHour} submissions an hour from one address. Try again later.`,
      hit.retryAfter,
    );
  const records = await recordsFolder(s, c, folder);
  const plan = await ownerPlan(s, c.owner_id);
  assertUploadSize(s, plan, bytes.length);
  return withRoom(s, c, records.id, { bytes: bytes.length, records: 1 }, bytes, plan, async (stored, heldId) => {
    // A key whose file name a synced file already took is skipped: the next one is tried. A name taken
    // between the look and the insert fails the transaction: it is tried again, once the key is seen taken.
    for (let attempt = 0; ; attempt++) {
      try {
        return await inTransaction(s, async (tx, after) => {
          let key: string | undefined;
          for (let tries = 0; tries < 20 && key === undefined; tries++) {
            const next = String(await takeRecordKey(tx, c.id));
            if (!(await childNamed(tx, c.owner_id, records.id, `${next}.json`))) key = next;
          }
          if (key === undefined) throw fail('name-conflict', 'Could not find a free record name; try again.');
          const node = await insertUpload(
            s,
            {
              ownerId: c.owner_id,
              parentId: records.id,
              parentPath: childPathOf(records),
              name: `${key}.json`,
              stored,
              by: { accountId: null, writer: `collection:${c.id}` },
              ifTaken: 'refuse',
              record: { op: 'create', data: sub.data! },
            },
            { tx, after },
          );
          // The file counts its bytes now: the room held for it is given back in the same transaction.
          await settleHold(tx, heldId, null);
          return {
            id: key,
            data: sub.data!,
            modifiedAt: node.modified_at,
            size: node.size ?? stored.size,
            editToken: recordToken(s, c.id, key),
          };
        });
      } catch (e) {
        if (attempt >= 2 || !(e instanceof KilnError) || e.code !== 'name-conflict') throw e;
      }
    }
  });
}

/** Since when held room counts (limits.collection.replacedKeptMs). */
const heldSince = (s: Services) => new Date(s.clock.now().getTime() - limits.collection.replacedKeptMs).toISOString();

/** A submitter's write into a collection within its caps: in one transaction (the records folder's row locked,
 *  so concurrent writes take turns) what the collection uses is counted and the room held (413 when it does
 *  not fit); then the bytes are stored and `write` runs with them and the hold's id (it settles the hold in
 *  its own transaction). A write that fails once its bytes are stored leaves them counted, as held bytes. */
async function withRoom<T>(
  s: Services,
  c: CollectionRow,
  recordsId: number,
  room: { bytes: number; records: number },
  bytes: Buffer,
  plan: Awaited<ReturnType<typeof ownerPlan>>,
  write: (stored: StoredBytes, heldId: number) => Promise<T>,
): Promise<T> {
  const bound = limitsOf(c);
  const heldId = await inTransaction(s, async (tx) => {
    await s.database.lock.row(tx, 'nodes', recordsId);
    const since = heldSince(s);
    await forgetHeld(tx, c.id, since);
    const usage = await collectionUsage(tx, c, recordsId, since);
    if (usage.records + room.records > bound.maxRecords)
      throw tooLarge(`This collection is full: it holds its maximum of ${bound.maxRecords} records.`);
    if (usage.bytes + room.bytes > bound.maxBytes)
      throw tooLarge(`This collection is full: its records may use ${formatSize(bound.maxBytes)} in all.`);
    return hold(tx, { collection_id: c.id, at: s.clock.now().toISOString(), ...room });
  });
  let stored: StoredBytes | undefined;
  try {
    stored = await storeBytes(s, plan, bytes);
    return await write(stored, heldId);
  } catch (e) {
    // Bytes stored and not written stay in the blob store until the sweep: they stay counted until then.
    await settleHold(s.database.db, heldId, stored ? { bytes: stored.size, records: 0 } : null).catch(() => {});
    throw e;
  }
}

async function recordNode(s: Services, c: CollectionRow, key: string): Promise<NodeRow> {
  if (!RECORD_KEY.test(key)) throw notFound('No such record.');
  const node = await childNamed(s.database.db, c.owner_id, c.records_folder_id, `${key}.json`);
  if (node?.type !== 'upload') throw notFound('No such record.');
  return node;
}

/** A record file's JSON (a synced file that is not JSON, or nests past `limits.jsonDepth`, reads as its text). */
async function readRecord(s: Services, node: NodeRow): Promise<RecordView> {
  const bytes = node.blob_sha256 ? await s.blobs.get(node.blob_sha256) : null;
  const text = bytes?.toString('utf8') ?? '';
  let data: Json = text;
  // Too deep to send back as JSON (a file synced in, not posted): its text, like any file that is not JSON.
  if (!nestsDeeperThan(text)) {
    try {
      data = JSON.parse(text);
    } catch {
      // Not JSON: its text.
    }
  }
  return { id: node.name.replace(/\.json$/i, ''), data, modifiedAt: node.modified_at, size: node.size ?? 0 };
}

/** The owner's page of records, newest first. */
export async function listRecords(s: RecordsCtx, id: string, page: { limit: number; offset: number }) {
  const { c, folder } = await liveCollection(s, id);
  await collectionOwner(s, folder);
  const { rows, total } = await recordFiles(s.database.db, c.owner_id, c.records_folder_id, page.limit, page.offset);
  const records = await Promise.all(rows.map((n) => readRecord(s, n)));
  return { records, total, limit: page.limit, offset: page.offset };
}

/** Whether `editToken` is the edit token of this record. */
function holdsRecordToken(s: Services, collectionId: string, key: string, editToken: string | undefined) {
  return sameSecret(editToken, recordToken(s, collectionId, key));
}

/** Who may act on one record: the owner, or the holder of its edit token. */
async function mayTouch(s: RecordsCtx, c: CollectionRow, folder: NodeRow, key: string, editToken?: string) {
  if (holdsRecordToken(s, c.id, key, editToken)) return;
  await collectionOwner(s, folder);
}

export async function getRecord(s: RecordsCtx, id: string, key: string, editToken?: string): Promise<RecordView> {
  const { c, folder } = await liveCollection(s, id);
  await mayTouch(s, c, folder, key, editToken);
  return readRecord(s, await recordNode(s, c, key));
}

/** Replaces a record's data (If-Match: the record's etag, optional). The owner's change is bounded by its
 *  plan; a submitter's (its edit token) by the collection's byte cap and the rewrite limits. */
export async function putRecord(
  s: RecordsCtx,
  id: string,
  key: string,
  input: { data: Json | undefined; editToken?: string; ifMatch: IfMatch; address: string; sameOrigin: () => void },
): Promise<RecordView> {
  const submitter = holdsRecordToken(s, id, key, input.editToken);
  // The owner's change rides on a cookie: it must come from the host itself (`sameOrigin` refuses another). A
  // valid edit token is its own credential (a wrong one falls back to the owner's cookie, with that check).
  if (!submitter) input.sameOrigin();
  const { c, folder } = await liveCollection(s, id);
  const actor = submitter ? null : await collectionOwner(s, folder);
  if (input.data === undefined) throw badRequest('Send the record as JSON {"data": …}.', 'missing-field');
  const node = await recordNode(s, c, key);
  const plan = await ownerPlan(s, c.owner_id);
  const bytes = recordBytes(input.data);
  const by = {
    kind: 'upload-edit' as const,
    accountId: submitter ? null : (actor?.accountId ?? null),
    writer: submitter ? `collection:${c.id}` : (actor?.writer ?? `collection:${c.id}`),
  };
  const record = { op: 'update' as const, data: input.data };
  const view = (saved: NodeRow): RecordView => ({
    id: key,
    data: input.data!,
    modifiedAt: saved.modified_at,
    size: saved.size ?? 0,
  });
  if (!submitter) {
    const { node: saved } = await replaceUpload(s, { node, plan, bytes, by, ifMatch: input.ifMatch, record });
    return view(saved);
  }
  await assertRewriteAllowed(s, c, key, input.address);
  // Nothing to store (the same bytes), or a stale If-Match (412): answered as any change, before room is taken.
  if (checksum(bytes) === node.checksum || !ifMatchHolds(input.ifMatch, node.checksum)) {
    const { node: saved } = await replaceUpload(s, { node, plan, bytes, by, ifMatch: input.ifMatch, record });
    return view(saved);
  }
  assertUploadSize(s, plan, bytes.length);
  // The new bytes take room while the old stay counted: once written, the file counts the new and the hold
  // the old (replaced, not yet swept), in the same transaction as the file's UPDATE.
  const saved = await withRoom(
    s,
    c,
    c.records_folder_id,
    { bytes: bytes.length, records: 0 },
    bytes,
    plan,
    (stored, heldId) =>
      inTransaction(s, async (tx, after) => {
        await s.database.lock.row(tx, 'nodes', node.id);
        const current = await nodeById(tx, node.id);
        if (current?.type !== 'upload' || current.trashed_at !== null) throw notFound('No such record.');
        const done = await replaceUpload(
          s,
          { node: current, plan, bytes: stored, by, ifMatch: input.ifMatch, record },
          { tx, after },
        );
        await settleHold(tx, heldId, done.changed ? { bytes: current.size ?? 0, records: 0 } : null);
        return done.node;
      }),
  );
  return view(saved);
}

/** 429 past a submitter's changes an hour: per collection and address, then per record (its token). */
async function assertRewriteAllowed(s: Services, c: CollectionRow, key: string, address: string) {
  const { perRecordHour, perAddressHour } = limits.collection.rewrites;
  const byAddress = await s.rewriteLimiters.perAddress.hit(`${c.id}:${address}`);
  if (byAddress.count > perAddressHour)
    throw tooMany(
      `This collection takes at most ${perAddressHour} changes to records an hour from one address. Try again later.`,
      byAddress.retryAfter,
    );
  const byRecord = await s.rewriteLimiters.perRecord.hit(`${c.id}:${key}`);
  if (byRecord.count > perRecordHour)
    throw tooMany(`A record takes at most ${perRecordHour} changes an hour. Try again later.`, byRecord.retryAfter);
}

/** Deletes a record (into the owner's trash, like any file). */
export async function deleteRecord(s: RecordsCtx, id: string, key: string): Promise<void> {
  const { c, folder } = await liveCollection(s, id);
  await collectionOwner(s, folder);
  const node = await recordNode(s, c, key);
  await deleteNode(s, { nodeId: node.id });
}

/** The owner's live view of a collection's records: `collection-record` events on the stream `open` gives (the
 *  HTTP edge: it takes the address's stream slot and hands over the connection), from `lastEventId` on. It ends
 *  with the owner's session, and a team member's role. */
export async function watchRecords(
  s: RecordsCtx,
  input: { id: string; lastEventId: number | null; open: () => SseStream },
): Promise<void> {
  const { c, folder } = await liveCollection(s, input.id);
  const owner = await collectionOwner(s, folder);
  const records = await nodeById(s.database.db, c.records_folder_id);
  const held = owner.writer.startsWith('session:') ? [owner.writer] : [];
  if (await s.nodes.roleIn(c.owner_id)) held.push(grants.member(c.owner_id, owner.accountId));
  await s.hub.attach(channels.account(c.owner_id), input.open(), {
    view: recordsView(records ? childPathOf(records) : '\0', () => s.clock.now()),
    lastEventId: input.lastEventId,
    grants: held,
  });
}
