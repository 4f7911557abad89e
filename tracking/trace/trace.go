// Package trace keeps .orchestration/agent_trace.jsonl (docs/PROTOCOL.md §6): one
// JSON line per applied change, saying which intent, session, task, subtask
// and model changed which lines of which file, with the sha256 of those
// lines and of the whole new file. It also rewrites .orchestration/
// intent_map.md (intent → files) and answers agent/trace.
//
// Guarantees:
//   - every line is appended with O_APPEND, under an exclusive flock, in one
//     write, then fsynced: two sidecars on one workspace never tear or
//     interleave a line, and a line reported written survives a crash;
//   - a line torn by a crash elsewhere is skipped when reading and never
//     glued to the next line;
//   - intent_map.md is replaced atomically;
//   - the log is read incrementally (only what was appended since the last
//     read, by any process), and read again from the start when the file
//     was replaced or shortened.
//
// Beyond the fields of the protocol each line carries "lines", the new
// file's line count: it lets a query follow a line back through later
// changes that shifted it. A Log is safe for concurrent use.
package trace

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/internal/fsutil"
	"github.com/agentls/agentls/internal/redact"
)

// Places in the workspace.
const (
	Dir         = ".orchestration"
	RelPath     = ".orchestration/agent_trace.jsonl"
	MapRelPath  = ".orchestration/intent_map.md"
	timeLayout  = "2006-01-02T15:04:05.000Z07:00"
	hashPrefix  = "sha256:"
	maxLineSize = 16 << 20
)

// Enabled reports whether the trace is written for the workspace at root:
// the trace setting when it is set, else whether .orchestration/ exists.
func Enabled(root string, setting *bool) bool {
	if setting != nil {
		return *setting
	}
	st, err := os.Stat(filepath.Join(root, Dir))
	return err == nil && st.IsDir()
}

// Span is a changed line span of the new file, 1-based and inclusive.
type Span struct{ Start, End int }

// Change is one applied change, as the caller knows it after the editor
// applied it.
type Change struct {
	Path      string // workspace-relative, "/" separators
	Operation string // api.OpCreate, OpUpdate, OpDelete or OpMCP
	Content   []byte // the whole new file (nil for a delete; for OpMCP, the file after the call, nil when it is not there)
	Spans     []Span // changed lines of Content; none for a delete or a pure removal of lines
	IntentID  string // "" when no intent was selected
	SessionID string
	TaskID    string
	SubtaskID string
	Model     string
	Tool      string // the MCP tool of an OpMCP entry
}

// Options configure a Log. Zero fields take defaults.
type Options struct {
	Now        func() time.Time       // time.Now
	NewID      func() string          // 16 random bytes in hex
	IntentName func(id string) string // names for intent_map.md; may be nil
	Logger     *zap.Logger            // zap.NewNop()
	Redactor   *redact.Redactor       // takes known secrets out of what is written; nil: none
}

// Log is the trace of one workspace.
type Log struct {
	root       string
	now        func() time.Time
	newID      func() string
	intentName func(string) string
	log        *zap.Logger
	red        *redact.Redactor

	mu     sync.Mutex // the index; never held across a write
	idx    index
	mapGen uint64 // maps made from the index, under mu

	mapMu      sync.Mutex // serialises intent_map.md's rewrites
	mapWritten uint64     // the generation on disk, under mapMu
}

// record is a line as written: the protocol's entry plus the line count.
type record struct {
	api.TraceEntry
	Lines *int `json:"lines,omitempty"`
}

// Open returns the Log of the workspace at root. Nothing is read or written
// until the first Record or Query.
func Open(root string, opts Options) *Log {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewID == nil {
		opts.NewID = randomID
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	return &Log{
		root:       root,
		now:        opts.Now,
		newID:      opts.NewID,
		intentName: opts.IntentName,
		log:        opts.Logger,
		red:        opts.Redactor,
		idx:        newIndex(),
	}
}

func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// HashBytes returns the "sha256:<hex>" form the trace uses.
func HashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hashPrefix + hex.EncodeToString(sum[:])
}

// Lines splits content into its lines, each with its "\n" (the last one may
// lack it). An empty content has no lines.
func Lines(content []byte) [][]byte {
	var out [][]byte
	for len(content) > 0 {
		i := bytes.IndexByte(content, '\n')
		if i < 0 {
			out = append(out, content)
			break
		}
		out = append(out, content[:i+1])
		content = content[i+1:]
	}
	return out
}

