#!/usr/bin/env bash
# Runs actionlint (pinned) over every workflow, the example caller, and every action
# metadata file. actionlint checks an action.yml only through a workflow that uses it as a
# local action, so a temporary workflow that uses each one is written, linted and removed.
set -euo pipefail
cd "$(dirname "$0")/.."
ACTIONLINT="${ACTIONLINT:-github.com/rhysd/actionlint/cmd/actionlint@v1.7.12}"

probe=.github/workflows/zz-actionlint-probe.yml
trap 'rm -f "$probe"' EXIT
{
  echo "# Written by scripts/actionlint.sh for the length of one lint; never committed."
  echo "name: actionlint-probe"
  echo "on: workflow_dispatch"
  echo "permissions: {}"
  echo "jobs:"
  echo "  probe:"
  echo "    runs-on: ubuntu-latest"
  echo "    timeout-minutes: 5"
  echo "    steps:"
  echo "      - uses: ./"
  echo "        with:"
  echo "          verb: implement"
  for dir in actions/*/; do
    dir="${dir%/}"
    echo "      - uses: ./$dir"
  done
} > "$probe"
go run "$ACTIONLINT" -no-color -shellcheck= -pyflakes= .github/workflows/*.yml docs/examples/*.yml
