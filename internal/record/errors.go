package record

import "fmt"

// ErrorKind says what is wrong with a body, for callers (and tests) that branch on it.
type ErrorKind int

// The ways a body can fail to parse.
const (
	// KindMalformed: a line inside the block is not `key: value`, or a key
	// appears twice.
	KindMalformed ErrorKind = iota + 1
	// KindDuplicate: a second record block outside any code fence.
	KindDuplicate
	// KindUnterminated: the block has no closing `-->` line.
	KindUnterminated
	// KindVersion: the opening line names a version this release does not read.
	KindVersion
	// KindType: a known key holds a value of the wrong type or over its bound.
	KindType
	// KindEncoding: a line of the block holds a NUL byte or bytes that are
	// not UTF-8. Refused, never rewritten: the value read would not be the
	// value written.
	KindEncoding
	// KindTooLarge: a value over MaxValueChars or a block over MaxBlockChars.
	KindTooLarge
)

func (k ErrorKind) String() string {
	switch k {
	case KindMalformed:
		return "malformed line"
	case KindDuplicate:
		return "duplicate block"
	case KindUnterminated:
		return "unterminated block"
	case KindVersion:
		return "unknown version"
	case KindType:
		return "wrong type"
	case KindEncoding:
		return "invalid text"
	case KindTooLarge:
		return "too large"
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// ParseError is a problem in an issue body. Line is 1-based and counts lines of
// the whole body (a line ends at "\n"; a CRLF body counts the same).
type ParseError struct {
	Line int
	Kind ErrorKind
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// MaxBodyChars is GitHub's limit on an issue body. GitHub counts characters as
// Ruby does, in Unicode code points ("\r\n" is two), and so does this package.
const MaxBodyChars = 65536

// Bounds on what Parse reads, whatever the key: a block a person or another
// program wrote is untrusted input. Both are well above what a write makes
// (the largest value the setters write is implement.jobs, 32,101 characters
// at worst; TestBoundsOnUntrustedInput holds the setters' worst case under
// MaxValueChars) and count characters (code points) as written.
const (
	// MaxValueChars bounds one value of the block, known key or unknown.
	MaxValueChars = 40_000
	// MaxBlockChars bounds the whole block, opening and closing lines and
	// line ends included: a block can be no longer than the comment that
	// holds it.
	MaxBlockChars = MaxBodyChars
)

// TooLongError is a rendered body over MaxBodyChars.
type TooLongError struct {
	Chars int // code points in the rendered body
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("rendered issue body is %d characters, %d over GitHub's limit of %d",
		e.Chars, e.Chars-MaxBodyChars, MaxBodyChars)
}

// Over is how many characters must go for the body to fit.
func (e *TooLongError) Over() int { return e.Chars - MaxBodyChars }
