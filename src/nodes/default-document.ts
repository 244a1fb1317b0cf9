// The HTML a new document starts with when its creator gives none.
import { escapeHtml } from '../ui/html.ts';

export function defaultDocument(name: string): Buffer {
  const title = escapeHtml(name.replace(/\.(html|htmlclay)$/i, ''));
  return Buffer.from(`<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
</head>
<body>
  <h1>${title}</h1>
  <p>A new Kiln document. Edit it, save it, and this page is what visitors see.</p>
</body>
</html>
`);
}