// Entry builds the trace entry of c without writing it. A range's
// contentHash is the sha256 of its lines as they are in the file, line
// terminators included; fileHash is the sha256 of the whole new file ("" for
// a delete).
func (l *Log) Entry(c Change) (api.TraceEntry, int, error) {
	p, err := cleanPath(c.Path)
	if err != nil {
		return api.TraceEntry{}, 0, fmt.Errorf("%w: %w", ErrInvalidChange, err)
	}
	e := api.TraceEntry{
		ID: l.newID(), Time: l.now().UTC().Format(timeLayout),
		SessionID: c.SessionID, TaskID: c.TaskID, SubtaskID: c.SubtaskID, Model: c.Model,
		Path: p, Operation: c.Operation, Ranges: []api.TraceRange{},
	}
	if c.IntentID != "" {
		id := c.IntentID
		e.IntentID = &id
	}
	switch c.Operation {
	case api.OpDelete:
		if len(c.Spans) > 0 || len(c.Content) > 0 {
			return api.TraceEntry{}, 0, fmt.Errorf("%w: a delete has no content or spans", ErrInvalidChange)
		}
		return e, 0, nil
	case api.OpMCP:
		// An MCP tool named the file: which lines it changed, if any, is
		// not known; the hash says what the file was after the call.
		if len(c.Spans) > 0 || c.Tool == "" {
			return api.TraceEntry{}, 0, fmt.Errorf("%w: an mcp entry names its tool and has no spans", ErrInvalidChange)
		}
		e.Tool = c.Tool
		if c.Content != nil {
			e.FileHash = HashBytes(c.Content)
		}
		return e, 0, nil
	case api.OpCreate, api.OpUpdate:
	default:
		return api.TraceEntry{}, 0, fmt.Errorf("%w: operation %q is not create, update, delete or mcp", ErrInvalidChange, c.Operation)
	}
	lines := Lines(c.Content)
	spans := slices.Clone(c.Spans)
	slices.SortFunc(spans, func(a, b Span) int { return a.Start - b.Start })
	for i, s := range spans {
		if s.Start < 1 || s.End < s.Start || s.End > len(lines) {
			return api.TraceEntry{}, 0, fmt.Errorf("%w: span %d-%d is not within the new file's %d lines", ErrInvalidChange, s.Start, s.End, len(lines))
		}
		if i > 0 && s.Start <= spans[i-1].End {
			return api.TraceEntry{}, 0, fmt.Errorf("%w: spans %d-%d and %d-%d overlap", ErrInvalidChange, spans[i-1].Start, spans[i-1].End, s.Start, s.End)
		}
		h := sha256.New()
		for _, ln := range lines[s.Start-1 : s.End] {
			h.Write(ln)
		}
		e.Ranges = append(e.Ranges, api.TraceRange{StartLine: s.Start, EndLine: s.End, ContentHash: hashPrefix + hex.EncodeToString(h.Sum(nil))})
	}
	e.FileHash = HashBytes(c.Content)
	return e, len(lines), nil
}

// Record appends the entry of c to the trace and rewrites intent_map.md. It
// returns the entry written. When it returns nil the line is on disk and
// fsynced; a failure to rewrite the map is logged, not returned, since the
// map can be rebuilt from the trace at any later write.
func (l *Log) Record(c Change) (api.TraceEntry, error) {
	e, n, err := l.Entry(c)
	if err != nil {
		return api.TraceEntry{}, err
	}
	rec := record{TraceEntry: e}
	if c.Operation != api.OpDelete && c.Operation != api.OpMCP {
		rec.Lines = &n
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return api.TraceEntry{}, fmt.Errorf("trace: %w", err)
	}
	line = append(l.red.JSON(line), '\n')
	file, mapFile, err := l.places(true)
	if err != nil {
		return api.TraceEntry{}, fmt.Errorf("trace: %w", err)
	}
	// The append is whole and ordered by its own file lock (AppendLine):
	// the index's lock is not held across its fsync, so agent/trace and
	// other sessions' records go on meanwhile.
	if err := fsutil.AppendLine(file, line, 0o644); err != nil {
		return api.TraceEntry{}, fmt.Errorf("trace: %w", err)
	}
	l.mu.Lock()
	if err := l.refresh(); err != nil {
		l.mu.Unlock()
		l.log.Warn("trace: reading the trace back failed", zap.Error(err))
		return e, nil
	}
	l.mapGen++
	gen, m := l.mapGen, []byte(l.red.String(string(l.idx.intentMap(l.intentName))))
	l.mu.Unlock()
	l.writeMap(mapFile, gen, m)
	return e, nil
}

