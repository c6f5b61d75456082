"""What the package import-plan tests (test_history_package.py, test_crossover_package.py) check, written once: a
sub-package's modules in layers, the bottom first, each importing only the layers below it (no circle) and never the
package itself, and none of them a hub."""
import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def imports(directory, dotted, name):
    """(the modules of the package at `directory` that its module `name` imports: from .x import ..., from . import x;
    whether it imports the package itself, named `dotted`: from ..<last> import ..., import dmabench.x.y)."""
    last = dotted.rsplit(".", 1)[-1]
    tree = ast.parse(open(os.path.join(directory, name + ".py"), encoding="utf-8").read())
    siblings, package = set(), False
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.level == 1:
            siblings |= {n.module} if n.module else {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            module = n.module or ""
            package |= (n.level == 2 and (module == last or any(a.name == last for a in n.names))) or \
                module.startswith(dotted)
        elif isinstance(n, ast.Import):
            package |= any(a.name.startswith(dotted) for a in n.names)
    return siblings, package


def modules(directory):
    """The package's modules, but its __init__ and __main__."""
    return sorted(f[:-3] for f in os.listdir(directory) if f.endswith(".py") and f not in ("__init__.py", "__main__.py"))


def layer_violations(directory, dotted, layers):
    """Each module of `layers` that imports a layer above (or beside) it or the package itself, with what it imports."""
    out = []
    for i, name in enumerate(layers):
        siblings, package = imports(directory, dotted, name)
        if not siblings <= set(layers[:i]) or package:
            out.append((name, sorted(siblings - set(layers[:i])), "imports the package itself" if package else ""))
    return out


def hubs(directory, max_lines):
    """(file, lines) of each module of the package longer than max_lines."""
    out = []
    for f in sorted(os.listdir(directory)):
        if f.endswith(".py"):
            n = len(open(os.path.join(directory, f), encoding="utf-8").read().split("\n"))
            if n > max_lines:
                out.append((f, n))
    return out
