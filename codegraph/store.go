package codegraph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"sort"
	"unsafe"

	"github.com/agentls/agentls/internal/fsutil"
)

// The graph on disk: one file in the workspace's state directory, written
// whole and atomically (fsutil), read whole at start. It holds every
// file's record (stat, hash, definitions, imports, names and encoded
// references) and the Go modules of the workspace, in a compact binary
// form ending with a CRC-32 of the rest: a file that does not check out
// (truncated, damaged, of another version) is ignored, and the graph is
// built afresh. Strings decode as slices of one string holding the whole
// file, so loading allocates little beyond the records themselves.

const (
	storeMagic   = "agentls codegraph\n"
	storeVersion = 2
)

var errBadStore = errors.New("the stored code graph is damaged or of another version")

type encoder struct{ b []byte }

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string) {
	e.uint(uint64(len(s)))
	e.b = append(e.b, s...)
}
func (e *encoder) pos(p Pos) {
	e.uint(uint64(p.Line))
	e.uint(uint64(p.Col))
}

// encodeGraph encodes files (in path order) and the Go modules.
func encodeGraph(files map[string]*File, modules map[string]string) []byte {
	// Room for a file's usual share of a store, up to 1 MiB: a small
	// workspace's graph is not encoded into a buffer made for a big one.
	e := &encoder{b: make([]byte, 0, min(1<<20, 4096+2048*len(files)))}
	e.b = append(e.b, storeMagic...)
	e.uint(storeVersion)
	dirs := make([]string, 0, len(modules))
	for d := range modules {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	e.uint(uint64(len(dirs)))
	for _, d := range dirs {
		e.str(d)
		e.str(modules[d])
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	e.uint(uint64(len(paths)))
	for _, p := range paths {
		f := files[p]
		e.str(f.Path)
		e.uint(uint64(f.Lang))
		e.int(f.Size)
		e.int(f.ModTime)
		e.b = binary.LittleEndian.AppendUint64(e.b, f.Hash)
		e.str(f.Err)
		e.uint(uint64(len(f.Symbols)))
		for i := range f.Symbols {
			s := &f.Symbols[i]
			e.str(s.Name)
			e.uint(uint64(s.Kind))
			e.int(int64(s.Parent))
			e.str(s.Container)
			e.pos(s.Start)
			e.pos(s.End)
			e.pos(s.Sel)
		}
		e.uint(uint64(len(f.Imports)))
		for _, im := range f.Imports {
			e.str(im.Path)
			e.str(im.Name)
			e.uint(uint64(im.Line))
		}
		e.str(f.Package)
		e.uint(uint64(len(f.Names)))
		for i, n := range f.Names {
			e.str(n)
			e.str(f.qual(i))
			c := uint32(1)
			if i < len(f.Counts) {
				c = f.Counts[i]
			}
			e.uint(uint64(c))
		}
		e.str(f.refs)
	}
	return binary.LittleEndian.AppendUint32(e.b, crc32.ChecksumIEEE(e.b))
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

func (d *decoder) str() string {
	n := d.uint()
	if d.bad || n > uint64(len(d.s)-d.i) {
		d.bad = true
		return ""
	}
	s := d.s[d.i : d.i+int(n)]
	d.i += int(n)
	return s
}

func (d *decoder) pos() Pos {
	return Pos{Line: uint32(d.uint()), Col: uint32(d.uint())}
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

// decodeGraph decodes what encodeGraph wrote. The records it returns hold
// slices of data, which the caller must never change afterwards.
func decodeGraph(data []byte) (map[string]*File, map[string]string, error) {
	if len(data) < len(storeMagic)+4 || string(data[:len(storeMagic)]) != storeMagic {
		return nil, nil, errBadStore
	}
	body := data[:len(data)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, nil, errBadStore
	}
	// The records' strings are slices of this one string. data is never
	// written again (it is read from disk for this decode alone), so the
	// string shares its bytes rather than copying 20 MB.
	d := &decoder{s: unsafe.String(unsafe.SliceData(body), len(body)), i: len(storeMagic)}
	if d.uint() != storeVersion {
		return nil, nil, errBadStore
	}
	modules := map[string]string{}
	for n := d.count(); n > 0 && !d.bad; n-- {
		dir := d.str()
		modules[dir] = d.str()
	}
	nfiles := d.count()
	files := make(map[string]*File, nfiles)
	for ; nfiles > 0 && !d.bad; nfiles-- {
		f := &File{}
		f.Path = d.str()
		f.Lang = Lang(d.uint())
		f.Size = d.int()
		f.ModTime = d.int()
		if d.i+8 > len(d.s) {
			return nil, nil, errBadStore
		}
		f.Hash = binary.LittleEndian.Uint64([]byte(d.s[d.i : d.i+8]))
		d.i += 8
		f.Err = d.str()
		f.Symbols = make([]Symbol, d.count())
		for i := range f.Symbols {
			s := &f.Symbols[i]
			s.Name = d.str()
			s.Kind = Kind(d.uint())
			s.Parent = int32(d.int())
			s.Container = d.str()
			s.Start, s.End, s.Sel = d.pos(), d.pos(), d.pos()
		}
		if n := d.count(); n > 0 {
			f.Imports = make([]Import, n)
			for i := range f.Imports {
				f.Imports[i] = Import{Path: d.str(), Name: d.str(), Line: uint32(d.uint())}
			}
		}
		f.Package = d.str()
		n := d.count()
		f.Names, f.Counts = make([]string, n), make([]uint32, n)
		var quals []string
		for i := range f.Names {
			f.Names[i] = d.str()
			if q := d.str(); q != "" {
				if quals == nil {
					quals = make([]string, n)
				}
				quals[i] = q
			}
			f.Counts[i] = uint32(d.uint())
		}
		f.Quals = quals
		f.refs = d.str()
		files[f.Path] = f
	}
	if d.bad || d.i != len(d.s) {
		return nil, nil, errBadStore
	}
	return files, modules, nil
}

// loadStore reads the graph stored at path; a missing file is no graph and
// no error.
func loadStore(path string) (map[string]*File, map[string]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read the stored code graph: %w", err)
	}
	return decodeGraph(data)
}

// saveStore writes the graph to path atomically, making its directory: the
// file and the directories are its user's alone (0600, 0700), as the state
// directory it is kept in is.
func saveStore(path string, files map[string]*File, modules map[string]string) error {
	data := encodeGraph(files, modules)
	if err := fsutil.Write(path, data, fsutil.WriteOptions{Perm: 0o600, MkdirAll: true, DirPerm: 0o700}); err != nil {
		return fmt.Errorf("store the code graph: %w", err)
	}
	return nil
}
