#!/usr/bin/env bash
# Prints streamnb's version, read from where the package itself declares it
# (streamnb/__init__.py's __version__, which pyproject.toml reads too), so that an image tag
# never repeats it:
#
#   IMAGE_TAG=$(deploy/streamnb-version.sh) docker compose -f deploy/docker-compose.yml up -d --build
#   docker build -f deploy/Dockerfile -t "streamnb:$(deploy/streamnb-version.sh)" .
set -euo pipefail
init="$(dirname "$0")/../streamnb/__init__.py"
version=$(sed -n 's/^__version__ = "\([^"]*\)"$/\1/p' "$init")
[ -n "$version" ] || { echo "streamnb-version.sh: no __version__ line in $init" >&2; exit 1; }
echo "$version"