// writeMap replaces intent_map.md with m, made at generation gen of the
// index, unless a later generation was written already: concurrent records
// leave the newest map. Map writes are serialised by their own lock, never
// the index's.
func (l *Log) writeMap(path string, gen uint64, m []byte) {
	l.mapMu.Lock()
	defer l.mapMu.Unlock()
	if gen <= l.mapWritten {
		return
	}
	if err := fsutil.WriteAtomic(path, m, 0o644); err != nil {
		l.log.Warn("trace: intent_map.md not rewritten", zap.Error(err))
		return
	}
	l.mapWritten = gen
}

// places returns where the trace and the intent map are, after checking
// that neither, nor .orchestration, is a symlink: a repository that ships
// `.orchestration/agent_trace.jsonl -> ~/.bashrc` would have every change
// appended there. With mkdir, .orchestration is made when missing.
func (l *Log) places(mkdir bool) (file, mapFile string, err error) {
	dir, err := contain.New(l.root)
	if err != nil {
		return "", "", err
	}
	if mkdir {
		if _, err := dir.MkdirNoSymlinks(Dir, 0o755); err != nil {
			return "", "", err
		}
	}
	if file, err = dir.NoSymlinks(RelPath); err != nil {
		return "", "", err
	}
	if mapFile, err = dir.NoSymlinks(MapRelPath); err != nil {
		return "", "", err
	}
	// Nor a FIFO, which would block the append.
	for _, p := range []string{file, mapFile} {
		if _, err := contain.CheckRegular(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", "", err
		}
	}
	return file, mapFile, nil
}

