"""The published page: a static HTML site of standings and games (`allegra replay report`).

Three steps, each its own module, so a later report (a tournament's) can reuse
the last two: `build` turns verified games and standings into a `Site`
(model.py: plain dataclasses, nothing of HTML), `render` turns a Site into
files with Jinja2 templates (autoescaped: names are anyone's text), and
`write` puts them into the site folder. Nothing here is imported by
`allegra --help`: the command's arguments are in args.py, argparse only.
"""
