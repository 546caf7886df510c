#!/usr/bin/env bash
# Runs in an `if: always()` step right after roadmap's stage, implement or checks step in
# roadmap's reusable workflows (docs/isolation.md, "After roadmap exits"). Code the model
# wrote ran in the work tree. Every step after this one (actions/checkout's cleanup, which
# runs `git submodule foreach --recursive` in each checkout; the project's setup action's
# post steps, such as actions/cache saving a folder of the tree; the trace upload) runs as
# the job's user, next to the job's token. So none of them may meet a file the model could
# have written:
#
# 1. every .git below the work tree's top (a repository made in an uninitialised submodule's
#    folder, in .roadmap-run, anywhere) is listed, then removed; roadmap's boundary removed
#    those it saw when it closed, so one found here means roadmap did not close (it was
#    killed) or the tree was too large to search;
# 2. the work tree is emptied but for .git (the runner's: the boundary never gave it away)
#    and .roadmap-run (roadmap's own: never given either): nothing the model left can be
#    cached, uploaded or run by a later step. Everything roadmap keeps is pushed or in
#    RUNNER_TEMP already.
#
# If roadmap was killed before it handed the tree back, the files are the boundary's uid's;
# the runner's passwordless sudo (hosted runners) removes them then. Nothing here runs git,
# follows a symlink or prints a name unquoted (a file name is the model's: it could hold a
# newline and a workflow command).
#
# Run from the workspace root. Exits 0 unless something could not be removed.
set -uo pipefail

run=.roadmap-run
remove() {
	rm -rf -- "$@" 2>/dev/null && return 0
	if [ "$(id -u)" != 0 ] && sudo -n true 2>/dev/null; then
		sudo -n rm -rf -- "$@"
		return
	fi
	return 1
}

rc=0
found=0
while IFS= read -r -d '' p; do
	found=$((found + 1))
	printf 'roadmap: after the agent: a repository below the work tree'\''s top: %q\n' "$p"
	remove "$p" || { printf '::error::roadmap: could not remove the repository %q below the work tree'\''s top\n' "$p"; rc=1; }
done < <(find . -mindepth 1 -path ./.git -prune -o -name .git -print0 -prune 2>/dev/null)
[ "$found" -eq 0 ] || echo "::warning title=roadmap: planted repository removed::$found repositories below the work tree's top were left after roadmap's step (roadmap removes them itself when it ends normally); removed with the rest of the work tree (docs/isolation.md)"

# Everything at the top but .git and roadmap's own folder.
while IFS= read -r -d '' p; do
	remove "$p" || { printf '::error::roadmap: could not remove %q from the work tree\n' "$p"; rc=1; }
done < <(find . -mindepth 1 -maxdepth 1 ! -name .git ! -name "$run" -print0)
echo "roadmap: after the agent: the work tree is empty but for .git and $run: no later step of this job reads what the model wrote"
exit "$rc"