// Query answers agent/trace: the entries that touched path, oldest first.
// With line (1-based, in the file as the last entry left it), only the
// entries whose ranges hold that line, following it back through the line
// shifts of later changes as far as the entries allow: a change whose spans
// do not say where lines moved (several spans around the line, a span that
// grew or shrank over it, a change without line count) ends the walk.
func (l *Log) Query(p string, line *int) (api.TraceResult, error) {
	clean, err := cleanPath(p)
	if err != nil {
		return api.TraceResult{}, fmt.Errorf("%w: path: %w", ErrInvalidQuery, err)
	}
	if line != nil && *line < 1 {
		return api.TraceResult{}, fmt.Errorf("%w: line must be 1 or more, got %d", ErrInvalidQuery, *line)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refresh(); err != nil {
		return api.TraceResult{}, fmt.Errorf("trace: %w", err)
	}
	recs := l.idx.byPath[clean]
	out := api.TraceResult{Entries: []api.TraceEntry{}}
	if line == nil {
		for _, r := range recs {
			out.Entries = append(out.Entries, r.TraceEntry)
		}
		return out, nil
	}
	for _, k := range follow(recs, *line) {
		out.Entries = append(out.Entries, recs[k].TraceEntry)
	}
	return out, nil
}

// follow returns the indexes (ascending) of the records that touched line
// cur of the version the last record left. An "mcp" record that left the
// file as the record before it left it is passed over; one after which the
// file differs may have changed the line and does not say where lines
// moved: it is a hit, and the walk ends there.
func follow(all []record, cur int) []int {
	var keep []int // indexes into all of the records the walk considers
	for k, r := range all {
		if r.Operation == api.OpMCP && len(keep) > 0 {
			if p := all[keep[len(keep)-1]]; p.Operation != api.OpDelete && p.FileHash == r.FileHash {
				continue
			}
		}
		keep = append(keep, k)
	}
	var hits []int
walk:
	for k := len(keep) - 1; k >= 0; k-- {
		r := all[keep[k]]
		if r.Operation == api.OpDelete {
			break
		}
		if r.Operation == api.OpMCP {
			hits = append(hits, keep[k])
			break
		}
		rs := r.Ranges
		in := false
		for _, rg := range rs {
			if cur >= rg.StartLine && cur <= rg.EndLine {
				in = true
			}
		}
		if in {
			hits = append(hits, keep[k])
		}
		if r.Operation == api.OpCreate || k == 0 {
			break
		}
		prev := all[keep[k-1]]
		if prev.Operation == api.OpDelete || prev.Operation == api.OpMCP || r.Lines == nil || prev.Lines == nil {
			break
		}
		// Map cur to the version before r.
		delta := *r.Lines - *prev.Lines
		switch {
		case len(rs) == 0:
			if delta != 0 {
				break walk // lines went away, the entry does not say where
			}
		case in:
			if len(rs) > 1 || delta != 0 {
				break walk // a span rewritten at another size: no old line to follow
			}
		case cur < rs[0].StartLine:
		case cur > rs[len(rs)-1].EndLine:
			cur -= delta
		default:
			break walk // between two spans: the shift is not known
		}
		if cur < 1 || cur > *prev.Lines {
			break
		}
	}
	slices.Reverse(hits)
	return hits
}

func cleanPath(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.HasPrefix(p, "/") || strings.Contains(p, `\`) {
		return "", fmt.Errorf("%q is not a workspace-relative path with / separators", p)
	}
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%q is outside the workspace", p)
	}
	return c, nil
}

// index is what has been read of the trace so far.
type index struct {
	offset  int64
	ident   os.FileInfo
	byPath  map[string][]record
	skipped int
}

func newIndex() index { return index{byPath: map[string][]record{}} }

// refresh reads what was appended since the last read; the caller holds mu.
func (l *Log) refresh() error {
	file, _, err := l.places(false)
	if err != nil {
		return err
	}
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		l.idx = newIndex()
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if l.idx.ident != nil && (!os.SameFile(l.idx.ident, st) || st.Size() < l.idx.offset) {
		l.idx = newIndex()
	}
	l.idx.ident = st
	if st.Size() == l.idx.offset {
		return nil
	}
	if _, err := f.Seek(l.idx.offset, io.SeekStart); err != nil {
		return err
	}
	data, err := io.ReadAll(io.LimitReader(f, st.Size()-l.idx.offset))
	if err != nil {
		return err
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		if len(data) > maxLineSize {
			// A torn tail this long will never complete; step over it.
			l.idx.offset += int64(len(data))
		}
		return nil
	}
	for ln := range bytes.SplitSeq(data[:end], []byte{'\n'}) {
		if len(bytes.TrimSpace(ln)) == 0 {
			continue
		}
		var r record
		if err := json.Unmarshal(ln, &r); err != nil || r.Path == "" {
			l.idx.skipped++
			l.log.Warn("trace: skipping a line that is not a trace entry", zap.Int64("near offset", l.idx.offset), zap.Error(err))
			continue
		}
		l.idx.byPath[r.Path] = append(l.idx.byPath[r.Path], r)
	}
	l.idx.offset += int64(end + 1)
	return nil
}

// intentMap renders intent_map.md from the index.
func (x *index) intentMap(name func(string) string) []byte {
	type fileState struct {
		path    string
		deleted bool
	}
	byIntent := map[string]map[string]bool{} // intent -> path -> deleted
	for p, recs := range x.byPath {
		for _, r := range recs {
			id := ""
			if r.IntentID != nil {
				id = *r.IntentID
			}
			m := byIntent[id]
			if m == nil {
				m = map[string]bool{}
				byIntent[id] = m
			}
			m[p] = recs[len(recs)-1].Operation == api.OpDelete
		}
	}
	ids := make([]string, 0, len(byIntent))
	for id := range byIntent {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b bytes.Buffer
	b.WriteString("# Intent map\n\nWhich files each intent changed, from " + RelPath + ".\nWritten by agentls after every traced change; edits here are overwritten.\n")
	for _, id := range ids {
		switch {
		case id == "":
			b.WriteString("\n## Without an intent\n\n")
		case name != nil && name(id) != "":
			fmt.Fprintf(&b, "\n## %s: %s\n\n", id, oneLine(name(id)))
		default:
			fmt.Fprintf(&b, "\n## %s\n\n", id)
		}
		files := make([]fileState, 0, len(byIntent[id]))
		for p, del := range byIntent[id] {
			files = append(files, fileState{p, del})
		}
		slices.SortFunc(files, func(a, c fileState) int { return strings.Compare(a.path, c.path) })
		for _, f := range files {
			if f.deleted {
				fmt.Fprintf(&b, "- `%s` (deleted since)\n", f.path)
			} else {
				fmt.Fprintf(&b, "- `%s`\n", f.path)
			}
		}
	}
	return b.Bytes()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
