"""The command line of a generator that writes one JSON vector file (make_deal_vectors.py,
make_handshake_vectors.py): write it, or with --check compare it byte for byte and write
nothing. One place, so that every such file is rendered, and checked, the same way."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable


def main(doc: str, out: Path, vectors: Callable[[], Any], argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file, write nothing")
    args = parser.parse_args(argv)
    text = json.dumps(vectors(), indent=1, ensure_ascii=True) + "\n"
    if args.check:
        if not out.is_file() or out.read_text(encoding="ascii") != text:
            print(f"{out} differs from what the package makes now", file=sys.stderr)
            return 1
        return 0
    out.write_text(text, encoding="ascii")
    return 0
