package codegraph

import (
	"encoding/binary"

	"github.com/agentls/agentls/internal/lsppos"
)

// builder collects what a parser finds in one file: definitions, imports
// and references, with byte offsets turned into LSP positions by
// internal/lsppos (lines end at \n, \r\n or \r; columns in UTF-16 units),
// as every other place of agentls turns them.
type builder struct {
	src []byte
	m   *lsppos.Mapper

	syms    []Symbol
	imports []Import
	names   map[string]uint32
	list    []string
	counts  []uint32
	refs    []byte
	last    uint32 // line of the previous reference
}

func newBuilder(src []byte) *builder {
	return &builder{src: src, m: lsppos.NewMapper(string(src)), names: map[string]uint32{}}
}

// pos turns a byte offset into a position (clamped to the text).
func (b *builder) pos(off int) Pos {
	p := b.m.Position(off)
	return Pos{Line: p.Line, Col: p.Character}
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
	if path == "" {
		return
	}
	b.imports = append(b.imports, Import{Path: path, Line: b.pos(off).Line})
}

// ref records a reference to name at the byte offset off.
func (b *builder) ref(name string, off int, call bool) {
	b.refAt(name, b.pos(off), call)
}

func (b *builder) refAt(name string, p Pos, call bool) {
	idx, ok := b.names[name]
	if !ok {
		idx = uint32(len(b.list))
		b.names[name] = idx
		b.list = append(b.list, name)
		b.counts = append(b.counts, 0)
	}
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

// file returns what was collected as a File (without its path and stat).
func (b *builder) file(lang Lang) *File {
	return &File{Lang: lang, Symbols: b.syms, Imports: b.imports, Names: b.list, Counts: b.counts, refs: string(b.refs)}
}

// decodeRefs decodes the references of a file.
func decodeRefs(names []string, enc string) []Ref {
	var out []Ref
	var line int64
	buf := []byte(enc)
	for len(buf) > 0 {
		idx, n := binary.Uvarint(buf)
		if n <= 0 {
			return out
		}
		buf = buf[n:]
		d, n := binary.Varint(buf)
		if n <= 0 {
			return out
		}
		buf = buf[n:]
		c, n := binary.Uvarint(buf)
		if n <= 0 {
			return out
		}
		buf = buf[n:]
		line += d
		if idx >= uint64(len(names)) || line < 0 {
			return out
		}
		out = append(out, Ref{Name: names[idx], Pos: Pos{Line: uint32(line), Col: uint32(c >> 1)}, Call: c&1 == 1})
	}
	return out
}
