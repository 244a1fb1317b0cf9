// Test reporter: one line per test file, "<seconds>\t<file>", from the runner's file-level completion.
export default async function* fileTimes(source) {
  for await (const event of source) {
    if (event.type !== 'test:complete' || event.data.nesting !== 0) continue;
    const { name, file, details } = event.data;
    if (!file?.endsWith(name)) continue;
    yield `${(details.duration_ms / 1000).toFixed(1)}\t${name}\t${details.passed ? 'pass' : 'FAIL'}\n`;
  }
}
