"""The documentation site's MkDocs hooks (``hooks:`` in mkdocs.yml at the repository root).

The guides are the Markdown files of ``docs/`` as GitHub shows them; the site takes them as they
are and adds three things in one place, so that no page is edited for the site:

* **The home page is README.md** (``index.md``, read from the file at every build: no copy).
* **Links that leave docs/** (``../python/examples/x.py``, ``../CHANGELOG.md``, README's
  ``docs/RULES.md``) are rewritten to where the site has that file: every file of the repository
  that a page links to and that is not a guide is published under ``source/`` at its path in the
  repository (Markdown as a page, anything else as the file itself, a folder as a list of its
  files), and its own links are followed the same way. A link that names no file of the
  repository is left as written, and strict mode fails on it.
* **The navigation follows README.md**: the guides in the order README's "Documentation" section
  links them (all of README when it has no such section), then the API reference in the order
  ``docs/api/index.md`` links its pages. A guide or an API page that its list does not link is a
  warning, which fails the strict build (``make docs``), naming the page and the list to add it to.

Pages the site leaves out of the guides (``exclude_docs`` in mkdocs.yml) are still published
under ``source/`` when a guide links to them.
"""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

log = logging.getLogger("mkdocs.plugins.yutenv")

#: Where the files a page links to outside the guides are published.
SOURCE = "source"
#: The site's home page: the repository's README, as a page of the site.
HOME = "README.md"

# A Markdown link or image target: [text](target) or [text](target "title"); an HTML src/href.
_LINK = re.compile(r"(\]\()(<[^>]*>|[^)\s]+)((?:\s+\"[^\"]*\")?\))")
_HTML = re.compile(r"""(\b(?:src|href)=")([^"]+)(")""")
# A reference definition: [name]: target "title".
_REFDEF = re.compile(r"^(\s{0,3}\[[^\]]+\]:\s*)(<[^>]*>|\S+)(.*)$")
_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")
_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"(`+[^`]*?`+)")


def _prose(line: str) -> list[str]:
    """The parts of a line outside its code spans."""
    return [part for part in _CODE_SPAN.split(line) if not part.startswith("`")]


def repo_root(config: MkDocsConfig) -> Path:
    """The repository: the folder of mkdocs.yml."""
    return Path(config.config_file_path).resolve().parent


def _docs_prefix(config: MkDocsConfig) -> str:
    return Path(config.docs_dir).resolve().relative_to(repo_root(config)).as_posix()


def outside_links(text: str) -> list[str]:
    """The relative link targets of a Markdown text, fragments dropped, outside fenced code."""
    out: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        prose = "".join(_prose(line))
        for m in [*_LINK.finditer(prose), *_HTML.finditer(prose), *_REFDEF.finditer(line)]:
            target = m.group(2).strip("<>").split("#", 1)[0]
            if target and not _SCHEME.match(target) and not target.startswith("/"):
                out.append(target)
    return out


class Site:
    """Which repository file each page of the site is, and where each linked file goes."""

    def __init__(self, root: Path, docs: str, guides: set[str]) -> None:
        self.root = root
        self.docs = docs
        self.guides = guides  # src URIs of the pages under docs_dir that the site keeps
        self.repo_of: dict[str, str] = {"index.md": HOME}  # site src URI -> repository path

    def site_path(self, repo_path: str) -> str:
        """The site src URI of a repository file (which may not be published yet)."""
        if repo_path == HOME:
            return "index.md"
        prefix = self.docs + "/"
        if repo_path.startswith(prefix) and repo_path[len(prefix) :] in self.guides:
            return repo_path[len(prefix) :]
        return f"{SOURCE}/{repo_path}"

    def resolve(self, page_repo_path: str, target: str) -> str | None:
        """The repository path a relative link of a page names, or None outside the repository."""
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(page_repo_path), target))
        if joined == ".." or joined.startswith("../"):
            return None
        return "" if joined == "." else joined

    def publish(self, repo_path: str) -> list[str]:
        """Publish a linked repository file or folder under source/ unless the site has it
        already (a folder as a list of its files, published with it); returns the src URIs
        newly published."""
        uri = self.site_path(repo_path)
        path = self.root / repo_path
        if not uri.startswith(SOURCE + "/") or not path.exists():
            return []
        if path.is_dir():
            uri = f"{uri.rstrip('/')}/index.md"
        if uri in self.repo_of:
            return []
        self.repo_of[uri] = repo_path
        new = [uri]
        if path.is_dir():
            for child in sorted(self.listing(repo_path)):
                new += self.publish(f"{repo_path}/{child.rstrip('/')}")
        return new

    def listing(self, repo_path: str) -> list[str]:
        """The names a folder's page lists (folders with a trailing slash)."""
        path = self.root / repo_path
        return sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir() if not p.name.startswith((".", "_")))

    def rewrite(self, text: str, src_uri: str) -> str:
        """The page's text with every relative link pointing at where the site has its file."""
        page_repo = self.repo_of.get(src_uri, f"{self.docs}/{src_uri}")
        base = page_repo + "/index.md" if (self.root / page_repo).is_dir() else page_repo

        def fix(m: re.Match[str]) -> str:
            raw = m.group(2)
            target, hash_, frag = raw.strip("<>").partition("#")
            if not target or _SCHEME.match(target) or target.startswith("/"):
                return m.group(0)
            repo_path = self.resolve(base, target)
            if repo_path is None or not (self.root / repo_path).exists():
                return m.group(0)  # strict mode reports it
            dest = self.site_path(repo_path)
            if (self.root / repo_path).is_dir() and dest.startswith(SOURCE + "/"):
                dest = f"{dest.rstrip('/')}/index.md"
            rel = posixpath.relpath(dest, posixpath.dirname(src_uri) or ".")
            return f"{m.group(1)}{rel}{hash_}{frag}{m.group(3)}"

        out: list[str] = []
        fenced = False
        for line in text.split("\n"):
            if _FENCE.match(line):
                fenced = not fenced
            elif not fenced:
                line = _REFDEF.sub(fix, line)
                line = "".join(
                    part if part.startswith("`") else _HTML.sub(fix, _LINK.sub(fix, part)) for part in _CODE_SPAN.split(line)
                )
            out.append(line)
        return "\n".join(out)


