// Test reporter: each failed test with its file and error (cause included), so that the end of a long run's log
// says what failed and why (the spec reporter's own summary is printed mid-log, before the other storage's pass).
import { inspect } from 'node:util';

export default async function* failures(source) {
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, line, details } = event.data;
    // A file's own failure repeats its tests' failures: only say it when it adds something (a hook, a crash).
    if (file?.endsWith(name) && details.error?.failureType === 'subtestsFailed') continue;
    const error = inspect(details.error, { depth: 4, breakLength: 120 })
      .split('\n')
      .filter((l) => !/\((node:internal|node:async_hooks)/.test(l))
      .slice(0, 40)
      .join('\n');
    yield `✖ ${file ?? '?'}:${line ?? '?'} ${name}\n${error}\n\n`;
  }
}
