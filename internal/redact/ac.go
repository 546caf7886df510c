package redact

// ac is an Aho-Corasick automaton compiled to a dense transition table over
// byte classes. Only bytes that occur in some pattern get a class of their
// own; every other byte shares class 0, which keeps the table small (states ×
// classes) while a scan stays one table lookup per input byte.
type ac struct {
	class  [256]uint16
	width  int
	delta  []int32  // state*width + class → next state
	bits   []uint64 // per state: OR of the bits of every pattern ending here
	maxLen []int32  // per state: the longest pattern ending here, 0 if none
	depth  []int32  // per state: the length of the pattern prefix it stands for
	fail   []int32  // per state: the state of its longest proper suffix
}

// newAC compiles patterns; bits[i] is reported when patterns[i] is seen. With
// fold, ASCII letters match regardless of case.
func newAC(patterns []string, bits []uint64, fold bool) *ac {
	a := &ac{}
	lower := func(c byte) byte {
		if fold && 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	next := 1
	for _, p := range patterns {
		for i := 0; i < len(p); i++ {
			c := lower(p[i])
			if a.class[c] == 0 {
				a.class[c] = uint16(next)
				next++
			}
		}
	}
	if fold {
		for c := 'A'; c <= 'Z'; c++ {
			a.class[c] = a.class[c+'a'-'A']
		}
	}
	a.width = next
	w := a.width
	// Trie. delta entry 0 means "no child" while building: the root is never
	// a child, so 0 is free to mean that.
	a.delta = make([]int32, w)
	a.bits = []uint64{0}
	a.maxLen = []int32{0}
	a.depth = []int32{0}
	for pi, p := range patterns {
		if p == "" {
			continue
		}
		s := 0
		for i := 0; i < len(p); i++ {
			c := int(a.class[lower(p[i])])
			t := int(a.delta[s*w+c])
			if t == 0 {
				t = len(a.bits)
				a.delta = append(a.delta, make([]int32, w)...)
				a.bits = append(a.bits, 0)
				a.maxLen = append(a.maxLen, 0)
				a.depth = append(a.depth, int32(i+1))
				a.delta[s*w+c] = int32(t)
			}
			s = t
		}
		if pi < len(bits) {
			a.bits[s] |= bits[pi]
		}
		if int32(len(p)) > a.maxLen[s] {
			a.maxLen[s] = int32(len(p))
		}
	}
	// Failure links by breadth-first order, folded into the table so a scan
	// never follows a link.
	fail := make([]int32, len(a.bits))
	queue := make([]int32, 0, len(a.bits))
	for c := 0; c < w; c++ {
		if t := a.delta[c]; t != 0 {
			fail[t] = 0
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := int(queue[0])
		queue = queue[1:]
		f := int(fail[s])
		a.bits[s] |= a.bits[f]
		if a.maxLen[f] > a.maxLen[s] {
			a.maxLen[s] = a.maxLen[f]
		}
		for c := 0; c < w; c++ {
			t := a.delta[s*w+c]
			if t != 0 {
				fail[t] = a.delta[f*w+c]
				queue = append(queue, t)
			} else {
				a.delta[s*w+c] = a.delta[f*w+c]
			}
		}
	}
	a.fail = fail
	return a
}

// scanBits returns the OR of the bits of every pattern that occurs in b.
func (a *ac) scanBits(b []byte) uint64 {
	var m uint64
	s := int32(0)
	w := int32(a.width)
	for _, c := range b {
		s = a.delta[s*w+int32(a.class[c])]
		m |= a.bits[s]
	}
	return m
}

// anyString reports whether some pattern occurs in b.
func (a *ac) anyString(b string) bool {
	s := int32(0)
	w := int32(a.width)
	for i := 0; i < len(b); i++ {
		s = a.delta[s*w+int32(a.class[b[i]])]
		if a.maxLen[s] != 0 {
			return true
		}
	}
	return false
}
