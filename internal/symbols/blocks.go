package symbols

// blocks follows the braces of blanked JavaScript or Rust line by line: the
// depth a line starts at, the containers open (a class body, an impl or
// trait block, an inline module) whose lines are read for declarations, and
// the end of each declaration taken (the brace that closes its body, or the
// semicolon that ends it).
type blocks struct {
	c            collector
	depth, paren int
	open         []openDecl
	containers   []container
	pending      *container // the next "{" at its depth opens it
}

type openDecl struct {
	idx, depth int
	started    bool
}

// container is a block whose direct lines hold declarations: kind "class",
// "impl", "trait" or "mod", recv the type its methods belong to.
type container struct {
	depth      int
	kind, recv string
}

// in is the container a line starting now is directly inside: the top
// level (kind "") or an open container, if the line starts at its depth
// outside any parentheses or brackets.
func (b *blocks) in() (container, bool) {
	top := container{}
	if n := len(b.containers); n > 0 {
		top = b.containers[n-1]
	}
	return top, b.paren == 0 && b.depth == top.depth
}

// decl takes d, declared on a line that starts in a container.
func (b *blocks) decl(d Decl) {
	b.settle(d.Line)
	if i := b.c.add(d); i >= 0 {
		b.open = append(b.open, openDecl{idx: i, depth: b.depth})
	}
}

// settle ends a declaration at the current depth still waiting for its
// body: a new one starts there.
func (b *blocks) settle(line int) {
	if n := len(b.open); n > 0 && b.open[n-1].depth == b.depth && !b.open[n-1].started {
		b.end(line)
	}
}

func (b *blocks) end(line int) {
	n := len(b.open)
	d := &b.c.out[b.open[n-1].idx]
	d.End = max(line, d.Line)
	b.open = b.open[:n-1]
}

// contain makes the next "{" at this depth open a container.
func (b *blocks) contain(kind, recv string) {
	b.pending = &container{depth: b.depth + 1, kind: kind, recv: recv}
}

// walk follows line l (number line) past its header.
func (b *blocks) walk(l string, line int) {
	for k := 0; k < len(l); k++ {
		switch l[k] {
		case '(', '[':
			b.paren++
		case ')', ']':
			b.paren = max(b.paren-1, 0)
		case '{':
			if b.pending != nil && b.pending.depth == b.depth+1 {
				b.containers = append(b.containers, *b.pending)
				b.pending = nil
			}
			if n := len(b.open); n > 0 && b.open[n-1].depth == b.depth {
				b.open[n-1].started = true
			}
			b.depth++
		case '}':
			if b.depth == 0 {
				continue // a stray brace: the top level stays the top level
			}
			b.depth--
			if n := len(b.containers); n > 0 && b.containers[n-1].depth > b.depth {
				b.containers = b.containers[:n-1]
			}
			for n := len(b.open); n > 0 && b.open[n-1].depth > b.depth; n = len(b.open) {
				b.end(line) // a body left unclosed inside the block that closes
			}
			if n := len(b.open); n > 0 && b.open[n-1].depth == b.depth && b.open[n-1].started {
				b.end(line)
			}
			if b.pending != nil && b.pending.depth > b.depth+1 {
				b.pending = nil
			}
		case ';':
			if b.paren == 0 {
				if b.pending != nil && b.pending.depth == b.depth+1 {
					b.pending = nil // "mod name;": no block
				}
				b.settle(line)
			}
		}
	}
}

// finish ends what is still open at the last line.
func (b *blocks) finish(last int) []Decl {
	for len(b.open) > 0 {
		b.end(last)
	}
	return b.c.out
}

// lastLine is the number of the last line of ls, a final empty one (after
// the file's last line break) aside.
func lastLine(ls []string) int {
	if n := len(ls); n > 1 && ls[n-1] == "" {
		return n - 1
	}
	return len(ls)
}
