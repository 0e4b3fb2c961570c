"""Finds, before a build, what an app written for the process-based SDK does
that a sandboxed WebAssembly component cannot do, so the build fails with
the place and the reason instead of the component behaving differently.

It reads the app's own source (the module, or every module of a package
folder) with :mod:`ast`; bundled third-party packages are not read. What it
looks for: processes and threads (WASI has neither), and the SDK's names
and calls that belong to the stdio transport or to API 0.3/0.4 (the reasons
are the SDK's own, from ``octet_guest.unavailable``). It also finds the
0.1 names and call forms the SDK keeps as deprecated aliases
(:func:`deprecations`): the build prints their warnings itself, since
componentize-py does not show what the app prints while it runs.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

_NO_PROCESSES = (
    "a WebAssembly component cannot start or signal processes (WASI has no "
    "process API)"
)
_NO_THREADS = (
    "a WebAssembly component runs one thread (the Python interpreter in it is "
    "built without thread support); octet-wasm runs concurrent requests on "
    "separate instances instead (max_concurrent_requests)"
)

MODULES = {
    "subprocess": _NO_PROCESSES,
    "multiprocessing": _NO_PROCESSES,
    "pty": _NO_PROCESSES,
    "concurrent.futures.process": _NO_PROCESSES,
}
CALLS = {
    "os.fork": _NO_PROCESSES,
    "os.forkpty": _NO_PROCESSES,
    "os.system": _NO_PROCESSES,
    "os.popen": _NO_PROCESSES,
    "os.kill": _NO_PROCESSES,
    "os.killpg": _NO_PROCESSES,
    "os.posix_spawn": _NO_PROCESSES,
    "os.posix_spawnp": _NO_PROCESSES,
    "asyncio.create_subprocess_exec": _NO_PROCESSES,
    "asyncio.create_subprocess_shell": _NO_PROCESSES,
    "threading.Thread": _NO_THREADS,
    "threading.Timer": _NO_THREADS,
    "_thread.start_new_thread": _NO_THREADS,
    "concurrent.futures.ThreadPoolExecutor": _NO_THREADS,
    "concurrent.futures.ProcessPoolExecutor": _NO_PROCESSES,
}
PREFIXES = {"os.exec": _NO_PROCESSES, "os.spawn": _NO_PROCESSES}
SDK_PACKAGES = ("octet_extension", "octet_guest")


def _sdk_module(name: str):
    # The module alone: the package needs the component's bindings.
    path = Path(__file__).resolve().parent.parent / "octet_guest" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_octet_guest_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sdk_reasons() -> Tuple[Dict[str, str], Dict[str, str]]:
    module = _sdk_module("unavailable")
    return module.REASONS, module.MODULES


class _Finder(ast.NodeVisitor):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.names: Dict[str, str] = {}  # local name -> dotted origin
        self.extensions: set = set()  # names bound to Extension(...)
        self.found: List[Tuple[int, str, str]] = []
        self.reasons, self.sdk_modules = _sdk_reasons()
        self.renamed = _sdk_module("renamed")
        self.deprecated: List[Tuple[int, str]] = []  # (line, the name or form)

    def _deprecated_name(self, node: ast.AST, dotted: str) -> None:
        package, _, name = dotted.partition(".")
        if package in SDK_PACKAGES and name in self.renamed.NAMES:
            self.deprecated.append((getattr(node, "lineno", 0), f"octet_guest.{name}"))

    def report(self, node: ast.AST, what: str, reason: str) -> None:
        self.found.append((getattr(node, "lineno", 0), what, reason))

    def _module(self, node: ast.AST, module: str) -> None:
        for name, reason in MODULES.items():
            if module == name or module.startswith(name + "."):
                self.report(node, f"import {module}", reason)
        for package in SDK_PACKAGES:
            sub = module[len(package) + 1:] if module.startswith(package + ".") else None
            if sub in self.sdk_modules:
                self.report(node, f"import {module}", self.sdk_modules[sub])

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._module(node, alias.name)
            self.names[alias.asname or alias.name.split(".")[0]] = (
                alias.name if alias.asname else alias.name.split(".")[0]
            )

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        self._module(node, module)
        for alias in node.names:
            origin = f"{module}.{alias.name}"
            self._module(node, origin)
            if module in SDK_PACKAGES and alias.name in self.reasons:
                self.report(node, f"from {module} import {alias.name}",
                            self.reasons[alias.name])
            self._deprecated_name(node, origin)
            self.names[alias.asname or alias.name] = origin

    def _dotted(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Name):
            return self.names.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self._dotted(node.value)
            return None if base is None else f"{base}.{node.attr}"
        return None

    def visit_Assign(self, node: ast.Assign) -> None:
        if isinstance(node.value, ast.Call):
            callee = self._dotted(node.value.func) or ""
            if callee.rsplit(".", 1)[-1] == "Extension":
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.extensions.add(target.id)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotted = self._dotted(node) or ""
        for package in SDK_PACKAGES:
            if dotted.startswith(package + ".") and dotted.split(".")[1] in self.reasons:
                self.report(node, dotted, self.reasons[dotted.split(".")[1]])
        self._deprecated_name(node, dotted)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        dotted = self._dotted(node.func) or ""
        reason = CALLS.get(dotted)
        if reason is None:
            reason = next((r for p, r in PREFIXES.items() if dotted.startswith(p)), None)
        if reason is not None:
            self.report(node, f"{dotted}()", reason)
        package, _, name = dotted.partition(".")
        if package in SDK_PACKAGES and name == "Extension" and node.args:
            self.deprecated.append((node.lineno, "Extension(name)"))
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id in self.extensions:
            method = func.attr
            if method in ("tool", "command") and node.args:
                self.deprecated.append((node.lineno, f'@ext.{method}("name", ...)'))
            if method in ("request", "handle_message"):
                self.report(node, f"{func.value.id}.{method}()",
                            self.reasons[f"Extension.{method}()"])
            if method == "publish_artifact" and any(k.arg == "path" for k in node.keywords):
                self.report(node, f"{func.value.id}.publish_artifact(path=...)",
                            "the guest cannot see the host's scratch directory; pass the "
                            "bytes as data=")
        self.generic_visit(node)


def _sources(app: Path) -> Iterator[Path]:
    if app.is_dir():
        yield from sorted(app.rglob("*.py"))
    else:
        yield app


def check(app: Path) -> List[str]:
    """Every finding as ``path:line: what: reason``."""
    problems = []
    for path in _sources(app):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except SyntaxError as error:
            problems.append(f"{path}:{error.lineno}: {error.msg}")
            continue
        finder = _Finder(path)
        finder.visit(tree)
        for line, what, reason in sorted(finder.found):
            problems.append(f"{path}:{line}: {what} is not available in an octet-wasm "
                            f"component: {reason}")
    return problems


def deprecations(app: Path) -> List[str]:
    """A warning per deprecated name or form the app uses, at its first
    use, as ``path:line: warning: ...`` (the alias's own wording)."""
    first: Dict[str, Tuple[Path, int]] = {}
    renamed = _sdk_module("renamed")
    for path in _sources(app):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except SyntaxError:
            continue  # check() reports it
        finder = _Finder(path)
        finder.visit(tree)
        for line, old in sorted(finder.deprecated):
            first.setdefault(old, (path, line))
    return [f"{path}:{line}: warning: {renamed.warning(old)}"
            for old, (path, line) in sorted(first.items(), key=lambda item: item[1])]
