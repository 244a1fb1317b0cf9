// The developer dashboard on the main app. Bodies may be JSON or form-encoded.
//
//   GET  /_/dashboard                       the page: the signed-in account's tree
//   GET  /_/dashboard/nodes                 JSON {msg, msgType, nodes, html}
//   POST /_/dashboard/nodes                 create {type: 'site'|'folder', name, parentId?=0, html?}
//                                           (a name with slashes, e.g. `a/b/app.html`, creates the folders too)
//   GET  /_/dashboard/names?name=&parentId=&ownerId=  what that create would answer now, nothing written
//   POST /_/dashboard/nodes/:id/rename      {name}
//   POST /_/dashboard/nodes/:id/move        {parentId (0 = top level), name?}
//   POST /_/dashboard/nodes/:id/delete      {cascade?: true|'1'} — a non-empty folder without it: 400
//   POST /_/dashboard/nodes/:id/visibility  {visibility: 'public'|'private'}
//   POST /_/dashboard/nodes/:id/app         {enableSignups: true|false} — a document becomes a multi-tenant app
//   POST /_/dashboard/nodes/:id/duplicate   a document's copy beside it (`name-copy.html`)
//   GET  /_/dashboard/nodes/:id/download    the stored bytes as an attachment (documents and uploads)
//   GET  /_/dashboard/nodes/:id/delete      confirmation page for deleting a non-empty folder (no script)
//   POST /_/dashboard/nodes/:id/collection  {collection: true|false} — a folder takes anonymous submissions
//   GET  /_/dashboard/nodes/:id/collection  a collection's addresses and limits (page, or JSON {collection})
//   POST /_/dashboard/nodes/:id/collection/limits  {maxRecords, maxMegabytes, maxPerAddressHour}
//   GET  /_/dashboard/nodes/:id/signups     an app's sign-ups (page, or JSON {app, users})
//   POST /_/dashboard/nodes/:id/signups/:user/disable  {disabled: true|false}
//   GET  /_/dashboard?new=<name>            the page with the create form filled in (e.g. index.html)
//   GET  /_/dashboard?team=<name>           a team's tree (its owners and editors)
//   GET  /_/dashboard/trash[?team=]         the trash: deletions restorable for 30 days (JSON {trash})
//   POST /_/dashboard/trash/:id/restore     back where it was (409 when its name is taken there now)
//   POST /_/dashboard/trash/:id/purge       gone for good
//   POST /_/dashboard/trash/empty           {ownerId?}: every deletion gone for good
//   GET  /_/activity[?team=&limit=]         the tree's recent changes (JSON {activity})
//
// AJAX answers: JSON {msg, msgType, html, node?} where `html` is the pre-rendered node list (errors:
// {msg, msgType:'error', code}). Browser form posts: 302 back to /_/dashboard with msg and msgType.
// Access: the use cases decide, over the request's ctx (src/nodes/): a node through `ctx.nodes.open(id,
// 'manage')` (the access table, src/access/table.ts, team roles included), a tree through treeOwner
// (src/nodes/manage.ts). The routes only gate the order a browser relies on (shared.ts).
import type { RoutePlugin } from '../plugin.ts';
import tree from './tree.ts';
import nodes from './nodes.ts';
import collections from './collections.ts';
import signups from './signups.ts';
import trash from './trash.ts';
import activity from './activity.ts';

const groups: RoutePlugin[] = [tree, nodes, collections, signups, trash, activity];

/** The groups register on this plugin's own instance, not as child plugins: one scope, as before the split. */
const plugin: RoutePlugin = async (app, opts) => {
  for (const group of groups) await group(app, opts);
};

export default plugin;
