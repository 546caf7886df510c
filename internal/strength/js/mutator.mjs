// roadmap's JavaScript mutator (internal/strength): the mutation sites of one
// file, made by StrykerJS's own mutators (@stryker-mutator/instrumenter).
//
// Usage: node mutator.mjs INSTRUMENTER_DIR EXT < FILE
// Reads the file's bytes on stdin and writes one JSON object on stdout:
// {"version": the instrumenter's, "code": [lines holding a statement],
//  "sites": [{"line", "op", "start", "end", "repl"}]}, one site per line at
// most, where a site replaces the bytes [start, end) of the file by repl and
// op is the Stryker mutator's name. Lines count "\n" from 1. It only parses:
// no code of the file runs. roadmap runs it in an empty folder of its own
// that holds a package.json and an empty babel.config.json, so Babel loads
// no configuration of the project (a babel.config.js would run). A file that
// does not parse, or is not UTF-8, exits 2.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// The mutators in the order a line's one mutant is chosen: the first is the
// least likely to make an equivalent mutant (the order of the Go table:
// conditions, comparisons, arithmetic, then the rest). A mutator not listed
// here is not used.
const RANK = [
  'ConditionalExpression', 'EqualityOperator', 'LogicalOperator', 'ArithmeticOperator',
  'UpdateOperator', 'AssignmentOperator', 'UnaryOperator', 'BooleanLiteral', 'OptionalChaining',
  'MethodExpression', 'BlockStatement', 'ArrowFunction', 'ArrayDeclaration', 'ObjectLiteral',
  'StringLiteral', 'Regex',
];

// Stryker's JavaScript parser plugins (its parsers/js-parser.js).
const PLUGINS = [
  'doExpressions', 'objectRestSpread', 'classProperties', 'exportDefaultFrom', 'exportNamespaceFrom',
  'asyncGenerators', 'functionBind', 'functionSent', 'dynamicImport', 'numericSeparator', 'importMeta',
  'optionalCatchBinding', 'optionalChaining', 'classPrivateProperties', ['pipelineOperator', { proposal: 'minimal' }],
  'nullishCoalescingOperator', 'bigInt', 'throwExpressions', 'logicalAssignment', 'classPrivateMethods',
  'v8intrinsic', 'partialApplication', ['decorators', { decoratorsBeforeExport: false }], 'jsx',
];

function fail(code, msg) {
  process.stderr.write(msg + '\n');
  process.exit(code);
}

const [dir, ext] = process.argv.slice(2);
const pkgFile = path.join(dir, 'package.json');
const pkg = JSON.parse(readFileSync(pkgFile, 'utf8'));
if (pkg.name !== '@stryker-mutator/instrumenter') {
  fail(3, `${dir} holds ${pkg.name}, not @stryker-mutator/instrumenter`);
}
const entry = typeof pkg.exports?.['.'] === 'string' ? pkg.exports['.'] : pkg.main;
const { Instrumenter } = await import(pathToFileURL(path.join(dir, entry)).href);
const { parse } = createRequire(pkgFile)('@babel/parser');

const buf = readFileSync(0);
const text = buf.toString('utf8');
if (!Buffer.from(text, 'utf8').equals(buf)) {
  fail(2, 'does not parse: not UTF-8');
}
const parseOpts = { sourceType: 'module', plugins: PLUGINS };
let ast;
try {
  ast = parse(text, parseOpts);
} catch (e) {
  fail(2, 'does not parse: ' + e.message);
}

// Positions. Babel counts lines at \r\n, \r, \n, \u2028 and \u2029; roadmap
// (git, go) at \n. A position is kept as an index into text (UTF-16), and
// turned into a byte offset and a \n line for the output.
const babelLineStarts = [0];
for (const m of text.matchAll(/\r\n?|[\n\u2028\u2029]/g)) {
  babelLineStarts.push(m.index + m[0].length);
}
const newlines = [];
for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
  newlines.push(i);
}
function lineOf(index) {
  let lo = 0, hi = newlines.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (newlines[mid] < index) lo = mid + 1;
    else hi = mid;
  }
  return lo + 1;
}
const lineBytes = new Map();
function byteOf(index) {
  const line = lineOf(index);
  const start = line === 1 ? 0 : newlines[line - 2] + 1;
  if (!lineBytes.has(line)) {
    lineBytes.set(line, Buffer.byteLength(text.slice(0, start), 'utf8'));
  }
  return lineBytes.get(line) + Buffer.byteLength(text.slice(start, index), 'utf8');
}
// A Stryker location: 0-based Babel line, column in UTF-16 units.
function indexOf(pos) {
  return babelLineStarts[pos.line] + pos.column;
}

