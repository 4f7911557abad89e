package codegraph

import (
	"encoding/binary"
	"errors"
	"sync/atomic"
	"weak"
)

// A file's detail (its definitions, the names it refers to and its
// encoded references) is kept as one blob, the same bytes in memory and
// in the stored graph:
//
//	uvarint  definitions, then each:
//	         name, kind, parent+1, container,
//	         start line, start column, end line - start line (signed), end
//	         column, name's line - start line (signed), name's column
//	uvarint  names, then each: name, qualifier, count
//	string   the references (build.go's encoding)
//
// Strings are a uvarint length and the bytes. Decoding slices the blob's
// strings rather than copying them, so a decoded detail holds its blob.

var errBadDetail = errors.New("a file's stored detail is damaged")

type encoder struct{ b []byte }

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string) {
	e.uint(uint64(len(s)))
	e.b = append(e.b, s...)
}
func (e *encoder) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *encoder) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }

// encodeDetail encodes a detail into e.
func encodeDetail(e *encoder, syms []Symbol, names, quals []string, counts []uint32, refs []byte) {
	e.uint(uint64(len(syms)))
	for i := range syms {
		s := &syms[i]
		e.str(s.Name)
		e.uint(uint64(s.Kind))
		e.uint(uint64(s.Parent + 1))
		e.str(s.Container)
		e.uint(uint64(s.Start.Line))
		e.uint(uint64(s.Start.Col))
		e.int(int64(s.End.Line) - int64(s.Start.Line))
		e.uint(uint64(s.End.Col))
		e.int(int64(s.Sel.Line) - int64(s.Start.Line))
		e.uint(uint64(s.Sel.Col))
	}
	e.uint(uint64(len(names)))
	for i, n := range names {
		e.str(n)
		q := ""
		if i < len(quals) {
			q = quals[i]
		}
		e.str(q)
		c := uint32(1)
		if i < len(counts) {
			c = counts[i]
		}
		e.uint(uint64(c))
	}
	e.uint(uint64(len(refs)))
	e.b = append(e.b, refs...)
}

type decoder struct {
	s   string
	i   int
	bad bool
}

func (d *decoder) uint() uint64 {
	var v uint64
	var shift uint
	for d.i < len(d.s) {
		c := d.s[d.i]
		d.i++
		if shift >= 64 {
			d.bad = true
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
		shift += 7
	}
	d.bad = true
	return 0
}

func (d *decoder) int() int64 {
	u := d.uint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

// u32 reads a uint32 that the decoder's caller checks against a bound.
func (d *decoder) u32() uint32 { return uint32(min(d.uint(), 1<<32-1)) }

// take reads the next n bytes; "" and the decoder bad when fewer are left.
func (d *decoder) take(n uint64) string {
	if d.bad || n > uint64(len(d.s)-d.i) {
		d.bad = true
		return ""
	}
	s := d.s[d.i : d.i+int(n)]
	d.i += int(n)
	return s
}

func (d *decoder) str() string { return d.take(d.uint()) }

func (d *decoder) fixed32() uint32 {
	if b := d.take(4); len(b) == 4 {
		return binary.LittleEndian.Uint32([]byte(b))
	}
	return 0
}

func (d *decoder) fixed64() uint64 {
	if b := d.take(8); len(b) == 8 {
		return binary.LittleEndian.Uint64([]byte(b))
	}
	return 0
}

// count reads a count and checks it against what is left (each item takes
// at least one byte), so a damaged count cannot ask for a huge slice.
func (d *decoder) count() int {
	n := d.uint()
	if d.bad || n > uint64(len(d.s)-d.i) {
		d.bad = true
		return 0
	}
	return int(n)
}

// line reads a line given as a signed difference from base.
func (d *decoder) line(base uint32) uint32 {
	l := int64(base) + d.int()
	if l < 0 || l > 1<<32-1 {
		d.bad = true
		return 0
	}
	return uint32(l)
}

// decodes counts the details decoded, for the tests that a store copies
// what did not change rather than decoding it.
var decodes atomic.Int64

// decodeDetail decodes a blob of encodeDetail; the detail's strings are
// slices of blob.
func decodeDetail(blob string) (*detail, error) {
	decodes.Add(1)
	if blob == "" {
		return &detail{}, nil
	}
	d := &decoder{s: blob}
	out := &detail{}
	if n := d.count(); n > 0 {
		out.syms = make([]Symbol, n)
		for i := range out.syms {
			s := &out.syms[i]
			s.Name = d.str()
			s.Kind = Kind(d.uint())
			s.Parent = int32(d.u32()) - 1
			s.Container = d.str()
			s.Start = Pos{Line: d.u32(), Col: d.u32()}
			s.End.Line = d.line(s.Start.Line)
			s.End.Col = d.u32()
			s.Sel.Line = d.line(s.Start.Line)
			s.Sel.Col = d.u32()
			if s.Parent < -1 || int(s.Parent) >= n {
				d.bad = true
			}
			if d.bad {
				return nil, errBadDetail
			}
		}
	}
	if n := d.count(); n > 0 {
		out.names, out.counts = make([]string, n), make([]uint32, n)
		for i := range out.names {
			out.names[i] = d.str()
			if q := d.str(); q != "" {
				if out.quals == nil {
					out.quals = make([]string, n)
				}
				out.quals[i] = q
			}
			out.counts[i] = d.u32()
		}
	}
	out.refs = d.str()
	if d.bad || d.i != len(d.s) {
		return nil, errBadDetail
	}
	return out, nil
}

// emptyDetail is the detail of a file without one (not parsed, or whose
// stored detail could not be read).
var emptyDetail = &detail{}

// detail returns the file's detail, decoded from its blob; a detail still
// in use elsewhere is shared rather than decoded again (the file keeps a
// weak pointer to the last one). A stored detail that cannot be read is
// empty, and the graph that holds the file parses it again (image.go).
func (f *File) detail() *detail {
	if f.nsyms == 0 && f.nnames == 0 && f.nrefs == 0 {
		return emptyDetail
	}
	if w := f.cache.Load(); w != nil {
		if d := w.Value(); d != nil {
			return d
		}
	}
	blob := f.blob
	if f.img != nil {
		var err error
		if blob, err = f.img.blob(f.idx); err != nil {
			f.img.broken(f, err)
			return emptyDetail
		}
	}
	d, err := decodeDetail(blob)
	if err != nil {
		if f.img != nil {
			f.img.broken(f, err)
		}
		return emptyDetail
	}
	w := weak.Make(d)
	f.cache.Store(&w)
	return d
}

// withStat returns a copy of f, in memory, with another size and time (a
// file whose content is unchanged).
func (f *File) withStat(size, mtime int64) *File {
	g := &File{Path: f.Path, Lang: f.Lang, Size: size, ModTime: mtime, Hash: f.Hash, Imports: f.Imports,
		Package: f.Package, Err: f.Err, nsyms: f.nsyms, nnames: f.nnames, nrefs: f.nrefs, blob: f.blob, dir: f.dir}
	if f.img != nil {
		blob, err := f.img.blob(f.idx)
		if err != nil {
			f.img.broken(f, err)
			g.nsyms, g.nnames, g.nrefs = 0, 0, 0
		}
		g.blob = string([]byte(blob)) // its own, not the image's buffer
	}
	return g
}
