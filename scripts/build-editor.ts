// Bundles the code editor (CodeMirror 6) into dist/editor.js. Runs at install time (npm `prepare`);
// the server also builds it on first use when the file is missing.
import { buildEditor } from '../src/ui/assets.ts';

await buildEditor();
console.log('built dist/editor.js');