// What the AST says: the lines code starts on, and the calls to console.*,
// whose mutants would test a log line (the Go mutator leaves logs alone too).
const code = new Set();
const logs = [];
const NOT_CODE = new Set(['BlockStatement', 'EmptyStatement', 'ImportDeclaration', 'ExportAllDeclaration']);
const MEMBERS = new Set(['ClassMethod', 'ClassPrivateMethod', 'ClassProperty', 'ClassPrivateProperty', 'ObjectMethod']);
function isRequire(node) {
  while (node && node.type === 'MemberExpression') node = node.object;
  return node?.type === 'CallExpression' && node.callee.type === 'Identifier' && node.callee.name === 'require';
}
function isCode(node) {
  const t = node.type;
  if (NOT_CODE.has(t) || (t === 'ExportNamedDeclaration' && node.source)) return false;
  if (t === 'VariableDeclaration' && node.declarations.every((d) => isRequire(d.init))) return false;
  if (t === 'ExpressionStatement' && isRequire(node.expression)) return false;
  return MEMBERS.has(t) || t.endsWith('Statement') || t.endsWith('Declaration');
}
function walk(node) {
  if (Array.isArray(node)) {
    for (const n of node) walk(n);
    return;
  }
  if (!node || typeof node.type !== 'string') return;
  if (isCode(node)) code.add(lineOf(node.start));
  if (node.type === 'CallExpression' && node.callee.type === 'MemberExpression' &&
      node.callee.object.type === 'Identifier' && node.callee.object.name === 'console') {
    logs.push([node.start, node.end]);
  }
  for (const key of Object.keys(node)) {
    if (key !== 'loc' && key !== 'leadingComments' && key !== 'trailingComments' && key !== 'innerComments') {
      walk(node[key]);
    }
  }
}
walk(ast.program);

const logger = {
  isTraceEnabled: () => false, isDebugEnabled: () => false, isInfoEnabled: () => false,
  isWarnEnabled: () => false, isErrorEnabled: () => false, isFatalEnabled: () => false,
  trace() {}, debug() {}, info() {}, warn() {}, error() {}, fatal() {},
};
let result;
try {
  result = await new Instrumenter(logger).instrument(
    [{ name: path.join(process.cwd(), 'input' + ext), content: text, mutate: true }],
    { plugins: null, excludedMutations: [], ignorers: [], noHeader: true },
  );
} catch (e) {
  fail(2, 'does not parse: ' + e.message);
}

// Every mutant, by line, in the order of RANK, then of its place.
const byLine = new Map();
result.mutants.forEach((m, i) => {
  const rank = RANK.indexOf(m.mutatorName);
  if (m.status === 'Ignored' || rank < 0) return;
  const from = indexOf(m.location.start);
  const to = indexOf(m.location.end);
  if (!(from >= 0 && to >= from && to <= text.length)) return;
  if (logs.some(([a, b]) => a <= from && to <= b)) return;
  const line = lineOf(from);
  if (!byLine.has(line)) byLine.set(line, []);
  byLine.get(line).push({ rank, from, to, i, m });
});

// One site per line: the first whose mutated file still parses.
const sites = [];
for (const line of [...byLine.keys()].sort((a, b) => a - b)) {
  const list = byLine.get(line).sort((a, b) => a.rank - b.rank || a.from - b.from || a.i - b.i);
  for (const { from, to, m } of list) {
    const mutated = text.slice(0, from) + m.replacement + text.slice(to);
    try {
      parse(mutated, parseOpts);
    } catch {
      continue;
    }
    sites.push({ line, op: m.mutatorName, start: byteOf(from), end: byteOf(to), repl: m.replacement });
    break;
  }
}
process.stdout.write(JSON.stringify({ version: pkg.version, code: [...code].sort((a, b) => a - b), sites }));
