"""The packages are layered: each imports only the ones below it, at module level or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Bottom to top. measure and gallery sit side by side (neither imports the other); bot reads the gallery
# through its facade and measure's shadowing check; problem_codes gathers every package's codes.
BELOW = {
    "schema": set(),
    "curves": {"schema"},
    "assess": {"schema", "curves"},
    "measure": {"schema", "curves", "assess"},
    "gallery": {"schema", "curves", "assess"},
    "bot": {"schema", "curves", "assess", "gallery", "measure"},
    "problem_codes": {"schema", "curves", "assess", "measure", "gallery", "bot"},
}


def imports_of(package: str) -> dict[str, set[str]]:
    """Our packages each module of `package` imports, anywhere in the module: {other package: {module}}."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in BELOW and top != package:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_package_imports_only_the_layers_below_it():
    wrong = {
        f"{package} -> {other} ({', '.join(sorted(files))})"
        for package, allowed in BELOW.items()
        for other, files in imports_of(package).items()
        if other not in allowed
    }
    assert not wrong, sorted(wrong)


def test_bot_reads_the_gallery_only_through_its_facade():
    """bot imports `gallery` and the names of its `__all__`, never a module inside it."""
    init = ast.parse((ROOT / "gallery" / "__init__.py").read_text(encoding="utf-8"))
    facade = next(ast.literal_eval(n.value) for n in init.body
                  if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets))
    for path in sorted((ROOT / "bot").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gallery."):
                raise AssertionError(f"{path.name} imports {node.module}: use the gallery package's facade")
            if isinstance(node, ast.ImportFrom) and node.module == "gallery":
                inner = [a.name for a in node.names if a.name not in facade]
                assert not inner, f"{path.name} imports {inner} from gallery, outside its __all__ {facade}"
            if isinstance(node, ast.Import) and any(a.name.startswith("gallery.") for a in node.names):
                raise AssertionError(f"{path.name} imports a gallery module, not the facade")


def test_no_package_reads_another_packages_private_names():
    """`from other.module import _name` or `other_module._name` across packages: only public names cross."""
    wrong = []
    for package in BELOW:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            aliases = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    top = node.module.split(".")[0]
                    if top in BELOW and top != package:
                        wrong += [f"{path.name}: {node.module}.{a.name}" for a in node.names
                                  if a.name.startswith("_") and not a.name.startswith("__")]
                        aliases.update({a.asname or a.name: top for a in node.names})
            for node in ast.walk(tree):
                if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                        and node.value.id in aliases and node.attr.startswith("_")
                        and not node.attr.startswith("__")):
                    wrong.append(f"{path.name}: {node.value.id}.{node.attr}")
    assert not wrong, wrong
