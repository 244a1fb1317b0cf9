// Every way a request can be refused, in one place: the error codes Kiln answers with, each with its
// HTTP status and what it means (the README's "Errors" table lists the same codes; a test keeps the
// three in step). JSON answers are `{msg, msgType: 'error', code, ...extra}`; browsers get a page.
// `KilnError` checks that a code is answered with its own status, so a code always means one thing.

interface ErrorSpec {
  status: number;
  /** What it means (the README's table and the default message). */
  when: string;
  /** Other statuses a code may carry, each a documented exception. */
  also?: readonly number[];
}

export const ERRORS = {
  // 400: the request itself is wrong
  invalid: { status: 400, when: 'A field has a value Kiln cannot accept; the message names the field.' },
  'invalid-body': { status: 400, when: 'The body is not JSON, or not the JSON object the route expects.' },
  'invalid-content': { status: 400, when: 'Sync content is not a string, or an upload is not base64.' },
  'bot-suspected': { status: 400, when: 'A contact message that looks automated (behaviour data, honeypot field).' },
  'invalid-name': { status: 400, when: 'A file or folder name breaks the naming rules.' },
  'invalid-type': { status: 400, when: 'A node type other than site, folder or upload.' },
  'invalid-parent': { status: 400, when: 'The parent is not a folder of this account.' },
  'invalid-path': { status: 400, when: 'A URL or node path with `..`, `%25`, backslashes or malformed escapes.' },
  'invalid-version': { status: 400, when: '`expectedVersion` is not a string.' },
  'invalid-visibility': { status: 400, when: 'Visibility other than public or private.' },
  'invalid-role': { status: 400, when: 'A team role other than owner, editor or viewer.' },
  'invalid-domain': { status: 400, when: 'Not a domain name Kiln can serve.' },
  'invalid-return': { status: 400, when: 'A `return` target that is not a local path of this Kiln.' },
  'invalid-token': {
    status: 400,
    when: 'An email link (confirmation, reset, welcome) that is unknown, used or expired.',
  },
  'invalid-signature': { status: 401, when: 'A webhook whose signature does not match its body.' },
  'missing-field': { status: 400, when: 'A required form or JSON field is missing.' },
  'oauth-request-expired': {
    status: 400,
    when: 'The consent page of an agent’s connection (`/_/connect/…`) that is unknown, already answered or over an hour old: connect again from the agent.',
  },
  'missing-document-url': { status: 400, when: 'A save or upload without the Document-URL (or Page-URL) header.' },
  'bad-document-url': { status: 400, when: 'A Document-URL that is malformed or names another host.' },
  'missing-snapshot': { status: 400, when: 'A live-sync relay without the snapshot HTML.' },
  'missing-domain': { status: 400, when: 'A domain call without the domain.' },
  'malformed-multipart': { status: 400, when: 'A multipart upload that cannot be parsed.' },
  'move-into-self': { status: 400, when: 'Moving a folder into itself or below itself.' },
  'not-a-document': { status: 400, when: 'The operation needs an HTML document (apps, sharing).' },
  'not-a-file': { status: 400, when: 'Content asked of a folder.' },
  'not-a-folder': { status: 400, when: 'The operation needs a folder (collections).' },
  'is-instance': { status: 400, when: 'An app user’s instance cannot itself become an app.' },
  'too-deep': { status: 400, when: 'Folders nest at most 5 levels deep.' },
  'too-long': { status: 400, when: 'A field longer than its limit.' },
  'edit-match': {
    status: 400,
    when: 'MCP `edit_document`: a text or selector matches 0 or several times instead of once (`edit`, `matches`); nothing changed.',
  },
  'edit-invalid': {
    status: 400,
    when: 'MCP `edit_document` (and `read_document`’s selector): a selector that does not parse, an attribute name that is none, or content edits of an element that has none.',
  },
  'folder-not-empty': {
    status: 400,
    when: 'Deleting a folder that holds something, without `cascade` (`count` says how much).',
  },
  // 401: who is asking is not known
  'login-required': { status: 401, when: 'Sign in first (browsers are sent to the sign-in page).' },
  'bad-credentials': { status: 401, when: 'Wrong email or password.' },
  'missing-key': { status: 401, when: 'A sync request without an API key.' },
  'invalid-key': {
    status: 401,
    when: 'An API key that is malformed (sync keys start with `hcsk_`, agent keys with `hcak_`) or unknown.',
  },
  'revoked-key': {
    status: 401,
    when: 'An API key its owner revoked (or an agent key whose team its person left, or whose folder is gone).',
  },
  'expired-key': { status: 401, when: 'An API key past its expiry; generate a new one.' },
  'missing-signature': { status: 401, when: 'A webhook without its signature header.' },
  'invalid-oauth-token': {
    status: 401,
    when: 'An OAuth access token that is unknown, expired, revoked (the connected agent was revoked) or made for another resource; the answer’s `WWW-Authenticate` says where to get a new one.',
  },
  // 402, 403: known, but not allowed
  'payment-required': {
    status: 402,
    when: 'The plan does not include this (sync, apps, custom domains), or its subscription ended.',
  },
  'cross-origin': { status: 403, when: 'A write posted from another origin (another account’s host, another site).' },
  'not-owner': {
    status: 400,
    when: 'Only the owner of this document or folder may do that (the spec: a failed condition is 400).',
  },
  'not-developer': { status: 400, when: 'Only developer accounts may do that (sync keys, teams).' },
  'not-team-owner': { status: 403, when: 'Only a team’s owners may do that.' },
  viewer: {
    status: 403,
    when: 'Team viewers cannot change or sync a team’s files, by any door (owners and editors can).',
  },
  'read-only-key': { status: 403, when: 'A read-only key (an agent’s) asked to change something.' },
  'key-scope': {
    status: 403,
    when: 'An agent key used outside what it was made for: another account than its own, the top of a tree from a folder key, or a door that takes sync keys only (the sync stream, its control lane, the message bus).',
  },
  'mcp-off': {
    status: 403,
    when: 'Agents (MCP) are off on this Kiln, or not included in the plan; the operator turns them on on the admin page.',
  },
  'outside-scope': {
    status: 403,
    when: 'A key narrowed to one account or folder (an agent’s) asked to create, upload, move or rename something to a place outside it.',
  },
  'email-unconfirmed': {
    status: 403,
    when: 'An app user saves, or an account asks for an AI edit (`ai-edit/error`), before confirming their email.',
  },
  'ai-edit-app-user': {
    status: 403,
    when: 'An app user asks for an AI edit (`ai-edit/error`): the built-in engines are for developer accounts.',
  },
  'account-suspended': {
    status: 403,
    when: 'An administrator suspended the account: it cannot sign in, and its sync keys and connected agents stop.',
  },
  'signups-closed': { status: 403, when: 'This Kiln takes no new accounts now (or only with an invitation link).' },
  'service-worker-refused': { status: 403, when: 'Uploads are never served as service-worker scripts.' },
  'bad-submit-token': {
    status: 403,
    when: 'A collection submission without its collection’s submit token (or a record’s edit token).',
  },
  'quota-exceeded': {
    status: 403,
    also: [413],
    when: 'Over the plan’s allowance (documents, apps, domains). 413 on the sync API, whose clients stop creating on 413.',
  },
  // 404
  'not-found': { status: 404, when: 'No such page, document or file (private ones answer the same).' },
  'node-not-found': {
    status: 404,
    when: 'Sync API: no such file or folder in this account (it may have been deleted).',
  },
  // 409: the state forbids it
  'name-conflict': {
    status: 409,
    when: 'The name is already taken: by a sibling, by your own document in another folder, or by another writer a moment ago (sync clients read “already taken” in the message).',
  },
  'name-taken-elsewhere': {
    status: 409,
    when: 'Document names are unique across Kiln, and another account has this one.',
  },
  'node-changed': { status: 409, when: 'Sync API: the node changed since it was listed (`structureVersion`, `etag`).' },
  'account-changed': { status: 409, when: 'Sync API: X-Sync-Account-ID names another account than this base.' },
  'last-owner': { status: 409, when: 'A team needs at least one owner.' },
  retry: { status: 409, when: 'A domain changed while a webhook event was applied; send the event again.' },
  'username-taken': { status: 409, when: 'That username is taken.' },
  'email-taken': { status: 409, when: 'An account with that email exists.' },
  'domain-taken': { status: 409, when: 'The domain is connected to an account already.' },
  'already-set-up': { status: 409, when: 'First-run setup is done; sign in instead.' },
  'invalid-transition': { status: 409, when: 'A domain webhook event that does not follow from the domain’s state.' },
  // 412, 413, 415, 422, 428, 429
  'event-mismatch': { status: 409, when: 'A data-loss event that is no longer the pending one (resolved meanwhile).' },
  conflict: { status: 412, when: 'The document changed since you loaded it (`etag`, and `changedBy` when known).' },
  'too-large': {
    status: 413,
    when: 'The body, document, uploaded file (over the plan’s file size), or (data API) query, rules or result is larger than allowed.',
  },
  'unsupported-media-type': { status: 415, when: 'Send the document as text.' },
  'unsupported-type': {
    status: 415,
    when: 'HTML documents are not uploads: make them on the dashboard, with the sync API or /_/save.',
  },
  'not-restorable': {
    status: 422,
    when: 'The data-loss event’s data cannot be written back onto the current page (or no version holding it to revert to).',
  },
  'invalid-document': { status: 422, when: 'The document has no root `<html>` element.' },
  'data-shape': {
    status: 422,
    when: 'MCP `write_data`: the JSON does not fit the page’s `api` rules (another shape), or the page would not read it back exactly; nothing changed.',
  },
  'precondition-required': { status: 428, when: 'Team writes need If-Match (or `expectedVersion`).' },
  'account-identity-required': {
    status: 428,
    when: 'Team sync requests need X-Sync-Protocol: 2 and X-Sync-Account-ID.',
  },
  'rate-limited': { status: 429, when: 'Too many requests; `Retry-After` says when to try again.' },
  'ai-edit-budget': {
    status: 429,
    when: 'The account’s daily AI editing budget (requests, or KB sent to the engine) of its plan is used (`ai-edit/error`); it starts over at 00:00 UTC.',
  },
  // 5xx
  'mail-failed': {
    status: 500,
    when: 'A mail Kiln had to send could not be sent; the webhook is answered so that it comes again.',
  },
  busy: {
    status: 503,
    when: 'Too many sign-ups for one app at once, or a data-loss revert while the server is shutting down; try again.',
  },
  'payments-not-configured': {
    status: 503,
    when: 'Buying a plan needs STRIPE_SECRET_KEY and the plan’s price id set on this Kiln.',
  },
  'webhook-not-configured': { status: 503, when: 'A webhook arrives but its secret is not configured on this Kiln.' },
  'storage-unavailable': {
    status: 503,
    when: 'The database is unreachable; nothing changed; `Retry-After` says when to retry.',
  },
  'outcome-unknown': {
    status: 503,
    when: 'The database went away while a save was being committed and its outcome could not be read back: read the document before retrying.',
  },
  'bus-unavailable': {
    status: 503,
    when: 'Redis is unreachable: a live-only message (the `/_/bus`, an editor snapshot on the live lane), which nothing keeps for later, was not sent; `Retry-After` says when to try again.',
  },
  'no-worker': {
    status: 503,
    when: 'Every worker of `kiln serve --workers` is restarting and none came back within 5 s; nothing was read; `Retry-After` says when to retry.',
  },
  unavailable: { status: 451, when: 'The documents of a suspended account are unavailable.' },
  'insufficient-storage': { status: 507, when: 'The disk is full; nothing was saved.' },
  // The data API (`/_/api`, `?data=`) answers `{error, code}` in hyper-html-api's shape.
  'no-rules-tag': { status: 400, when: 'Data API: the document has no `api` rules tag and no `?data=` was given.' },
  'rules-missing': { status: 400, when: 'Data API: `?data=` is empty.' },
  'rules-version': { status: 400, when: 'Data API: the rules tag’s `data-rules-version` is not 1.' },
  'rules-syntax': { status: 400, when: 'Data API: the rules do not parse (or `data` was given twice).' },
  'rules-depth': { status: 400, when: 'Data API: rules nested deeper than 20.' },
  selector: { status: 400, when: 'Data API: a selector does not parse, is not supported, or its extraction failed.' },
  'too-expensive': { status: 400, when: 'Data API: the extraction ran out of its work or time budget.' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;

/** Codes whose names others depend on, each with the status they expect it on: the desktop sync engine
 *  (hyperclay-local, protocol 2: `reconcile/classify-error.js`) compares these `code`s to decide what to
 *  do (pause, rediscover, refresh the node, record a conflict, block uploads), and the spec names
 *  `conflict`, `precondition-required` and `account-identity-required`. Never rename one or change its
 *  status (the type system and a test hold them to the registry, and the README lists them). */
export const PINNED_CODES = {
  'invalid-key': 401,
  'payment-required': 402,
  viewer: 403,
  'not-found': 404,
  'node-not-found': 404,
  'account-changed': 409,
  'node-changed': 409,
  'name-conflict': 409,
  conflict: 412,
  'quota-exceeded': 413,
  'precondition-required': 428,
  'account-identity-required': 428,
} as const satisfies { [C in ErrorCode]?: StatusOf<C> };

/** The statuses a code may be answered with: its own, and its documented exceptions. */
export type StatusOf<C extends ErrorCode> =
  | (typeof ERRORS)[C]['status']
  | ((typeof ERRORS)[C] extends { also: readonly (infer A)[] } ? A : never);

/** The codes that may be answered with status `S`. */
export type CodeWithStatus<S extends number> = { [C in ErrorCode]: S extends StatusOf<C> ? C : never }[ErrorCode];

/** One error type for everything a request can be refused for. */
class KilnErrorClass extends Error {
  readonly status: number;
  readonly code?: ErrorCode;
  readonly extra?: Record<string, unknown>;
  constructor(
    status: number,
    msg: string,
    code?: ErrorCode,
    /** Extra fields merged into the JSON answer (e.g. `etag` on 412). */
    extra?: Record<string, unknown>,
  ) {
    super(msg);
    this.extra = extra;
    this.status = status;
    this.code = code;
    const spec: ErrorSpec | undefined = code ? ERRORS[code] : undefined;
    if (spec && spec.status !== status && !spec.also?.includes(status)) {
      throw new Error(`error code ${code} is answered with ${spec.status}, not ${status}`);
    }
  }
}

/** `new KilnError(status, msg, code?, extra?)`: with a code, the type system takes only a status
 *  registered for that code (the constructor checks it again at run time, for codes not written
 *  literally). Without a code, any status. */
interface KilnErrorConstructor {
  new <C extends ErrorCode>(status: StatusOf<C>, msg: string, code: C, extra?: Record<string, unknown>): KilnErrorClass;
  new (status: number, msg: string): KilnErrorClass;
  readonly prototype: KilnErrorClass;
}
export const KilnError = KilnErrorClass as KilnErrorConstructor;
export type KilnError = KilnErrorClass;

/** A refusal by code: its registered status, and its message (or the registered one). */
export const fail = (code: ErrorCode, msg?: string, extra?: Record<string, unknown>): KilnError =>
  new KilnErrorClass(ERRORS[code].status, msg ?? ERRORS[code].when, code, extra);

// Refusals by status; each takes only a code registered with that status.
export const badRequest = (msg: string, code?: CodeWithStatus<400>): KilnError => new KilnErrorClass(400, msg, code);
export const unauthorized = (msg = 'Sign in first.', code: CodeWithStatus<401> = 'login-required'): KilnError =>
  new KilnErrorClass(401, msg, code);
export const forbidden = (msg = 'You do not have access to this.', code?: CodeWithStatus<403>): KilnError =>
  new KilnErrorClass(403, msg, code);
export const notFound = (msg = 'Not found.'): KilnError => new KilnError(404, msg, 'not-found');
export const conflict = (msg: string, code?: CodeWithStatus<409>, extra?: Record<string, unknown>): KilnError =>
  new KilnErrorClass(409, msg, code, extra);
export const tooLarge = (msg: string): KilnError => new KilnError(413, msg, 'too-large');
export const tooMany = (msg: string, retryAfterSeconds: number): KilnError =>
  new KilnError(429, msg, 'rate-limited', { retryAfter: retryAfterSeconds });
