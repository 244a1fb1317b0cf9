// Every route plugin, in registration order. Each file is one family of routes.
import type { RoutePlugin } from './plugin.ts';
import auth from './auth.ts';
import session from './session.ts';
import health from './health.ts';
import dashboard from './dashboard/index.ts';
import documents from './documents.ts';
import save from './save.ts';
import uploads from './uploads.ts';
import meta from './meta.ts';
import dataLoss from './data-loss.ts';
import syncControl from './sync-control.ts';
import versions from './versions.ts';
import editor from './editor.ts';
import stylesheets from './stylesheets.ts';
import assets from './assets.ts';
import syncApi from './sync-api.ts';
import keysAndTeams from './keys-and-teams/index.ts';
import syncStream from './sync-stream.ts';
import liveSync from './live-sync.ts';
import bus from './bus.ts';
import dataApi from './data-api.ts';
import sharing from './sharing.ts';
import domains from './domains.ts';
import apps from './apps/index.ts';
import billing from './billing.ts';
import account from './account/index.ts';
import admin from './admin.ts';
import messages from './messages.ts';
import collections from './collections.ts';
import mcp from './mcp.ts';
import oauth from './oauth.ts';

/** `documents` registers the catch-all for document hosts, so it comes last. */
export const routes: RoutePlugin[] = [
  health,
  auth,
  session,
  dashboard,
  keysAndTeams,
  save,
  uploads,
  meta,
  dataLoss,
  versions,
  editor,
  stylesheets,
  assets,
  syncApi,
  syncStream,
  syncControl,
  liveSync,
  bus,
  dataApi,
  apps,
  sharing,
  domains,
  billing,
  account,
  admin,
  messages,
  collections,
  mcp,
  oauth,
  documents,
];
