package f2p

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
)

// MaxJUnitDepth bounds how deeply JUnit elements may nest (suites in suites).
const MaxJUnitDepth = 64

// ParseJUnit reads one JUnit XML document into res: each <testcase> is a test
// named "CLASSNAME.NAME" (NAME alone without a classname), failed when it
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
				if class != "" {
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
				if err := res.set(*cur); err != nil {
					return err
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
