package codegraph

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/agentls/agentls/internal/fsutil"
)

// The graph on disk, an image: one file in the workspace's state
// directory, written in a stream (never whole in memory) and atomically
// (fsutil.Create), and read in place: a start reads its summary alone
// (the files' headers and the indexes by name), and each file's detail
// (detail.go) is read from it when a query needs it.
//
//	magic
//	the files' details, one blob each
//	the summary:
//	  strings  the names defined or referred to, and the containers,
//	           sorted: u32 count, u32 offsets (count+1), the bytes
//	  names    per string, u32 offsets of its definitions and of its
//	           referrers (count+1 each)
//	  defs     per name, its definitions: file (a difference from the
//	           previous one), index in the file, kind, container+1
//	  refs     per name, the files that refer to it (differences)
//	  files    the files in path order: path, language, size, time, hash,
//	           package, error, imports, where the blob is (offset, length,
//	           CRC-32C), sizes of the detail
//	  modules  the Go modules: directory, module path
//	footer: u64 where the summary starts, u32 the summary's CRC-32C,
//	        u32 version, magic
//
// Every section is a u64 length and its bytes. A summary that does not
// check out, or an image of another version, is no image: the graph is
// built afresh. A blob that does not check out when read costs that file
// its detail until it is parsed again (the graph is told: broken).

const (
	imageMagic   = "agentls codegraph\n"
	imageTail    = "agcg"
	imageVersion = 4 // rises with the format and with what a parser finds (4: C#, PHP, Kotlin namespaces; JavaScript lists)
	footerSize   = 8 + 4 + 4 + len(imageTail)
	// imageInMemory: an image up to this size is read whole into memory
	// when opened; a larger one is read in place.
	imageInMemory = 16 << 20
)

var errBadImage = errors.New("the stored code graph is damaged or of another version")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// image is a stored graph opened for reading. Its files (the *File of
// each) are made when it is opened; dead marks those the graph no longer
// holds (replaced or removed since), guarded by the graph's lock.
type image struct {
	f    *os.File // read in place, or nil
	data []byte   // the whole image, when read into memory

	strs    string // offsets, then the bytes
	nstrs   int
	strData string
	names   string // u32 offsets: definitions (nstrs+1), then referrers (nstrs+1)
	defs    string
	refs    string
	files   []*File
	locs    []blobLoc
	sumOff  int64 // where the summary starts: the details end there
	modules map[string]string
	dead    []bool

	mu       sync.Mutex
	onBroken func(*File, error)
}

type blobLoc struct {
	off int64
	n   uint32
	crc uint32
}

// openImage opens the image at path; a missing file is no image and no
// error. An image up to inMemory bytes is read whole.
func openImage(path string, inMemory int64) (*image, error) {
	f, err := openShared(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the stored code graph: %w", err)
	}
	im, err := readImage(f, inMemory)
	if err != nil || im.f == nil {
		f.Close()
	}
	return im, err
}

// readImage reads an image's summary from f (all of it, up to inMemory
// bytes); the image keeps f to read the details in place unless it read
// them too.
func readImage(f *os.File, inMemory int64) (*image, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read the stored code graph: %w", err)
	}
	size := fi.Size()
	if size < int64(len(imageMagic)+footerSize) {
		return nil, errBadImage
	}
	if size <= inMemory {
		data := make([]byte, size)
		if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), data); err != nil {
			return nil, fmt.Errorf("read the stored code graph: %w", err)
		}
		im, err := parseImage(data, nil)
		if err != nil {
			return nil, err
		}
		return im, nil
	}
	foot := make([]byte, footerSize)
	if _, err := f.ReadAt(foot, size-int64(footerSize)); err != nil {
		return nil, fmt.Errorf("read the stored code graph: %w", err)
	}
	sumOff := int64(binary.LittleEndian.Uint64(foot))
	if sumOff < int64(len(imageMagic)) || sumOff > size-int64(footerSize) {
		return nil, errBadImage
	}
	sum := make([]byte, size-sumOff)
	if _, err := f.ReadAt(sum, sumOff); err != nil {
		return nil, fmt.Errorf("read the stored code graph: %w", err)
	}
	head := make([]byte, len(imageMagic))
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, fmt.Errorf("read the stored code graph: %w", err)
	}
	if string(head) != imageMagic {
		return nil, errBadImage
	}
	im, err := parseSummary(sum, sumOff, size)
	if err != nil {
		return nil, err
	}
	im.f = f
	return im, nil
}

