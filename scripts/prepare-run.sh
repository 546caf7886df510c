#!/usr/bin/env bash
# Prepares a job of roadmap's reusable workflows after its two checkouts: the caller's
# repository in the workspace, and roadmap itself, at the commit the caller pinned, in
# .roadmap-run/roadmap (docs/install.md, "A pin pins everything").
#
# 1. roadmap's checkout stops being a repository (its .git goes) and .roadmap-run/ is
#    excluded in the caller's checkout (.git/info/exclude), so nothing of roadmap is ever
#    staged, committed, listed for the planner or taken for a nested repository.
# 2. With SETUP set (the workflow's `setup` input): the composite action at that path of
#    the caller's repository is copied to .roadmap-run/setup, the one path a `uses:` can
#    name (a `uses:` takes no expression). SETUP_FROM, when set, is the commit to take it
#    from (the checks workflow takes it from the PR's base, never from the head it checks);
#    otherwise it is taken from the checkout.
#
# Run from the workspace root. Environment: SETUP, SETUP_FROM.
set -euo pipefail

run=.roadmap-run
[ -d "$run/roadmap" ] || { echo "::error::roadmap: $run/roadmap is missing: the pinned checkout did not run"; exit 1; }
rm -rf "$run/roadmap/.git"
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qxF "/$run/" "$exclude" 2>/dev/null || echo "/$run/" >> "$exclude"

setup="${SETUP:-}"
[ -n "$setup" ] || exit 0
setup="${setup#./}"
setup="${setup%/}"
# A plain relative path inside the repository: no absolute path, no '..', nothing a
# shell or a `uses:` reads differently.
if ! [[ "$setup" =~ ^[A-Za-z0-9._][A-Za-z0-9._/-]*$ ]] || [[ "/$setup/" == */../* ]] || [[ "/$setup/" == */./* ]] || [[ "/$setup/" == *//* ]]; then
  echo "::error::roadmap: setup '$SETUP' is not a relative path of a directory in the repository (letters, digits, '.', '_', '-', '/'; no '..')"
  exit 1
fi
if [[ "$setup/" == "$run/"* ]]; then
  echo "::error::roadmap: setup '$setup' is inside $run, roadmap's own: name an action of your repository"
  exit 1
fi
rm -rf "$run/setup"
if [ -n "${SETUP_FROM:-}" ]; then
  if ! git cat-file -e "$SETUP_FROM^{tree}" 2>/dev/null; then
    echo "::error::roadmap: setup: commit $SETUP_FROM is not in the checkout"
    exit 1
  fi
  if [ "$(git cat-file -t "$SETUP_FROM:$setup" 2>/dev/null)" != tree ]; then
    echo "::error::roadmap: setup '$setup' is no directory at $SETUP_FROM (the base)"
    exit 1
  fi
  mkdir -p "$run/setup-src"
  git archive "$SETUP_FROM" -- "$setup" | tar -x -C "$run/setup-src"
  src="$run/setup-src/$setup"
else
  src="$setup"
fi
# No symlink anywhere on the way: the copy is of the repository's own files.
p="$src"
while [ "$p" != . ] && [ "$p" != "$run/setup-src" ]; do
  if [ -L "$p" ]; then echo "::error::roadmap: setup '$setup': $p is a symlink"; exit 1; fi
  p=$(dirname "$p")
done
if [ -n "$(find "$src" -type l -print -quit)" ]; then
  echo "::error::roadmap: setup '$setup' holds a symlink: $(find "$src" -type l -print -quit)"
  exit 1
fi
if [ ! -f "$src/action.yml" ] && [ ! -f "$src/action.yaml" ]; then
  echo "::error::roadmap: setup '$setup' holds no action.yml: name the directory of a composite action (e.g. .github/actions/roadmap-setup)"
  exit 1
fi
cp -R "$src" "$run/setup"
rm -rf "$run/setup-src"
echo "roadmap: the project's setup is $setup${SETUP_FROM:+ at $SETUP_FROM}"
