#!/usr/bin/env bash
# Installs the project's pinned npm tools (tools/npm/package.json, exact versions, with
# its lockfile) into tools/npm/node_modules: the OpenSpec CLI and GitHub's REST API
# description. Needs Node.js >= 20.19 and npm. A tree already installed from the same
# lockfile is left alone. Prints the folder of the installed binaries.
#
# Usage: scripts/npm-tools.sh        (prints e.g. /path/tools/npm/node_modules/.bin)
set -euo pipefail

cd "$(dirname "$0")/../tools/npm"

command -v node >/dev/null || { echo "npm-tools: node is not on PATH (Node.js >= 20.19 is needed)" >&2; exit 2; }
command -v npm >/dev/null || { echo "npm-tools: npm is not on PATH" >&2; exit 2; }
ver=$(node -p 'process.versions.node')
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' ||
	{ echo "npm-tools: Node.js $ver is too old; >= 20.19 is needed" >&2; exit 2; }

stamp=node_modules/.roadmap-lock
if [ -f "$stamp" ] && cmp -s package-lock.json "$stamp"; then
	echo "$PWD/node_modules/.bin"
	exit 0
fi
npm ci --ignore-scripts --no-audit --no-fund >&2
cp package-lock.json "$stamp"
echo "$PWD/node_modules/.bin"
