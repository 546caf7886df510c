package eval

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/roadmap-dev/roadmap/internal/eval/realcase"
)

// realCaseSkip says whether the runners leave out the case in dir, and
// why. A hand-written case (no source.json) is never left out here. A
// real-world case (source.json) runs only when it has code and a model
// to run on: one with no module is metadata only, skipped; on the replay
// one with no recorded exchanges (fixtures/) is skipped; one with a module
// and no repo/ is an error naming `roadmap-dev eval fetch`, which lays repo/
// out (docs/eval.md, "The real-world set with code").
func realCaseSkip(dir string, withModel bool) (string, error) {
	if _, err := os.Lstat(filepath.Join(dir, "source.json")); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	c, err := realcase.Load(dir)
	if err != nil {
		return "", err
	}
	switch {
	case !c.HasCode():
		return fmt.Sprintf("a real-world case with no module or Debian source in source.json: metadata only (language %s)", c.Source.Language), nil
	case !withModel && !hasFixtures(dir):
		return "a real-world case with no recorded exchanges (fixtures/) for the replay: name a model (--provider, --model) to run it", nil
	case !realcase.Materialized(dir):
		return "", fmt.Errorf("repo/ is not materialized: run `roadmap-dev eval fetch --golden %s` first (it needs the Go module proxy or Debian's archive)", filepath.Dir(dir))
	}
	return "", nil
}
