"""roadmap's Python mutator (internal/strength): the mutation sites of one file.

Reads the file's bytes on stdin and writes one JSON object on stdout:
{"code": [lines holding a statement], "sites": [{"line", "op", "start",
"end", "repl"}]}, where a site replaces the bytes [start, end) of the file by
repl. It only parses: no code of the file runs. Run as `python3 -I -S
mutator.py`. A file that does not parse exits 2.
"""
import ast
import json
import re
import sys

# The operator token of each swap, as a regular expression on the text between
# the two operands, and what replaces it.
COMPARE = {
    ast.Eq: ("==", "!=", "negate-comparison"),
    ast.NotEq: ("!=", "==", "negate-comparison"),
    ast.Is: (r"\bis\b", "is not", "negate-comparison"),
    ast.IsNot: (r"\bis\s+not\b", "is", "negate-comparison"),
    ast.In: (r"\bin\b", "not in", "negate-comparison"),
    ast.NotIn: (r"\bnot\s+in\b", "in", "negate-comparison"),
    ast.Lt: ("<", "<=", "boundary"),
    ast.LtE: ("<=", "<", "boundary"),
    ast.Gt: (">", ">=", "boundary"),
    ast.GtE: (">=", ">", "boundary"),
}
ARITH = {
    ast.Add: (r"\+", "-"),
    ast.Sub: ("-", "+"),
    ast.Mult: (r"\*", "/"),
    ast.Div: ("/", "*"),
    ast.FloorDiv: ("//", "*"),
    ast.Mod: ("%", "*"),
}
BOOL = {ast.And: (r"\band\b", "or"), ast.Or: (r"\bor\b", "and")}


class Sites:
    def __init__(self, src):
        self.src = src
        self.starts = [0]
        for i, b in enumerate(src):
            if b == 0x0A:
                self.starts.append(i + 1)
        self.sites = []

    def off(self, line, col):
        return self.starts[line - 1] + col

    def add(self, line, op, start, end, repl):
        self.sites.append({"line": line, "op": op, "start": start, "end": end, "repl": repl})

    def between(self, left, right, pattern, repl, op):
        """The operator token between two operands on one line, swapped."""
        if left.end_lineno != right.lineno:
            return
        a = self.off(left.end_lineno, left.end_col_offset)
        b = self.off(right.lineno, right.col_offset)
        gap = self.src[a:b].decode("utf-8", "replace")
        m = re.search(pattern, gap)
        if m is None:
            return
        start = a + len(gap[: m.start()].encode("utf-8"))
        end = a + len(gap[: m.end()].encode("utf-8"))
        self.add(right.lineno, op, start, end, repl)

    def segment(self, node):
        if node.lineno != node.end_lineno:
            return None
        return self.off(node.lineno, node.col_offset), self.off(node.end_lineno, node.end_col_offset)

    def visit(self, node):
        if isinstance(node, (ast.If, ast.While)) and (seg := self.segment(node.test)):
            text = self.src[seg[0]:seg[1]].decode("utf-8", "replace")
            self.add(node.test.lineno, "negate-condition", seg[0], seg[1], "not (" + text + ")")
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARE:
            pattern, repl, op = COMPARE[type(node.ops[0])]
            self.between(node.left, node.comparators[0], pattern, repl, op)
        elif isinstance(node, ast.BinOp) and type(node.op) in ARITH:
            pattern, repl = ARITH[type(node.op)]
            self.between(node.left, node.right, pattern, repl, "arithmetic")
        elif isinstance(node, ast.BoolOp) and type(node.op) in BOOL:
            pattern, repl = BOOL[type(node.op)]
            self.between(node.values[0], node.values[1], pattern, repl, "negate-comparison")
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool) and (seg := self.segment(node)):
            self.add(node.lineno, "boolean", seg[0], seg[1], str(not node.value))
        elif isinstance(node, ast.Return) and node.value is not None and (seg := self.segment(node.value)):
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                self.add(node.value.lineno, "return-zero", seg[0], seg[1], "None")


def code_lines(tree):
    """The lines a statement starts on, but imports and docstrings."""
    lines = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue
        lines.add(node.lineno)
    return sorted(lines)


def main():
    src = sys.stdin.buffer.read()
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError) as e:
        print("does not parse: %s" % e, file=sys.stderr)
        sys.exit(2)
    s = Sites(src)
    for node in ast.walk(tree):
        s.visit(node)
    sites = []
    for site in s.sites:
        mutated = src[: site["start"]] + site["repl"].encode("utf-8") + src[site["end"]:]
        try:
            ast.parse(mutated)
        except (SyntaxError, ValueError):
            continue  # a mutant that does not parse measures nothing
        sites.append(site)
    json.dump({"code": code_lines(tree), "sites": sites}, sys.stdout)


if __name__ == "__main__":
    main()
