// oidc-provider's storage adapter over Kiln's database (one table, oauth_objects; queries in src/store/oauth.ts),
// so that every process of a Kiln serves every step of a flow. Objects whose id is a bearer secret (tokens, codes,
// the provider's session cookie) are kept under the SHA-256 of the id, and their payload without it: the database
// never holds a token that works. A grant the library ends (its refresh token revoked, a used code replayed) is
// marked revoked on Kiln's side too.
import type { Database } from '../store/db.ts';
import type { Clock } from '../clock.ts';
import { sha256 } from '../core/checksum.ts';
import {
  consumeOAuthObject,
  deleteOAuthObject,
  deleteOAuthObjectsOfGrant,
  oauthObject,
  oauthObjectByUid,
  revokeOAuthGrantRow,
  upsertOAuthObject,
} from '../store/oauth.ts';

/** The models whose id is the credential itself. */
const SECRET_IDS = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'ClientCredentials',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PushedAuthorizationRequest',
  'RegistrationAccessToken',
  'InitialAccessToken',
  'Session',
]);

type Payload = Record<string, unknown>;

export interface AdapterPorts {
  database: Database;
  clock: Clock;
}

/** The key a model's object is stored under. */
export function storedId(model: string, id: string): string {
  return SECRET_IDS.has(model) ? sha256(id) : id;
}

export class KilnAdapter {
  readonly model: string;
  readonly s: AdapterPorts;
  constructor(model: string, s: AdapterPorts) {
    this.model = model;
    this.s = s;
  }

  private get db() {
    return this.s.database.db;
  }

  async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
    const { consumed, ...rest } = payload;
    if (SECRET_IDS.has(this.model)) delete rest.jti;
    const expiresAt =
      typeof expiresIn === 'number' ? new Date(this.s.clock.now().getTime() + expiresIn * 1000).toISOString() : null;
    await upsertOAuthObject(this.db, {
      model: this.model,
      id: storedId(this.model, id),
      payload: JSON.stringify(rest),
      grant_id: typeof rest.grantId === 'string' ? rest.grantId : null,
      uid: typeof rest.uid === 'string' ? rest.uid : null,
      consumed_at: typeof consumed === 'number' ? consumed : null,
      expires_at: expiresAt,
    });
  }

  async find(id: string): Promise<Payload | undefined> {
    const row = await oauthObject(this.db, this.model, storedId(this.model, id));
    return row ? this.payloadOf(row, id) : undefined;
  }

  async findByUid(uid: string): Promise<Payload | undefined> {
    const row = await oauthObjectByUid(this.db, this.model, uid);
    // A session found by uid: its id (the cookie's value) is not stored; the library only reads what it finds so.
    return row ? this.payloadOf(row, SECRET_IDS.has(this.model) ? null : row.id) : undefined;
  }

  async findByUserCode(_userCode: string): Promise<Payload | undefined> {
    // No device flow.
    return undefined;
  }

  async consume(id: string): Promise<void> {
    await consumeOAuthObject(
      this.db,
      this.model,
      storedId(this.model, id),
      Math.floor(this.s.clock.now().getTime() / 1000),
    );
  }

  async destroy(id: string): Promise<void> {
    await deleteOAuthObject(this.db, this.model, storedId(this.model, id));
    if (this.model === 'Grant') {
      await deleteOAuthObjectsOfGrant(this.db, id);
      await revokeOAuthGrantRow(this.db, { grantId: id }, this.s.clock.now().toISOString());
    }
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await deleteOAuthObjectsOfGrant(this.db, grantId, this.model);
    // The library revokes every token of a grant this way (a token revoked by its client, a code or refresh token
    // replayed), always with its access tokens: the grant is of no more use, and the account page stops listing it.
    if (this.model === 'AccessToken') await revokeOAuthGrantRow(this.db, { grantId }, this.s.clock.now().toISOString());
  }

  private payloadOf(
    row: { payload: string; consumed_at: number | null; expires_at: string | null },
    id: string | null,
  ) {
    // Expired objects wait for the sweep; the library checks `exp` itself, but objects without one (a grant's
    // interaction) must not outlive their row's expiry.
    if (row.expires_at !== null && row.expires_at <= this.s.clock.now().toISOString()) return undefined;
    const payload = JSON.parse(row.payload) as Payload;
    if (SECRET_IDS.has(this.model) && id !== null) payload.jti = id;
    if (row.consumed_at !== null) payload.consumed = row.consumed_at;
    return payload;
  }
}

/** The adapter factory oidc-provider is configured with. */
export const adapterFor = (s: AdapterPorts) => (model: string) => new KilnAdapter(model, s);
