// roadmap's test strength (internal/strength): the load hook hook.cjs
// registers (module.register) when the mutated file is an ES module. It
// serves the mutant of that one file, in memory, under its own URL.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';

let state;

export function initialize(data) {
  state = data;
}

export async function load(url, context, nextLoad) {
  const res = await nextLoad(url, context);
  if (url !== state.url || res.format !== 'module' || res.source == null) {
    return res;
  }
  const orig = Buffer.from(res.source);
  if (createHash('sha256').update(orig).digest('hex') !== state.sum) {
    throw new Error('roadmap test strength: ' + state.file + ' is not the file roadmap mutated (it changed during the run)');
  }
  writeFileSync(state.seen, '');
  const repl = Buffer.from(state.repl, 'base64');
  const source = Buffer.concat([orig.subarray(0, state.start), repl, orig.subarray(state.end)]);
  return { format: 'module', source, shortCircuit: true };
}
