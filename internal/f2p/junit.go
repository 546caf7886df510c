package f2p

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxJUnitDepth bounds how deeply JUnit elements may nest (suites in suites).
const MaxJUnitDepth = 64

// DetectJUnit returns the JUnit XML file argv says it writes, as a glob
// relative to the tree's top, or "" when it says none: pytest's
// --junitxml=FILE (or --junit-xml, or the file as the next word), and jest's
// jest-junit reporter (--reporters=jest-junit), which writes junit.xml in the
// directory it runs in unless its environment says otherwise. A file outside
// the tree (an absolute path, a ".." element) is not detected.
// cargo-nextest writes JUnit only as its profile's configuration says:
// name that file with --junit.
func DetectJUnit(argv []string) string {
	file := ""
	for i, a := range argv {
		for _, flag := range []string{"--junitxml", "--junit-xml"} {
			switch {
			case strings.HasPrefix(a, flag+"="):
				file = strings.TrimPrefix(a, flag+"=")
			case a == flag && i+1 < len(argv):
				file = argv[i+1]
			}
		}
		if a == "--reporters=jest-junit" || a == "--reporters" && i+1 < len(argv) && argv[i+1] == "jest-junit" {
			file = "junit.xml"
		}
	}
	if file == "" {
		return ""
	}
	glob := globEscaper.Replace(strings.TrimPrefix(file, "./"))
	if checkGlob(glob) != nil {
		return ""
	}
	return glob
}

// globEscaper makes a file name a glob that matches only it.
var globEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`)

// ParseJUnit reads one JUnit XML document into res: each <testcase> is a test
// named "CLASSNAME.NAME" (NAME alone without a classname, or when the two are
// the same, as jest-junit writes them by default), failed when it
// holds <failure> or <error>, skipped when it holds <skipped>, else passed.
// group names the file, for the Test's Group. It reads at most limit bytes;
// a longer document is an error, as is one nested deeper than MaxJUnitDepth
// or one that is not well-formed XML.
func ParseJUnit(r io.Reader, limit int64, group string, res *Results) error {
	lr := &io.LimitedReader{R: r, N: limit + 1}
	d := xml.NewDecoder(lr)
	d.Strict = true
	depth := 0
	var cur *Test // the open <testcase>
	curDepth := 0
	elements := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if lr.N <= 0 {
			return fmt.Errorf("%s: longer than %d bytes", group, limit)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", group, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			elements++
			depth++
			if depth > MaxJUnitDepth {
				return fmt.Errorf("%s: elements nested deeper than %d", group, MaxJUnitDepth)
			}
			switch {
			case t.Name.Local == "testcase" && cur == nil:
				var name, class string
				for _, a := range t.Attr {
					switch a.Name.Local {
					case "name":
						name = a.Value
					case "classname":
						class = a.Value
					}
				}
				switch {
				case name == "":
					name = class
				case class != "" && class != name:
					name = class + "." + name
				}
				cur, curDepth = &Test{Name: name, Group: group, Status: Pass}, depth
			case cur != nil && depth == curDepth+1:
				switch t.Name.Local {
				case "failure", "error":
					cur.Status = Fail
				case "skipped":
					if cur.Status == Pass {
						cur.Status = Skip
					}
				}
			}
		case xml.EndElement:
			if cur != nil && depth == curDepth {
				// A nameless <testcase> names nothing to compare.
				if cur.Name != "" {
					if err := res.set(*cur); err != nil {
						return err
					}
				}
				cur = nil
			}
			depth--
		}
	}
	if lr.N <= 0 {
		return fmt.Errorf("%s: longer than %d bytes", group, limit)
	}
	if elements == 0 {
		return fmt.Errorf("%s: not an XML document", group)
	}
	return nil
}
