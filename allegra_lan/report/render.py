"""A Site as files: Jinja2 templates (package data in templates/) with autoescape always on.

Every name on a page (players, tables, files, the title) is anyone's text, so
the environment escapes everything it prints; no template marks anything safe.
Undefined names are errors, so a template that refers to a field the model
lacks fails in the tests rather than printing nothing. Rendering is
deterministic: the same Site gives the same bytes (no date of making), so a
site can be rebuilt and compared.
"""

from __future__ import annotations

from importlib import resources

from jinja2 import Environment, PackageLoader, StrictUndefined

from allegra_lan.report.model import Site

INDEX = "index.html"
STYLE = "style.css"


def environment() -> Environment:
    return Environment(loader=PackageLoader("allegra_lan.report", "templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=False, keep_trailing_newline=True)


def render_site(site: Site) -> dict[str, bytes]:
    """Every file of the site by its name inside the site folder: index, stylesheet, game pages."""
    env = environment()
    files = {INDEX: env.get_template("index.html.j2").render(site=site).encode("utf-8"),
             STYLE: resources.files("allegra_lan.report").joinpath("templates", STYLE).read_bytes()}
    game = env.get_template("game.html.j2")
    for g in site.games:
        files[g.page] = game.render(site=site, game=g).encode("utf-8")
    return files


__all__ = ["INDEX", "STYLE", "environment", "render_site"]