// parseImage parses a whole image held in memory (data, which is never
// written again).
func parseImage(data []byte, _ *os.File) (*image, error) {
	if len(data) < len(imageMagic)+footerSize || string(data[:len(imageMagic)]) != imageMagic {
		return nil, errBadImage
	}
	size := int64(len(data))
	sumOff := int64(binary.LittleEndian.Uint64(data[size-int64(footerSize):]))
	if sumOff < int64(len(imageMagic)) || sumOff > size-int64(footerSize) {
		return nil, errBadImage
	}
	im, err := parseSummary(data[sumOff:], sumOff, size)
	if err != nil {
		return nil, err
	}
	im.data = data
	return im, nil
}

// parseSummary parses the summary sum (with the footer) of an image of
// size bytes whose summary starts at sumOff. The image's strings are
// slices of sum, which is never written again.
func parseSummary(sum []byte, sumOff, size int64) (*image, error) {
	body := sum[:len(sum)-footerSize]
	foot := sum[len(sum)-footerSize:]
	if string(foot[16:]) != imageTail || binary.LittleEndian.Uint32(foot[12:]) != imageVersion {
		return nil, errBadImage
	}
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(foot[8:]) {
		return nil, errBadImage
	}
	s := unsafe.String(unsafe.SliceData(body), len(body))
	d := &decoder{s: s}
	section := func() string { return d.take(d.fixed64()) }
	im := &image{}
	strs, names := section(), section()
	im.defs, im.refs = section(), section()
	files, modules := section(), section()
	if d.bad || d.i != len(d.s) {
		return nil, errBadImage
	}
	// strings: a count, count+1 offsets into the bytes after them
	if len(strs) < 4 {
		return nil, errBadImage
	}
	im.nstrs = int(binary.LittleEndian.Uint32([]byte(strs[:4])))
	offEnd := 4 + 4*(uint64(im.nstrs)+1)
	if offEnd > uint64(len(strs)) {
		return nil, errBadImage
	}
	im.strs = strs[4:offEnd]
	im.strData = strs[offEnd:]
	for i := 0; i <= im.nstrs; i++ {
		if o := im.u32(im.strs, i); o > uint32(len(im.strData)) || (i > 0 && o < im.u32(im.strs, i-1)) {
			return nil, errBadImage
		}
	}
	if uint64(len(names)) != 8*(uint64(im.nstrs)+1) {
		return nil, errBadImage
	}
	im.names = names
	for i := 0; i <= im.nstrs; i++ {
		dOff, rOff := im.u32(names, i), im.u32(names, im.nstrs+1+i)
		if dOff > uint32(len(im.defs)) || rOff > uint32(len(im.refs)) ||
			(i > 0 && (dOff < im.u32(names, i-1) || rOff < im.u32(names, im.nstrs+i))) {
			return nil, errBadImage
		}
	}
	// the files, in path order
	fd := &decoder{s: files}
	n := fd.count()
	im.files = make([]*File, 0, n)
	im.locs = make([]blobLoc, 0, n)
	slab := make([]File, n) // one allocation for the headers, not one each
	var imports []Import
	for i := 0; i < n && !fd.bad; i++ {
		f := &slab[i]
		f.img, f.idx = im, uint32(i)
		f.Path = fd.str()
		f.Lang = Lang(fd.uint())
		f.Size = fd.int()
		f.ModTime = fd.int()
		f.Hash = fd.fixed64()
		f.Package = fd.str()
		f.Err = fd.str()
		if k := fd.count(); k > 0 {
			if len(imports)+k > cap(imports) {
				imports = make([]Import, 0, max(k, 4096))
			}
			f.Imports = imports[len(imports) : len(imports)+k : len(imports)+k]
			imports = imports[:len(imports)+k]
			for j := range f.Imports {
				f.Imports[j] = Import{Path: fd.str(), Name: fd.str(), Line: fd.u32()}
			}
		}
		loc := blobLoc{off: int64(fd.uint()), n: fd.u32(), crc: fd.fixed32()}
		f.nsyms, f.nnames, f.nrefs = fd.u32(), fd.u32(), fd.u32()
		if fd.bad || loc.off < int64(len(imageMagic)) || loc.off+int64(loc.n) > sumOff ||
			(i > 0 && f.Path <= im.files[i-1].Path) || f.Path == "" {
			return nil, errBadImage
		}
		f.dir = dirOf(f.Path)
		im.files = append(im.files, f)
		im.locs = append(im.locs, loc)
	}
	if fd.bad || fd.i != len(fd.s) {
		return nil, errBadImage
	}
	md := &decoder{s: modules}
	im.modules = map[string]string{}
	for k := md.count(); k > 0 && !md.bad; k-- {
		dir := md.str()
		im.modules[dir] = md.str()
	}
	if md.bad || md.i != len(md.s) {
		return nil, errBadImage
	}
	im.dead = make([]bool, len(im.files))
	im.sumOff = sumOff
	_ = size
	return im, nil
}

