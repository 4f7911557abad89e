package api

import "math"

// AttachmentType is what an attachment of agent/run is (docs/PROTOCOL.md
// §3, Attachments): AttachFile or AttachImage.
type AttachmentType = string

// The attachment types.
const (
	AttachFile  AttachmentType = "file"
	AttachImage AttachmentType = "image"
)

// Attachment is one thing the user gives a run besides its prompt: a
// file of the workspace (all of it, or the lines of Range), or an image
// (the bytes in Data, or an image file of the workspace at Path or URI).
type Attachment struct {
	Type AttachmentType `json:"type"`
	// Path (workspace-relative or absolute) or URI (file://) names the
	// file; one of them, for a file and for an image that is not Data.
	Path string `json:"path,omitempty"`
	URI  string `json:"uri,omitempty"`
	// Range is the part of a file attached: its lines, whole (an end at
	// character 0 leaves that line out). Nil: the whole file.
	Range *Range `json:"range,omitempty"`
	// Data is an image's bytes in base64 (standard encoding), with its
	// MimeType: image/png, image/jpeg, image/gif or image/webp.
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	// Name is what the model and the session call an image given as Data
	// (e.g. "screenshot.png"); a file's name is its path.
	Name string `json:"name,omitempty"`
}

// ImageTypes are the image types an attachment may have: those every
// provider of docs/MODELS.md takes (Ollama leaves gif out).
var ImageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// TodoStatus is where a step of a worker's checklist stands: one of the
// Todo* values.
type TodoStatus = string

// The todo states.
const (
	TodoPending    TodoStatus = "pending"
	TodoInProgress TodoStatus = "in_progress"
	TodoDone       TodoStatus = "done"
)

// Todo is one step of a worker's checklist.
type Todo struct {
	Content string     `json:"content"`
	Status  TodoStatus `json:"status"`
}

// Price is what a model's tokens cost, in US dollars per million tokens,
// and the size of its context window in tokens (the prices setting,
// docs/TRACKING.md). A price without Input and Output prices nothing:
// such a model shows tokens only. CacheRead and CacheWrite default to
// Input.
type Price struct {
	Input         *float64 `json:"input,omitempty"`
	Output        *float64 `json:"output,omitempty"`
	CacheRead     *float64 `json:"cacheRead,omitempty"`
	CacheWrite    *float64 `json:"cacheWrite,omitempty"`
	ContextWindow int64    `json:"contextWindow,omitempty"`
}

// Priced reports whether the price gives a cost.
func (p Price) Priced() bool { return p.Input != nil && p.Output != nil }

// Cost is what u costs at p, in US dollars rounded to a millionth, or nil
// when p gives no cost.
func (p Price) Cost(u Usage) *float64 {
	if !p.Priced() {
		return nil
	}
	read, write := *p.Input, *p.Input
	if p.CacheRead != nil {
		read = *p.CacheRead
	}
	if p.CacheWrite != nil {
		write = *p.CacheWrite
	}
	plain := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	c := (float64(plain)**p.Input + float64(u.CacheReadTokens)*read +
		float64(u.CacheWriteTokens)*write + float64(u.OutputTokens)**p.Output) / 1e6
	return Dollars(c)
}

// Dollars rounds an amount to a millionth of a dollar, so sums print
// without binary noise.
func Dollars(c float64) *float64 {
	r := math.Round(c*1e6) / 1e6
	return &r
}

// Empty reports whether u counts no token.
func (u Usage) Empty() bool {
	return u.InputTokens == 0 && u.OutputTokens == 0 && u.CacheReadTokens == 0 && u.CacheWriteTokens == 0
}

// Plus sums u and v: tokens add up; the cost is the sum when each side
// that counts tokens has one, and absent otherwise (a part of unknown
// price leaves the whole unknown); the context is v's when v has one (the
// later call's), else u's.
func (u Usage) Plus(v Usage) Usage {
	s := Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		ContextTokens:    u.ContextTokens,
		ContextWindow:    u.ContextWindow,
	}
	if v.ContextTokens != 0 || v.ContextWindow != 0 {
		s.ContextTokens, s.ContextWindow = v.ContextTokens, v.ContextWindow
	}
	switch {
	case (u.Cost == nil && !u.Empty()) || (v.Cost == nil && !v.Empty()):
	case u.Cost == nil && v.Cost == nil:
	default:
		var c float64
		if u.Cost != nil {
			c += *u.Cost
		}
		if v.Cost != nil {
			c += *v.Cost
		}
		s.Cost = Dollars(c)
	}
	return s
}

// Total is u without its context: a sum over several agents, whose
// contexts are theirs.
func (u Usage) Total() Usage {
	u.ContextTokens, u.ContextWindow = 0, 0
	return u
}
