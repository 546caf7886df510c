package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/roadmap-dev/roadmap/internal/record"
)

// runRecordShow prints the record of an issue body: `roadmap record show
// --body-file F [--json]`. A body that does not parse exits 2 with the error,
// and its line, on stderr.
func runRecordShow(ctx context.Context, env *Env, args []string) int {
	fs := newFlags(env, "record show")
	bodyFile := fs.String("body-file", "", "read the issue body from `FILE` (- for standard input)")
	asJSON := fs.Bool("json", false, `print {"keys": {...}, "unknown": [...]}`)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *bodyFile == "" || fs.NArg() > 0 {
		env.Errorf("record show: usage: roadmap record show --body-file FILE [--json]")
		return ExitUsage
	}
	body, err := readBody(env, *bodyFile)
	if err != nil {
		env.Errorf("record show: %v", err)
		return ExitUsage
	}
	rec, err := record.Parse(string(body))
	if err != nil {
		var pe *record.ParseError
		if errors.As(err, &pe) {
			env.Errorf("record show: %s:%d: %s", *bodyFile, pe.Line, pe.Msg)
		} else {
			env.Errorf("record show: %s: %v", *bodyFile, err)
		}
		return ExitUsage
	}
	if *asJSON {
		out := struct {
			Keys    map[record.Key]json.RawMessage `json:"keys"`
			Unknown []record.Key                   `json:"unknown"`
		}{Keys: map[record.Key]json.RawMessage{}, Unknown: []record.Key{}}
		for _, k := range rec.Keys() {
			out.Keys[k], _ = rec.JSON(k)
		}
		out.Unknown = append(out.Unknown, rec.Unknown()...)
		return env.JSON(out)
	}
	keys := rec.Keys()
	if len(keys) == 0 {
		env.Errorf("record show: %s has no record block", *bodyFile)
		return ExitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	for _, k := range keys {
		v, _ := rec.Raw(k)
		note := ""
		if !k.Known() {
			note = "\t(unknown key, kept as written)"
		}
		fmt.Fprintf(tw, "%s\t%s%s\n", k, v, note)
	}
	if err := tw.Flush(); err != nil {
		env.Errorf("record show: write: %v", err)
		return ExitInternal
	}
	return ExitOK
}

// readBody reads the body from a file, or from standard input for "-".
func readBody(env *Env, name string) ([]byte, error) {
	if name == "-" {
		b, err := io.ReadAll(env.Stdin)
		if err != nil {
			return nil, fmt.Errorf("read standard input: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return b, nil
}
