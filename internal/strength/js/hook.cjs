// roadmap's test strength (internal/strength): node loads this file before
// any other code of a command roadmap runs, because roadmap's NODE_OPTIONS
// names it (--require). Its state is the environment variable
// ROADMAP_STRENGTH_JS, a JSON object:
//   {"mode": "cover"}: the unmutated run, with node's own coverage
//     (NODE_V8_COVERAGE, set by roadmap); nothing is served;
//   {"mode": "mutant", "file": path from the top, "start", "end",
//    "repl": base64, "sum": sha256 of the file}: the bytes [start, end) of
//     file are replaced by repl when node loads it, in memory, under the
//     file's own name; the file on disk stays as it is. The control run is a
//     mutant that changes nothing.
// Before any test runs it takes ROADMAP_STRENGTH_JS and its own --require out
// of process.env, and gives both back to every child process started
// through child_process (node --test's and jest's workers, npm's scripts), so
// a child loads the same mutant. The top of the tree is this file's folder's
// parent (the folder roadmap made for the run). In each process that loads
// the mutated file it writes a file named by its pid into seen/ beside this
// one, from which roadmap knows the mutant was run.
'use strict';
(function roadmapStrength() {
  const KEY = 'ROADMAP_STRENGTH_JS';
  const { isMainThread } = require('node:worker_threads');
  const raw = process.env[KEY];
  // Worker threads (and the thread of module.register's hooks) are not
  // reached; the hooks thread gets its state through register's data.
  if (!isMainThread || raw === undefined) {
    return;
  }
  const fs = require('node:fs');
  const path = require('node:path');
  const crypto = require('node:crypto');
  const Module = require('node:module');
  const cp = require('node:child_process');
  const { pathToFileURL } = require('node:url');

  function die(msg) {
    process.stderr.write('roadmap test strength: ' + msg + '\n');
    process.exit(125);
  }
  let state;
  try {
    state = JSON.parse(raw);
  } catch (e) {
    die('bad ' + KEY + ': ' + e.message);
  }

  // Our --require, as children get it: the absolute path, quoted.
  const ours = '--require ' + JSON.stringify(__filename);
  let theirs = process.env.NODE_OPTIONS || '';
  if (theirs.startsWith(ours)) {
    theirs = theirs.slice(ours.length);
  } else if (theirs.startsWith('--require ')) {
    // roadmap's own, relative to the top: one word.
    theirs = theirs.slice('--require '.length).replace(/^\S+/, '');
  }
  theirs = theirs.trim();
  delete process.env[KEY];
  if (theirs === '') {
    delete process.env.NODE_OPTIONS;
  } else {
    process.env.NODE_OPTIONS = theirs;
  }

  // Children: the state and our --require in front of whatever NODE_OPTIONS
  // their environment has.
  function childOptions(opts) {
    if (opts === undefined || opts === '') return ours;
    return opts.startsWith(ours) ? opts : ours + ' ' + opts;
  }
  function childPairs(pairs) {
    let opts;
    const out = [];
    for (const p of pairs) {
      if (p.startsWith(KEY + '=')) continue;
      if (p.startsWith('NODE_OPTIONS=')) {
        opts = p.slice('NODE_OPTIONS='.length);
        continue;
      }
      out.push(p);
    }
    out.push(KEY + '=' + raw, 'NODE_OPTIONS=' + childOptions(opts));
    return out;
  }
  function childEnv(env) {
    const out = { ...(env || process.env) };
    out[KEY] = raw;
    out.NODE_OPTIONS = childOptions(out.NODE_OPTIONS);
    return out;
  }
  const spawn = cp.ChildProcess.prototype.spawn;
  cp.ChildProcess.prototype.spawn = function spawn_(options) {
    if (options && Array.isArray(options.envPairs)) {
      options.envPairs = childPairs(options.envPairs);
    }
    return spawn.call(this, options);
  };
  // The synchronous ones build their environment where nothing can reach
  // it: their options get it.
  for (const name of ['spawnSync', 'execSync', 'execFileSync']) {
    const orig = cp[name];
    cp[name] = function (...args) {
      let i = args.findIndex((a, k) => k > 0 && a !== null && typeof a === 'object' && !Array.isArray(a));
      if (i < 0) {
        i = Array.isArray(args[1]) ? 2 : 1;
        args.length = Math.max(args.length, i);
        args.splice(i, 1, {});
      }
      args[i] = { ...args[i], env: childEnv(args[i].env) };
      return orig.apply(this, args);
    };
  }
  Module.syncBuiltinESMExports();

  if (state.mode !== 'mutant') {
    return;
  }
  const top = path.dirname(__dirname);
  const target = path.resolve(top, state.file);
  const repl = Buffer.from(state.repl, 'base64');
  const seen = path.join(__dirname, 'seen', String(process.pid));
  function mutate(orig) {
    const sum = crypto.createHash('sha256').update(orig).digest('hex');
    if (sum !== state.sum) {
      die(state.file + ' is not the file roadmap mutated (it changed during the run)');
    }
    try {
      fs.writeFileSync(seen, '');
    } catch (e) {
      die('cannot say the mutant ran: ' + e.message);
    }
    return Buffer.concat([orig.subarray(0, state.start), repl, orig.subarray(state.end)]);
  }

  // CommonJS: the compiled source of the file is the mutant's.
  const compile = Module.prototype._compile;
  Module.prototype._compile = function _compile(content, filename, ...rest) {
    if (filename === target) {
      content = mutate(fs.readFileSync(target)).toString('utf8').replace(/^\uFEFF/, '');
    }
    return compile.call(this, content, filename, ...rest);
  };

  // ES modules: a load hook (hook.mjs, on its own thread) serves the mutant.
  if (typeof Module.register === 'function' && esm(target)) {
    Module.register(pathToFileURL(path.join(__dirname, 'hook.mjs')).href, {
      data: { url: pathToFileURL(target).href, start: state.start, end: state.end, repl: state.repl, sum: state.sum, seen, file: state.file },
    });
  }

  // esm reports whether node loads file as an ES module: .mjs, or .js in a
  // package whose package.json says "type": "module".
  function esm(file) {
    if (file.endsWith('.mjs')) return true;
    if (!file.endsWith('.js')) return false;
    for (let d = path.dirname(file); ; d = path.dirname(d)) {
      let pkg;
      try {
        pkg = JSON.parse(fs.readFileSync(path.join(d, 'package.json'), 'utf8'));
      } catch (e) {
        if (e.code !== 'ENOENT' && e.code !== 'ENOTDIR') return true;
      }
      if (pkg !== undefined) return pkg.type === 'module';
      if (path.dirname(d) === d) return false;
    }
  }
})();