// dirOf is path.Dir(p), without path.Clean's pass for a path the walks
// make (relative, clean): a start takes the directory of every file.
func dirOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 || p[0] == '.' || strings.Contains(p, "/.") || strings.Contains(p, "//") {
		return path.Dir(p)
	}
	return p[:i]
}

// u32 is the i-th little-endian uint32 of s.
func (im *image) u32(s string, i int) uint32 {
	return binary.LittleEndian.Uint32(unsafe.Slice(unsafe.StringData(s[4*i:]), 4))
}

// str is the string of id i.
func (im *image) str(i int) string {
	return im.strData[im.u32(im.strs, i):im.u32(im.strs, i+1)]
}

// lookup returns the id of name, or -1.
func (im *image) lookup(name string) int {
	lo, hi := 0, im.nstrs
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if im.str(m) < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < im.nstrs && im.str(lo) == name {
		return lo
	}
	return -1
}

// eachDef calls fn with each definition of the name of id that the graph
// still holds. A damaged entry ends the list.
func (im *image) eachDef(id int, fn func(f *File, sym int32, kind Kind, container string)) {
	d := &decoder{s: im.defs[im.u32(im.names, id):im.u32(im.names, id+1)]}
	file := uint64(0)
	for d.i < len(d.s) {
		file += d.uint()
		sym, kind, cont := d.uint(), Kind(d.uint()), d.uint()
		if d.bad || file >= uint64(len(im.files)) || sym >= uint64(im.files[file].nsyms) || cont > uint64(im.nstrs) {
			return
		}
		if im.dead[file] {
			continue
		}
		c := ""
		if cont > 0 {
			c = im.str(int(cont - 1))
		}
		fn(im.files[file], int32(sym), kind, c)
	}
}

// eachReferrer calls fn with each file the graph still holds that refers
// to the name of id.
func (im *image) eachReferrer(id int, fn func(f *File)) {
	base := im.nstrs + 1
	d := &decoder{s: im.refs[im.u32(im.names, base+id):im.u32(im.names, base+id+1)]}
	file := uint64(0)
	for d.i < len(d.s) {
		file += d.uint()
		if d.bad || file >= uint64(len(im.files)) {
			return
		}
		if !im.dead[file] {
			fn(im.files[file])
		}
	}
}