_site: Site | None = None


def _section_links(text: str, heading: str) -> list[str]:
    """The link targets of a '## heading' section of a Markdown text (all of it if absent)."""
    m = re.search(rf"^##\s+{re.escape(heading)}\s*$(.*?)(?=^##\s|\Z)", text, re.M | re.S)
    return outside_links(m.group(1) if m else text)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the home page and every linked file outside the guides; remember which is which."""
    global _site
    root = repo_root(config)
    guides = {f.src_uri for f in files.documentation_pages()}
    site = Site(root, _docs_prefix(config), guides)
    files.append(File.generated(config, "index.md", abs_src_path=str(root / HOME)))
    todo = ["index.md", *sorted(guides)]
    published: list[str] = []
    while todo:
        uri = todo.pop()
        repo_path = site.repo_of.get(uri, f"{site.docs}/{uri}")
        if not uri.endswith(".md") or (root / repo_path).is_dir():
            continue
        for target in outside_links((root / repo_path).read_text(encoding="utf-8")):
            linked = site.resolve(repo_path, target)
            if linked is not None:
                new = site.publish(linked)
                published += new
                todo += new
    for uri in published:
        repo_path = site.repo_of[uri]
        if (root / repo_path).is_dir():
            listing = "\n".join(f"- [{n}]({n})" for n in site.listing(repo_path))
            files.append(File.generated(config, uri, content=f"# {repo_path}/\n\n{listing}\n"))
        else:
            files.append(File.generated(config, uri, abs_src_path=str(root / repo_path)))
    _site = site
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Point every relative link of the page at where the site has its file."""
    assert _site is not None
    return _site.rewrite(markdown, page.file.src_uri)


