// First stage of every `kiln` start (and of `npm start`'s build): says which Node is needed and exits 1
// on an older one. It imports nothing, so it runs on any Node that loads ES modules (18, 20 …), before
// anything that a newer Node provides (better-sqlite3 13 needs Node-API 10: Node 22.14 and later).
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 14)) {
  console.error(`Kiln needs Node.js 22.14 or later (24 recommended); this is Node.js ${process.versions.node}.`);
  process.exit(1);
}