// blob reads the detail of file i, checked against its CRC. Its bytes are
// its own (or the image's, when read whole), never written again.
func (im *image) blob(i uint32) (string, error) {
	loc := im.locs[i]
	if im.data != nil {
		b := im.data[loc.off : loc.off+int64(loc.n)]
		if crc32.Checksum(b, castagnoli) != loc.crc {
			return "", errBadDetail
		}
		return unsafe.String(unsafe.SliceData(b), len(b)), nil
	}
	b := make([]byte, loc.n)
	if _, err := im.f.ReadAt(b, loc.off); err != nil {
		return "", fmt.Errorf("read the stored code graph: %w", err)
	}
	if crc32.Checksum(b, castagnoli) != loc.crc {
		return "", errBadDetail
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// broken reports a file whose detail could not be read.
func (im *image) broken(f *File, err error) {
	im.mu.Lock()
	fn := im.onBroken
	im.mu.Unlock()
	if fn != nil {
		fn(f, err)
	}
}

// imageWriter writes an image in a stream: add each file, then finish.
// It keeps the files' headers and the index entries, not their details.
type imageWriter struct {
	p   *fsutil.Pending
	w   *bufio.Writer
	off int64
	err error

	strs  map[string]uint32 // interned names, by order of meeting
	list  []string
	defs  []defEntry
	refs  []refEntry
	files []fileEntry
	seen  map[uint32]bool // the names of the file being added

	// The files copied from stored graphs (copy): by image, each of its
	// files' number in this one (or -1); their index entries are taken
	// from the image's indexes by name when the image is finished.
	copied map[*image][]int32
	reader map[*image]*blobReader
	nsyms  int // the definitions of the files copied
}

type defEntry struct {
	name, file, sym, cont uint32 // cont: container+1, 0 for none
	kind                  Kind
}

type refEntry struct{ name, file uint32 }

type fileEntry struct {
	path, pkg, err       string
	lang                 Lang
	size, mtime          int64
	hash                 uint64
	imports              []Import
	loc                  blobLoc
	nsyms, nnames, nrefs uint32
}

// newImageWriter starts the image at path (made with its directories,
// the user's alone).
func newImageWriter(path string) (*imageWriter, error) {
	p, err := fsutil.Create(path, fsutil.WriteOptions{Perm: 0o600, MkdirAll: true, DirPerm: 0o700})
	if err != nil {
		return nil, fmt.Errorf("store the code graph: %w", err)
	}
	w := &imageWriter{p: p, w: bufio.NewWriterSize(p, 256<<10), strs: map[string]uint32{}, seen: map[uint32]bool{}}
	w.write([]byte(imageMagic))
	return w, nil
}

func (w *imageWriter) write(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(b)
	w.off += int64(n)
	w.err = err
}

func (w *imageWriter) intern(s string) uint32 {
	if id, ok := w.strs[s]; ok {
		return id
	}
	id := uint32(len(w.list))
	s = strings.Clone(s) // not the blob's bytes: the blob is dropped
	w.strs[s] = id
	w.list = append(w.list, s)
	return id
}

// add writes file f with the detail blob (f's own, or read from its
// image by the caller).
func (w *imageWriter) add(f *File, blob string) error {
	if w.err != nil {
		return w.err
	}
	d, err := decodeDetail(blob)
	if err != nil {
		return err
	}
	file := uint32(len(w.files))
	for i := range d.syms {
		s := &d.syms[i]
		cont := uint32(0)
		if s.Container != "" {
			cont = w.intern(s.Container) + 1
		}
		w.defs = append(w.defs, defEntry{name: w.intern(s.Name), file: file, sym: uint32(i), cont: cont, kind: s.Kind})
	}
	clear(w.seen)
	for _, n := range d.names {
		id := w.intern(n)
		if !w.seen[id] {
			w.seen[id] = true
			w.refs = append(w.refs, refEntry{name: id, file: file})
		}
	}
	e := fileEntry{path: f.Path, pkg: f.Package, err: f.Err, lang: f.Lang, size: f.Size, mtime: f.ModTime, hash: f.Hash,
		imports: f.Imports, nsyms: uint32(len(d.syms)), nnames: uint32(len(d.names)), nrefs: uint32(len(d.refs))}
	if uint64(len(blob)) > 1<<32-1 {
		w.err = fmt.Errorf("%s has a detail too large to store", f.Path)
		return w.err
	}
	e.loc = blobLoc{off: w.off, n: uint32(len(blob)), crc: crc32.Checksum(unsafe.Slice(unsafe.StringData(blob), len(blob)), castagnoli)}
	if blob != "" {
		w.write(unsafe.Slice(unsafe.StringData(blob), len(blob)))
	}
	w.files = append(w.files, e)
	return w.err
}

// copy writes file f of a stored graph, its detail's bytes as they are
// stored: neither read into a detail nor indexed again (finish takes its
// index entries from its image's). A detail that does not check out is
// errBadDetail.
func (w *imageWriter) copy(f *File) error {
	if w.err != nil {
		return w.err
	}
	im := f.img
	if w.reader[im] == nil {
		if w.copied == nil {
			w.copied, w.reader = map[*image][]int32{}, map[*image]*blobReader{}
		}
		nums := make([]int32, len(im.files))
		for i := range nums {
			nums[i] = -1
		}
		w.copied[im], w.reader[im] = nums, &blobReader{im: im}
	}
	blob, err := w.reader[im].blob(f.idx)
	if err != nil {
		return err
	}
	loc := im.locs[f.idx]
	e := fileEntry{path: f.Path, pkg: f.Package, err: f.Err, lang: f.Lang, size: f.Size, mtime: f.ModTime, hash: f.Hash,
		imports: f.Imports, nsyms: f.nsyms, nnames: f.nnames, nrefs: f.nrefs,
		loc: blobLoc{off: w.off, n: loc.n, crc: loc.crc}}
	w.write(blob)
	w.copied[im][f.idx] = int32(len(w.files))
	w.nsyms += int(f.nsyms)
	w.files = append(w.files, e)
	return w.err
}

// takeEntries adds the index entries of the files copied from im: its
// indexes by name, read once in a stream, each name interned once.
func (w *imageWriter) takeEntries(im *image, nums []int32) {
	ids := make([]uint32, im.nstrs) // the string's id here + 1, or 0
	intern := func(s int) uint32 {
		if ids[s] == 0 {
			ids[s] = w.intern(im.str(s)) + 1
		}
		return ids[s] - 1
	}
	base := im.nstrs + 1
	for s := 0; s < im.nstrs; s++ {
		d := &decoder{s: im.defs[im.u32(im.names, s):im.u32(im.names, s+1)]}
		file := uint64(0)
		for d.i < len(d.s) {
			file += d.uint()
			sym, kind, cont := d.uint(), Kind(d.uint()), d.uint()
			if d.bad || file >= uint64(len(nums)) || sym >= uint64(im.files[file].nsyms) || cont > uint64(im.nstrs) {
				break // as eachDef: a damaged entry ends the name's list
			}
			if nums[file] < 0 {
				continue
			}
			c := uint32(0)
			if cont > 0 {
				c = intern(int(cont-1)) + 1
			}
			w.defs = append(w.defs, defEntry{name: intern(s), file: uint32(nums[file]), sym: uint32(sym), cont: c, kind: kind})
		}
		r := &decoder{s: im.refs[im.u32(im.names, base+s):im.u32(im.names, base+s+1)]}
		file = 0
		for r.i < len(r.s) {
			file += r.uint()
			if r.bad || file >= uint64(len(nums)) {
				break
			}
			if nums[file] >= 0 {
				w.refs = append(w.refs, refEntry{name: intern(s), file: uint32(nums[file])})
			}
		}
	}
}

// blobReader reads the details of an image's files for a store, which
// asks for them in path order: where they lie in that order on the disk
// too (as a store writes them), one read gives many.
type blobReader struct {
	im  *image
	buf []byte
	off int64 // of buf in the image
}

const blobReadAhead = 1 << 20

func (r *blobReader) blob(i uint32) ([]byte, error) {
	im := r.im
	loc := im.locs[i]
	var b []byte
	switch {
	case im.data != nil:
		b = im.data[loc.off : loc.off+int64(loc.n)]
	case loc.off >= r.off && loc.off+int64(loc.n) <= r.off+int64(len(r.buf)):
		b = r.buf[loc.off-r.off : loc.off-r.off+int64(loc.n)]
	default:
		// the blob, and those of the next files where they follow it on
		// the disk, up to blobReadAhead
		n := int64(loc.n)
		for j := int(i) + 1; j < len(im.locs) && im.locs[j].off == loc.off+n && n+int64(im.locs[j].n) <= blobReadAhead; j++ {
			n += int64(im.locs[j].n)
		}
		if int64(cap(r.buf)) < n {
			r.buf = make([]byte, n)
		}
		r.buf = r.buf[:n]
		if _, err := im.f.ReadAt(r.buf, loc.off); err != nil {
			r.buf = r.buf[:0]
			return nil, fmt.Errorf("read the stored code graph: %w", err)
		}
		r.off = loc.off
		b = r.buf[:loc.n]
	}
	if crc32.Checksum(b, castagnoli) != loc.crc {
		return nil, errBadDetail
	}
	return b, nil
}

// abort drops the image being written.
func (w *imageWriter) abort() { w.p.Abort() }

// finish writes the summary and puts the image in place, and returns it
// opened for reading (the file written, whoever replaces it since).
func (w *imageWriter) finish(modules map[string]string, inMemory int64) (*image, error) {
	defer w.p.Abort()
	if w.err != nil {
		return nil, fmt.Errorf("store the code graph: %w", w.err)
	}
	w.defs = slices.Grow(w.defs, w.nsyms)
	for im, nums := range w.copied {
		w.takeEntries(im, nums)
	}
	w.copied, w.reader = nil, nil
	// The files in path order, the strings sorted: the entries refer to
	// both by their new numbers.
	fileOrder := make([]uint32, len(w.files))
	for i := range fileOrder {
		fileOrder[i] = uint32(i)
	}
	slices.SortFunc(fileOrder, func(a, b uint32) int { return strings.Compare(w.files[a].path, w.files[b].path) })
	fileNum := make([]uint32, len(w.files))
	for n, old := range fileOrder {
		fileNum[old] = uint32(n)
	}
	strOrder := make([]uint32, len(w.list))
	for i := range strOrder {
		strOrder[i] = uint32(i)
	}
	slices.SortFunc(strOrder, func(a, b uint32) int { return strings.Compare(w.list[a], w.list[b]) })
	strNum := make([]uint32, len(w.list))
	for n, old := range strOrder {
		strNum[old] = uint32(n)
	}
	w.strs = nil
	for i := range w.defs {
		e := &w.defs[i]
		e.name, e.file = strNum[e.name], fileNum[e.file]
		if e.cont > 0 {
			e.cont = strNum[e.cont-1] + 1
		}
	}
	w.defs = sortByName(w.defs, len(w.list), func(e *defEntry) uint32 { return e.name }, func(a, b defEntry) int {
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.sym, b.sym))
	})
	for i := range w.refs {
		e := &w.refs[i]
		e.name, e.file = strNum[e.name], fileNum[e.file]
	}
	w.refs = sortByName(w.refs, len(w.list), func(e *refEntry) uint32 { return e.name }, func(a, b refEntry) int { return cmp.Compare(a.file, b.file) })
	if len(w.list) > 1<<31 || len(w.files) > 1<<31 {
		return nil, errors.New("store the code graph: too many names or files")
	}

	sumOff := w.off
	crc := crc32.New(castagnoli)
	sec := &sectionWriter{w: w, crc: crc}

	// strings
	var e encoder
	e.u32(uint32(len(w.list)))
	o := uint64(0)
	for _, id := range strOrder {
		e.u32(uint32(o))
		o += uint64(len(w.list[id]))
		if o > 1<<32-1 {
			return nil, errors.New("store the code graph: too many names")
		}
	}
	e.u32(uint32(o))
	sec.begin(uint64(len(e.b)) + o)
	sec.put(e.b)
	for _, id := range strOrder {
		sec.put([]byte(w.list[id]))
	}
	w.list = nil

	// the entries, encoded, and their offsets by name
	nstr := len(strOrder)
	defOffs := make([]uint32, nstr+1)
	refOffs := make([]uint32, nstr+1)
	for i := range defOffs {
		defOffs[i], refOffs[i] = noEntries, noEntries
	}
	var defs encoder
	for i := 0; i < len(w.defs); {
		name := w.defs[i].name
		defOffs[name] = uint32(len(defs.b))
		prev := uint32(0)
		for ; i < len(w.defs) && w.defs[i].name == name; i++ {
			x := &w.defs[i]
			defs.uint(uint64(x.file - prev))
			prev = x.file
			defs.uint(uint64(x.sym))
			defs.uint(uint64(x.kind))
			defs.uint(uint64(x.cont))
		}
	}
	w.defs = nil
	var refs encoder
	for i := 0; i < len(w.refs); {
		name := w.refs[i].name
		refOffs[name] = uint32(len(refs.b))
		prev := uint32(0)
		for ; i < len(w.refs) && w.refs[i].name == name; i++ {
			refs.uint(uint64(w.refs[i].file - prev))
			prev = w.refs[i].file
		}
	}
	w.refs = nil
	if uint64(len(defs.b)) > 1<<32-2 || uint64(len(refs.b)) > 1<<32-2 {
		return nil, errors.New("store the code graph: too many definitions or references")
	}
	fixOffsets(defOffs, len(defs.b))
	fixOffsets(refOffs, len(refs.b))
	var names encoder
	for _, v := range defOffs {
		names.u32(v)
	}
	for _, v := range refOffs {
		names.u32(v)
	}
	sec.begin(uint64(len(names.b)))
	sec.put(names.b)
	sec.begin(uint64(len(defs.b)))
	sec.put(defs.b)
	sec.begin(uint64(len(refs.b)))
	sec.put(refs.b)

	// the files
	var files encoder
	files.uint(uint64(len(fileOrder)))
	for _, old := range fileOrder {
		f := &w.files[old]
		files.str(f.path)
		files.uint(uint64(f.lang))
		files.int(f.size)
		files.int(f.mtime)
		files.u64(f.hash)
		files.str(f.pkg)
		files.str(f.err)
		files.uint(uint64(len(f.imports)))
		for _, im := range f.imports {
			files.str(im.Path)
			files.str(im.Name)
			files.uint(uint64(im.Line))
		}
		files.uint(uint64(f.loc.off))
		files.uint(uint64(f.loc.n))
		files.u32(f.loc.crc)
		files.uint(uint64(f.nsyms))
		files.uint(uint64(f.nnames))
		files.uint(uint64(f.nrefs))
	}
	w.files = nil
	sec.begin(uint64(len(files.b)))
	sec.put(files.b)

	// the modules
	dirs := make([]string, 0, len(modules))
	for d := range modules {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	var mods encoder
	mods.uint(uint64(len(dirs)))
	for _, d := range dirs {
		mods.str(d)
		mods.str(modules[d])
	}
	sec.begin(uint64(len(mods.b)))
	sec.put(mods.b)

	var foot encoder
	foot.u64(uint64(sumOff))
	foot.u32(crc.Sum32())
	foot.u32(imageVersion)
	foot.b = append(foot.b, imageTail...)
	w.write(foot.b)
	if w.err == nil {
		w.err = w.w.Flush()
	}
	if w.err != nil {
		return nil, fmt.Errorf("store the code graph: %w", w.err)
	}
	// Open what was written before it is put in place: the image read is
	// this one, whoever replaces the file afterwards.
	rf, err := openShared(w.p.Name())
	if err != nil {
		return nil, fmt.Errorf("store the code graph: %w", err)
	}
	if err := w.p.Commit(); err != nil {
		rf.Close()
		return nil, fmt.Errorf("store the code graph: %w", err)
	}
	im, err := readImage(rf, inMemory)
	if err != nil || im.f == nil {
		rf.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("store the code graph: read it back: %w", err)
	}
	return im, nil
}

// sortByName sorts index entries by name (of nnames), then by within: a
// counting sort by name (stable), then each name's entries sorted where
// they are not already, which they mostly are (each file's entries are
// made in file order, and those copied from a stored graph come in it).
func sortByName[E any](entries []E, nnames int, name func(*E) uint32, within func(a, b E) int) []E {
	starts := make([]int, nnames+1)
	for i := range entries {
		starts[name(&entries[i])+1]++
	}
	for i := 1; i <= nnames; i++ {
		starts[i] += starts[i-1]
	}
	out := make([]E, len(entries))
	at := slices.Clone(starts[:nnames])
	for i := range entries {
		n := name(&entries[i])
		out[at[n]] = entries[i]
		at[n]++
	}
	for n := 0; n < nnames; n++ {
		group := out[starts[n]:starts[n+1]]
		if !slices.IsSortedFunc(group, within) {
			slices.SortFunc(group, within)
		}
	}
	return out
}

// noEntries marks the offset of a name without entries until fixOffsets.
const noEntries = 1<<32 - 1

// fixOffsets gives the names without entries the offset of the next name
// (the last one, end), so that every name's entries are the bytes between
// its offset and the next one's.
func fixOffsets(offs []uint32, end int) {
	offs[len(offs)-1] = uint32(end)
	for i := len(offs) - 2; i >= 0; i-- {
		if offs[i] == noEntries {
			offs[i] = offs[i+1]
		}
	}
}

// sectionWriter writes the summary's sections, summing them.
type sectionWriter struct {
	w   *imageWriter
	crc hash.Hash32
}

func (s *sectionWriter) begin(n uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], n)
	s.put(b[:])
}

func (s *sectionWriter) put(b []byte) {
	s.crc.Write(b)
	s.w.write(b)
}