def nav_order(readme: str, api_index: str, guides: list[str], api_pages: list[str], docs: str) -> tuple[list[Any], list[str]]:
    """The navigation (MkDocs ``nav``) and the pages no list links, each as a sentence.

    ``guides`` are the guides' src URIs, ``api_pages`` the API pages' (``api/...``); the guides
    come in the order README's "Documentation" section links them, the API pages in the order
    ``api/index.md`` does."""
    missing: list[str] = []
    order: list[str] = []
    for target in _section_links(readme, "Documentation"):
        uri = posixpath.normpath(target)
        if uri.startswith(docs + "/"):
            uri = uri[len(docs) + 1 :]
            if uri in guides and uri not in order:
                order.append(uri)
    for uri in guides:
        if uri not in order:
            missing.append(
                f"{docs}/{uri} is not linked from README.md's Documentation section (the site's navigation follows it): add it there"
            )
            order.append(uri)
    api: list[str] = []
    for target in outside_links(api_index):
        uri = posixpath.normpath(posixpath.join("api", target))
        if uri in api_pages and uri not in api and uri != "api/index.md":
            api.append(uri)
    for uri in api_pages:
        if uri not in api and uri != "api/index.md":
            missing.append(
                f"{docs}/{uri} is not linked from {docs}/api/index.md (the reference's navigation follows it): add it there"
            )
            api.append(uri)
    nav: list[Any] = [{"Home": "index.md"}, *order]
    if api_pages:
        nav.append({"API reference": ["api/index.md", *api]})
    return nav, missing


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Derive the navigation from README.md and docs/api/index.md (see the module docstring)."""
    root = repo_root(config)
    docs_dir = Path(config.docs_dir).resolve()
    excluded = config.exclude_docs
    pages = sorted(p.relative_to(docs_dir).as_posix() for p in docs_dir.rglob("*.md"))
    if excluded is not None:
        pages = [p for p in pages if not excluded.match_file(p)]
    guides = [p for p in pages if "/" not in p]
    api_pages = [p for p in pages if p.startswith("api/")]
    api_index = docs_dir / "api" / "index.md"
    nav, missing = nav_order(
        (root / HOME).read_text(encoding="utf-8"),
        api_index.read_text(encoding="utf-8") if api_index.is_file() else "",
        guides,
        api_pages,
        _docs_prefix(config),
    )
    for sentence in missing:
        log.warning(sentence)
    config.nav = nav
    return config


# The docstrings' Sphinx roles (:class:`~.batch.Batch`, :func:`evaluate`, ...) as the reference's
# cross-references: a griffe extension (mkdocs.yml: the python handler's `extensions`).
_ROLE = re.compile(r":(?:py:)?(class|func|meth|mod|data|attr|exc|obj):`(~?)([^`<>]+)`")


def _lookup(collection: Any, path: str) -> Any:
    try:
        return collection[path]
    except (KeyError, ValueError, AttributeError):
        return None


def resolve_role(obj: Any, target: str) -> Any:
    """The object a role's target names, seen from the docstring of obj (griffe), or None:
    an absolute path; a relative one (.x: from the module's package, as a relative import); a
    name in scope (the object, its class, its module, what the module imports)."""
    collection = obj.modules_collection
    if target.startswith("."):
        module = obj.module
        base = module.path if module.is_init_module else module.parent.path if module.parent else ""
        rest = target[1:]
        while rest.startswith("."):
            base, rest = base.rpartition(".")[0], rest[1:]
        return _lookup(collection, f"{base}.{rest}")
    found = _lookup(collection, target)
    if found is not None:
        return found
    first, _, rest = target.partition(".")
    scope = obj
    while scope is not None:
        if first in scope.members:
            return _lookup(collection, f"{scope.path}.{target}")
        scope = scope.parent
    return None


def _rendered(obj: Any) -> bool:
    """Whether the reference renders obj: it and every object above it is public."""
    while obj is not None:
        if obj.parent is not None and (obj.name.startswith("_") and not obj.name.startswith("__") or not obj.is_public):
            return False
        obj = obj.parent
    return True


def convert_roles(text: str, obj: Any) -> str:
    """A docstring with its Sphinx roles made cross-references ([`text`][path]) when they name a
    rendered object, and code when they name one the reference leaves out (private, or outside
    the package). A name that resolves nowhere stays a cross-reference, which fails strict mode."""

    def fix(m: re.Match[str]) -> str:
        role, tilde, target = m.groups()
        label = target.rsplit(".", 1)[-1] if tilde else target
        label += "()" if role in ("func", "meth") and not label.endswith(")") else ""
        found = resolve_role(obj, target)
        if found is None:
            if not target.lstrip(".").startswith("yutenv") and "." in target and not target.startswith("."):
                return f"`{label}`"  # another library's name: no inventory is loaded for it
            return f"[`{label}`][{target}]"
        try:
            final = found.final_target if found.is_alias else found
        except Exception:  # an alias to a module outside the package
            return f"`{label}`"
        if final.package.name != obj.package.name or not _rendered(final):
            return f"`{label}`"
        return f"[`{label}`][{final.path}]"

    return _ROLE.sub(fix, markdown_blocks(text))


def markdown_blocks(text: str) -> str:
    """A docstring's reST blocks as Markdown: doctest examples (>>> at the margin, through their
    output) fenced as Python sessions, and a paragraph's closing '::' (an indented literal block
    follows, which Markdown shows as code already) made ':'."""
    out: list[str] = []
    in_doctest = False
    for line in text.split("\n"):
        if line.startswith(">>>") and not in_doctest:
            out.append("```pycon")
            in_doctest = True
        elif in_doctest and not line.strip():
            out.append("```")
            in_doctest = False
        elif not in_doctest and line.endswith("::") and not line.lstrip().startswith("::"):
            line = line[:-1]
        out.append(line)
    if in_doctest:
        out.append("```")
    return "\n".join(out)


def comment_docstring(obj: Any) -> str:
    """The ``#:`` comment lines right above an attribute's assignment, as its docstring."""
    try:
        lines = obj.lines_collection[obj.filepath]
    except (KeyError, ValueError, AttributeError):
        return ""
    doc: list[str] = []
    i = (obj.lineno or 0) - 2
    while i >= 0 and lines[i].strip().startswith("#:"):
        doc.insert(0, lines[i].strip()[2:].strip())
        i -= 1
    return "\n".join(doc)


try:
    import griffe

    class SphinxRoles(griffe.Extension):
        """Reads the package's ``#:`` comments as the docstrings of the attributes they precede
        (Sphinx's convention, which griffe does not follow), and turns the Sphinx roles of every
        docstring into cross-references."""

        def on_package(self, *, pkg: Any, **kwargs: Any) -> None:
            todo = [pkg]
            seen: set[int] = set()
            while todo:
                obj = todo.pop()
                if id(obj) in seen or obj.is_alias:
                    continue
                seen.add(id(obj))
                if obj.docstring is None and obj.is_attribute:
                    comment = comment_docstring(obj)
                    if comment:
                        obj.docstring = griffe.Docstring(comment, parent=obj)
                if obj.docstring is not None:
                    obj.docstring.value = convert_roles(obj.docstring.value, obj)
                todo.extend(obj.members.values())
except ImportError:  # griffe comes with mkdocstrings (the docs extra)
    pass
