// A stand-in AI engine for tests, run as AI_EDIT_COMMAND: `node ai-engine.mjs <dir> <mode>`. Reads the prompt on
// stdin and keeps it in <dir>/prompt.txt, its pid in <dir>/engine.pid, its environment in <dir>/env.json, then:
//   edit  — answers the element it was given with " — edited" added to its first text, fenced, in small pieces
//   slow  — answers a first piece, then waits until it is killed
//   fail  — says why on stderr and exits 3
import fs from 'node:fs';
import path from 'node:path';

const [dir, mode = 'edit'] = process.argv.slice(2);
fs.mkdirSync(dir, { recursive: true });
// Written whole or not at all (a reader that saw an empty file read pid 0: its own process group, always alive).
fs.writeFileSync(path.join(dir, `engine.pid.${process.pid}`), String(process.pid));
fs.renameSync(path.join(dir, `engine.pid.${process.pid}`), path.join(dir, 'engine.pid'));
fs.writeFileSync(path.join(dir, `env.json.${process.pid}`), JSON.stringify(process.env));
fs.renameSync(path.join(dir, `env.json.${process.pid}`), path.join(dir, 'env.json'));
let prompt = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => (prompt += d));
process.stdin.on('end', async () => {
  fs.writeFileSync(path.join(dir, 'prompt.txt'), prompt);
  if (mode === 'fail') {
    process.stderr.write('the model is out of coffee\n');
    process.exit(3);
  }
  if (mode === 'slow') {
    process.stdout.write('<p>');
    setInterval(() => {}, 1000);
    return;
  }
  const element =
    /element to rewrite[^\n]*:\n([\s\S]*?)(?:\n\n(?:The whole page|The file)|\n*$)/.exec(prompt)?.[1] ?? '<p></p>';
  const reply = `\`\`\`html\n${element.replace(/>([^<]+)</, '>$1 — edited<')}\n\`\`\``;
  for (let i = 0; i < reply.length; i += 12) {
    process.stdout.write(reply.slice(i, i + 12));
    await new Promise((r) => setTimeout(r, 15));
  }
});
