package llm

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/roadmap-dev/roadmap/internal/agent"
)

// Estimator counts the tokens a text costs. It must not count fewer than the
// model's tokenizer does, or a packed prompt can be refused for size.
type Estimator func(text string) int

// Overheads the chat formats add around content (role markers, separators,
// the reply primer, tool-call framing), rounded up.
const (
	messageOverhead  = 4
	requestOverhead  = 3
	toolCallOverhead = 8
	toolSpecOverhead = 8
)

// Estimate is the conservative default: the larger of ceil(bytes/3) and a
// count of the pieces a BPE tokenizer cannot merge across (each group of
// three digits, each run of symbols, each case change inside a word, each
// non-ASCII character's extra bytes). Ordinary English runs about 4 bytes a
// token and code about 3.5, so bytes/3 stays above the real count for them;
// the piece count covers text dense in digits, symbols or mixed-case
// identifiers (CSV of numbers, hashes, base64), where bytes/3 falls short.
func Estimate(text string) int {
	if text == "" {
		return 0
	}
	return max((len(text)+2)/3, pieces(text))
}

// pieces walks text once, counting an upper-leaning token count by the rules
// in Estimate's comment.
func pieces(text string) int {
	n := 0
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r < utf8.RuneSelf && isASCIILetter(byte(r)):
			j, changes := i, 0
			for j < len(text) && isASCIILetter(text[j]) {
				if j > i && isUpper(text[j]) && !isUpper(text[j-1]) {
					changes++
				}
				j++
			}
			n += max((j-i+5)/6, 1+changes)
			i = j
		case r >= '0' && r <= '9':
			j := i
			for j < len(text) && text[j] >= '0' && text[j] <= '9' {
				j++
			}
			n += (j - i + 2) / 3
			i = j
		case r < utf8.RuneSelf && isBlank(byte(r)):
			// Newlines (with the blanks before them) are one piece, the blanks
			// after the last newline another; a lone blank before a word
			// merges into the word.
			j := i
			for j < len(text) && isBlank(text[j]) {
				j++
			}
			run := text[i:j]
			if nl := strings.LastIndexAny(run, "\r\n"); nl >= 0 {
				n += (nl + 1 + 3) / 4
				run = run[nl+1:]
			}
			if run != "" && !(len(run) == 1 && j < len(text) && merges(run[0], text[j])) {
				n += (len(run) + 3) / 4
			}
			i = j
		case r >= utf8.RuneSelf:
			if unicode.IsSpace(r) {
				n++
			} else {
				// A multi-byte character is at least one token and rarer ones
				// split into several.
				n += max(size-1, 1)
			}
			i += size
		default:
			// A run of ASCII symbols: common pairs ("()", ":=", "//") are
			// single tokens, so two symbols a token.
			j := i
			for j < len(text) && isSymbol(text[j]) {
				j++
			}
			n += (j - i + 1) / 2
			i = j
		}
	}
	return n
}

func isASCIILetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }
func isUpper(b byte) bool       { return b >= 'A' && b <= 'Z' }

// isSymbol is ASCII that is not a letter, a digit, a space or a newline.
func isSymbol(b byte) bool {
	return b < utf8.RuneSelf && !isASCIILetter(b) && !(b >= '0' && b <= '9') && b != ' ' && b != '\n' && b != '\r' && b != '\t'
}

// merges reports whether a BPE tokenizer folds the blank before next into
// the piece next starts: a space before an ASCII letter or symbol, a tab
// before an ASCII letter. Digits, blanks and anything non-ASCII do not, to
// stay on the safe side.
func merges(blank, next byte) bool {
	switch {
	case isASCIILetter(next):
		return true
	case blank == ' ':
		return isSymbol(next)
	}
	return false
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// estimateMessage is one message with its framing.
func estimateMessage(m agent.Message, est Estimator) int {
	n := messageOverhead + est(m.Content) + est(m.ToolCallID)
	for _, tc := range m.ToolCalls {
		n += toolCallOverhead + est(tc.ID) + est(tc.Name) + est(tc.Arguments)
	}
	return n
}

// estimateTools is the tool definitions a request carries.
func estimateTools(tools []agent.ToolSpec, est Estimator) int {
	n := 0
	for _, t := range tools {
		n += toolSpecOverhead + est(t.Name) + est(t.Description) + est(string(t.Parameters))
	}
	return n
}

// EstimateRequest is the whole prompt of req: messages, tool definitions and
// framing. It is what FitMessages holds under the input window.
func EstimateRequest(req agent.ModelRequest, est Estimator) int {
	if est == nil {
		est = Estimate
	}
	n := requestOverhead + estimateTools(req.Tools, est)
	for _, m := range req.Messages {
		n += estimateMessage(m, est)
	}
	return n
}
