package codegraph

import (
	"bytes"
	"encoding/binary"
	"sort"
	"sync"
	"unicode/utf8"
)

// builder collects what a parser finds in one file: definitions, imports
// and references, with byte offsets turned into LSP positions as
// internal/lsppos turns them (lines end at \n, \r\n or \r; columns in
// UTF-16 units; an offset inside a character is that character's start,
// one inside a line break its line's end), which TestPositionsAreLSPPositions
// holds it to.
type builder struct {
	src   []byte
	ascii bool    // the text is all ASCII: a column is a byte count
	lines []int32 // line starts, as lsppos cuts lines

	// The last position found: its line and, in a text that is not all
	// ASCII, a character boundary of that line at or before it with the
	// UTF-16 units before the boundary. Parsers ask for positions mostly in
	// the order of the text, so a walk along a line goes on from here
	// rather than from the line's start: a minified file's one long line
	// costs one walk, not one per position.
	curLine         int
	curAt, curUnits int

	syms    []Symbol
	imports []Import
	pkg     string
	names   map[nameQual]uint32
	list    []string
	quals   []string
	counts  []uint32
	refs    []byte
	last    uint32 // line of the previous reference
	blob    []byte // where the detail is encoded, reused
}

// builders are reused from file to file: a full index makes thousands,
// and their slices and name map grown for one file serve the next (file
// copies out what it keeps).
var builders = sync.Pool{New: func() any { return &builder{names: map[nameQual]uint32{}} }}

