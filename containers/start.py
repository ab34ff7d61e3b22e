"""Entry point inside passk's image: `passk-python -s -B /opt/passk/start.py ROLE`. Its directory is
on sys.path, so the package box/ beside it is importable; the roles are in box.main."""

import sys

from box.main import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
