# roadmap's test strength (internal/strength): python3 imports this module at
# startup because roadmap put its folder first on PYTHONPATH for one command.
# It reads roadmap.json beside it:
#   {"mode": "cover", "files": [...], "out": path}: record which lines of the
#     files run, and append them to out as one JSON line at exit;
#   {"mode": "mutant", "file": path}: read the mutant of file from
#     m/mutant.py, remove it before any test runs, and import file's module
#     from the mutant's code; the source on disk stays the original.
# Paths are relative to the folder the command starts in (the tree's top).
import json
import os
import sys


def _roadmap_strength():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "roadmap.json")) as f:
        conf = json.load(f)
    # roadmap's runs leave no __pycache__ in the tree.
    sys.dont_write_bytecode = True
    # Children do not load it again (a second run would find no mutant).
    os.environ.pop("PYTHONPATH", None)
    if conf["mode"] == "cover":
        _cover(conf)
    else:
        _mutant(here, conf)


def _cover(conf):
    import atexit
    import threading

    files = {os.path.abspath(f): f for f in conf["files"]}
    out = os.path.abspath(conf["out"])
    ran = {}

    def lines(frame, event, arg):
        if event == "line":
            ran[files[frame.f_code.co_filename]].add(frame.f_lineno)
        return lines

    def calls(frame, event, arg):
        name = frame.f_code.co_filename
        if name in files:
            ran.setdefault(files[name], set())
            # The def line runs when the module is imported.
            ran[files[name]].add(frame.f_lineno)
            return lines
        return None

    def write():
        sys.settrace(None)
        with open(out, "a") as f:
            f.write(json.dumps({k: sorted(v) for k, v in ran.items()}) + "\n")

    sys.settrace(calls)
    threading.settrace(calls)
    atexit.register(write)


def _mutant(here, conf):
    import importlib.machinery

    path = os.path.join(here, "m", "mutant.py")
    with open(path, "rb") as f:
        src = f.read()
    try:
        os.remove(path)
    except OSError as e:
        sys.stderr.write("roadmap test strength: cannot remove the mutant before the tests run: %s\n" % e)
        os._exit(125)
    target = os.path.abspath(conf["file"])
    code = compile(src, target, "exec", dont_inherit=True)

    class Loader(importlib.machinery.SourceFileLoader):
        def get_code(self, fullname):
            return code

    class Finder:
        @staticmethod
        def find_spec(fullname, path=None, target_module=None):
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is None or spec.origin is None or os.path.abspath(spec.origin) != target:
                return None
            spec.loader = Loader(fullname, spec.origin)
            return spec

    sys.meta_path.insert(0, Finder)
    if os.path.abspath(sys.argv[0]) == target:
        sys.stderr.write("roadmap test strength: the mutated file is run as a script, which the mutant cannot reach\n")
        os._exit(125)


_roadmap_strength()
del _roadmap_strength