// newBuilder returns a builder for src, empty; file gives it back.
func newBuilder(src []byte) *builder {
	b := builders.Get().(*builder)
	b.src, b.curLine, b.curAt, b.curUnits, b.last = src, 0, 0, 0, 0
	b.syms, b.imports, b.list, b.quals, b.counts, b.refs = b.syms[:0], b.imports[:0], b.list[:0], b.quals[:0], b.counts[:0], b.refs[:0]
	b.pkg = ""
	b.ascii = isASCII(src)
	// The lines are cut where lsppos cuts them (\n, \r\n, a lone \r);
	// most texts have no \r, and their \n are found by IndexByte.
	lines := append(b.lines[:0], 0)
	if bytes.IndexByte(src, '\r') < 0 {
		for i := 0; ; {
			j := bytes.IndexByte(src[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			lines = append(lines, int32(i))
		}
	} else {
		for i := 0; i < len(src); i++ {
			switch src[i] {
			case '\n':
				lines = append(lines, int32(i+1))
			case '\r':
				if i+1 < len(src) && src[i+1] == '\n' {
					i++
				}
				lines = append(lines, int32(i+1))
			}
		}
	}
	b.lines = lines
	return b
}

// isASCII reports whether src is all ASCII, eight bytes at a time.
func isASCII(src []byte) bool {
	i := 0
	for ; i+8 <= len(src); i += 8 {
		if binary.LittleEndian.Uint64(src[i:])&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(src); i++ {
		if src[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lineOf is the line holding the byte offset off (in [0, len(src)]): the
// line of the last position or the next one, else a binary search.
func (b *builder) lineOf(off int) int {
	l := b.curLine
	for range 2 {
		if l < len(b.lines) && int(b.lines[l]) <= off && (l+1 == len(b.lines) || int(b.lines[l+1]) > off) {
			return l
		}
		l++
	}
	return sort.Search(len(b.lines), func(i int) bool { return int(b.lines[i]) > off }) - 1
}

// pos turns a byte offset into a position (clamped to the text).
func (b *builder) pos(off int) Pos {
	off = min(max(off, 0), len(b.src))
	line := b.lineOf(off)
	start := int(b.lines[line])
	// an offset inside a line break is the end of its line
	end := len(b.src)
	if line+1 < len(b.lines) {
		end = int(b.lines[line+1]) - 1
		if end > start && b.src[end] == '\n' && b.src[end-1] == '\r' {
			end--
		}
	}
	to := min(off, end)
	if b.ascii {
		b.curLine = line
		return Pos{Line: uint32(line), Col: uint32(to - start)}
	}
	// walk the line's characters up to the last boundary at or before to,
	// counting UTF-16 units: two beyond the Basic Multilingual Plane, one
	// for an invalid byte (as editors read it, U+FFFD)
	at, units := start, 0
	if b.curLine == line && b.curAt >= start && b.curAt <= to {
		at, units = b.curAt, b.curUnits
	}
	for at < to {
		size, u := 1, 1
		if b.src[at] >= utf8.RuneSelf {
			var r rune
			r, size = utf8.DecodeRune(b.src[at:end])
			if r >= 0x10000 {
				u = 2
			}
		}
		if at+size > to {
			break
		}
		at, units = at+size, units+u
	}
	b.curLine, b.curAt, b.curUnits = line, at, units
	return Pos{Line: uint32(line), Col: uint32(units)}
}

// def records a definition spanning the bytes [start, end) whose name is
// at sel, and returns its index.
func (b *builder) def(name string, kind Kind, parent int, container string, start, end, sel int) int {
	if end < start {
		end = start
	}
	b.syms = append(b.syms, Symbol{
		Name: name, Kind: kind, Parent: int32(parent), Container: container,
		Start: b.pos(start), End: b.pos(end), Sel: b.pos(sel),
	})
	return len(b.syms) - 1
}

// setEnd moves the end of definition i to the byte offset end.
func (b *builder) setEnd(i, end int) {
	if i >= 0 && i < len(b.syms) {
		b.syms[i].End = b.pos(end)
	}
}

func (b *builder) imp(path string, off int) {
	b.impNamed(path, "", off)
}

// impNamed records an import that the file gives a name (a Go alias).
func (b *builder) impNamed(path, name string, off int) {
	if path == "" {
		return
	}
	b.imports = append(b.imports, Import{Path: path, Name: name, Line: b.pos(off).Line})
}

// ref records a reference to name at the byte offset off.
func (b *builder) ref(name string, off int, call bool) {
	b.refAt(name, qualBare, b.pos(off), call)
}

// refAt records a reference to name, with its qualifier, at p.
func (b *builder) refAt(name, qual string, p Pos, call bool) {
	k := nameQual{name, qual}
	idx, ok := b.names[k]
	if !ok {
		idx = b.intern(name, qual)
		b.names[k] = idx
	}
	b.refIdx(idx, p, call)
}

// intern adds name with its qualifier to the names the file refers to and
// returns its index; refAt calls it once per name, a parser that keeps its
// own table of names (parse_go.go) once per name too.
func (b *builder) intern(name, qual string) uint32 {
	b.list = append(b.list, name)
	b.quals = append(b.quals, qual)
	b.counts = append(b.counts, 0)
	return uint32(len(b.list) - 1)
}

// refIdx records a reference to the name of index idx at p.
func (b *builder) refIdx(idx uint32, p Pos, call bool) {
	b.counts[idx]++
	flag := uint64(0)
	if call {
		flag = 1
	}
	b.refs = binary.AppendUvarint(b.refs, uint64(idx))
	b.refs = binary.AppendVarint(b.refs, int64(p.Line)-int64(b.last))
	b.refs = binary.AppendUvarint(b.refs, uint64(p.Col)<<1|flag)
	b.last = p.Line
}

// file returns what was collected as a File (without its path and stat),
// its detail encoded, and gives the builder back: it is not used after.
func (b *builder) file(lang Lang) *File {
	f := &File{Lang: lang, Imports: clone(b.imports), Package: b.pkg,
		nsyms: uint32(len(b.syms)), nnames: uint32(len(b.list)), nrefs: uint32(len(b.refs))}
	quals := b.quals
	bare := true
	for _, q := range quals {
		if q != qualBare {
			bare = false
			break
		}
	}
	if bare {
		quals = nil
	}
	e := encoder{b: b.blob[:0]}
	encodeDetail(&e, b.syms, b.list, quals, b.counts, b.refs)
	f.blob = string(e.b)
	b.blob = e.b
	// the strings it holds are the file's now, not the pool's
	clear(b.syms)
	clear(b.imports)
	clear(b.list)
	clear(b.quals)
	clear(b.names)
	b.src = nil
	builders.Put(b)
	return f
}

// clone copies a slice to its length, nil when empty.
func clone[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// decodeRefs decodes the references of a file.
func decodeRefs(names, quals []string, enc string) []Ref {
	var out []Ref
	eachRef(names, quals, enc, func(_ int, r Ref) { out = append(out, r) })
	return out
}

// eachRef calls fn with each reference encoded in enc, in the order of the
// file, and the index of its distinct name.
func eachRef(names, quals []string, enc string, fn func(k int, r Ref)) {
	var line int64
	for i := 0; i < len(enc); {
		idx, n := uvarint(enc[i:])
		if n <= 0 {
			return
		}
		i += n
		d, n := varint(enc[i:])
		if n <= 0 {
			return
		}
		i += n
		c, n := uvarint(enc[i:])
		if n <= 0 {
			return
		}
		i += n
		line += d
		if idx >= uint64(len(names)) || line < 0 {
			return
		}
		r := Ref{Name: names[idx], Pos: Pos{Line: uint32(line), Col: uint32(c >> 1)}, Call: c&1 == 1}
		if idx < uint64(len(quals)) {
			r.Qual = quals[idx]
		}
		fn(int(idx), r)
	}
}

// uvarint is binary.Uvarint of a string, which it does not copy.
func uvarint(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s); i++ {
		b := s[i]
		if i == binary.MaxVarintLen64 {
			return 0, -(i + 1)
		}
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				return 0, -(i + 1)
			}
			return x | uint64(b)<<shift, i + 1
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	return 0, 0
}

// varint is binary.Varint of a string.
func varint(s string) (int64, int) {
	ux, n := uvarint(s)
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x, n
}
