package workforce

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editing"
)

// attachment is one of agent/run's attachments, read and checked
// (docs/PROTOCOL.md §3, Attachments).
type attachment struct {
	kind  string // api.AttachFile or api.AttachImage
	path  string // workspace-relative; "" for an image given as data
	name  string // what the model and the session call it
	lines string // "5-8" for a part of a file; "" for all of it
	text  string // a file's text, secrets redacted
	image *clients.Image
}

// maxReferences bounds the files a prompt is taken to name (the heat
// map's userReferenced).
const maxReferences = 20

// attach reads and checks the attachments of p for a run under s with the
// model spec: a file through the editor (its buffer), with the zones of an
// agent's read; an image from its data or from the disk, its type sniffed
// from its bytes. A refusal is an ErrInvalid error naming the attachment
// (-32602): it fails the run before it starts.
func (e *Engine) attach(ctx context.Context, p api.RunParams, s api.Settings, spec string) ([]attachment, error) {
	if len(p.Attachments) == 0 {
		return nil, nil
	}
	ws, err := editing.New(editing.Config{Root: e.cfg.Root, Zones: s.Zones, EditMode: s.EditMode, Editor: e.cfg.Editor, Logger: e.log})
	if err != nil {
		return nil, invalid("%w", err)
	}
	limits := s.Attachments
	var out []attachment
	var total int64
	for i, a := range p.Attachments {
		at, err := e.attachOne(ctx, ws, a, limits, spec)
		if err != nil {
			return nil, invalid("\"attachments\"[%d]: %w", i, err)
		}
		size := int64(len(at.text))
		if at.image != nil {
			size = int64(len(at.image.Data))
		}
		if total += size; total > limits.MaxTotalBytes {
			return nil, invalid("\"attachments\": %d bytes in all by attachments[%d], more than attachments.maxTotalBytes (%d)", total, i, limits.MaxTotalBytes)
		}
		out = append(out, at)
	}
	return out, nil
}

func (e *Engine) attachOne(ctx context.Context, ws *editing.Workspace, a api.Attachment, limits api.AttachmentLimits, spec string) (attachment, error) {
	where := a.Path
	if a.URI != "" {
		where = a.URI
	}
	if a.Path != "" && a.URI != "" {
		return attachment{}, errors.New(`give "path" or "uri", not both`)
	}
	switch a.Type {
	case api.AttachFile:
		if where == "" {
			return attachment{}, errors.New(`a file needs "path" or "uri"`)
		}
		if a.Data != "" || a.MimeType != "" {
			return attachment{}, errors.New(`a file is read from the workspace: it has no "data" or "mimeType" (attach an image as type "image")`)
		}
		return e.attachFile(ctx, ws, where, a.Range, limits)
	case api.AttachImage:
		if a.Range != nil {
			return attachment{}, errors.New(`an image has no "range"`)
		}
		return attachImage(ws, a, where, limits, spec)
	case "":
		return attachment{}, errors.New(`"type" is required: "file" or "image"`)
	}
	return attachment{}, fmt.Errorf(`"type" %q is not "file" or "image"`, a.Type)
}

// attachFile reads a text file of the workspace, or the lines of r.
func (e *Engine) attachFile(ctx context.Context, ws *editing.Workspace, where string, r *api.Range, limits api.AttachmentLimits) (attachment, error) {
	// A whole file larger than the bound is refused before it is read; a
	// range of one is cut from it, read within the workspace's own bound.
	var max int64
	if r == nil {
		max = limits.MaxFileBytes
	}
	rp, text, err := ws.UserFile(ctx, where, max)
	if err != nil {
		var big *editing.SizeError
		switch {
		case errors.Is(err, editing.ErrBinary):
			return attachment{}, fmt.Errorf("%w; attach an image as type \"image\"", err)
		case errors.As(err, &big) && r == nil:
			return attachment{}, fmt.Errorf("%s: its text is %d bytes, more than attachments.maxFileBytes (%d); attach a range of it", big.Path, big.Size, big.Max)
		}
		return attachment{}, err
	}
	at := attachment{kind: api.AttachFile, path: rp.Rel, name: rp.Rel}
	if r != nil {
		from, to, part, err := lineRange(text, *r)
		if err != nil {
			return attachment{}, fmt.Errorf("%s: %w", rp.Rel, err)
		}
		at.lines, text = fmt.Sprintf("%d-%d", from, to), part
	}
	if n := int64(len(text)); n > limits.MaxFileBytes {
		what := "its text is"
		if r != nil {
			what = "the lines attached are"
		}
		return attachment{}, fmt.Errorf("%s: %s %d bytes, more than attachments.maxFileBytes (%d); attach a range of it", rp.Rel, what, n, limits.MaxFileBytes)
	}
	at.text = e.cfg.Redactor.String(text)
	return at, nil
}

// lineRange cuts the lines of r (0-based positions, an end at character
// 0 leaving its line out) out of text, and returns them with their 1-based
// numbers.
func lineRange(text string, r api.Range) (from, to int, part string, err error) {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	start, end := int(r.Start.Line), int(r.End.Line)
	if r.End.Character == 0 && end > start {
		end--
	}
	switch {
	case r.Start.Line < 0 || r.End.Line < 0:
		return 0, 0, "", errors.New("the range has a negative line")
	case end < start || r.End.Line == r.Start.Line && r.End.Character < r.Start.Character:
		return 0, 0, "", errors.New("the range ends before it starts")
	case start >= len(lines):
		return 0, 0, "", fmt.Errorf("the range starts at line %d, past the file's %d lines", start+1, len(lines))
	}
	end = min(end, len(lines)-1)
	return start + 1, end + 1, strings.Join(lines[start:end+1], ""), nil
}

// attachImage reads an image from its data or from the workspace.
func attachImage(ws *editing.Workspace, a api.Attachment, where string, limits api.AttachmentLimits, spec string) (attachment, error) {
	at := attachment{kind: api.AttachImage, name: a.Name}
	var data []byte
	switch {
	case a.Data != "" && where != "":
		return attachment{}, errors.New(`an image is "data" or a "path" (or "uri"), not both`)
	case a.Data != "":
		if a.MimeType == "" {
			return attachment{}, errors.New(`an image given as "data" needs its "mimeType"`)
		}
		if n := base64.StdEncoding.DecodedLen(len(a.Data)); int64(n) > limits.MaxImageBytes+2 {
			return attachment{}, fmt.Errorf("the image is about %d bytes, more than attachments.maxImageBytes (%d)", n, limits.MaxImageBytes)
		}
		var err error
		if data, err = base64.StdEncoding.DecodeString(a.Data); err != nil {
			return attachment{}, fmt.Errorf(`"data" is not base64 (standard encoding, with padding): %w`, err)
		}
		if at.name == "" {
			at.name = "image"
		}
	case where != "":
		rp, bytes, err := ws.UserImage(where, limits.MaxImageBytes)
		if err != nil {
			if errors.Is(err, editing.ErrTooLarge) {
				return attachment{}, fmt.Errorf("%w (attachments.maxImageBytes)", err)
			}
			return attachment{}, err
		}
		data, at.path = bytes, rp.Rel
		if at.name == "" {
			at.name = rp.Rel
		}
	default:
		return attachment{}, errors.New(`an image needs "data" (base64, with "mimeType") or a "path" (or "uri") in the workspace`)
	}
	if int64(len(data)) > limits.MaxImageBytes {
		return attachment{}, fmt.Errorf("the image is %d bytes, more than attachments.maxImageBytes (%d)", len(data), limits.MaxImageBytes)
	}
	sniffed := http.DetectContentType(data)
	if !slices.Contains(api.ImageTypes, sniffed) {
		return attachment{}, fmt.Errorf("%s is not an image of a type models take (%s): its bytes are %s", at.name, strings.Join(api.ImageTypes, ", "), sniffed)
	}
	if a.MimeType != "" && a.MimeType != sniffed {
		return attachment{}, fmt.Errorf("%s is %s, not the %s its mimeType says", at.name, sniffed, a.MimeType)
	}
	if err := clients.CheckImage(spec, sniffed); err != nil {
		return attachment{}, fmt.Errorf("%s: %w", at.name, err)
	}
	at.image = &clients.Image{MimeType: sniffed, Data: data, Name: at.name}
	return at, nil
}

// attachedText is what the model reads of the attachments, after the
// prompt: each file with its path and lines, then a line per image (the
// images follow the text).
func attachedText(atts []attachment) string {
	if len(atts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nThe user attached these to the request:\n")
	n := 0
	for _, a := range atts {
		switch a.kind {
		case api.AttachFile:
			lines := ""
			if a.lines != "" {
				lines = fmt.Sprintf(" lines=%q", a.lines)
			}
			text := a.text
			if text != "" && !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			fmt.Fprintf(&b, "<attachment path=%q%s>\n%s</attachment>\n", a.path, lines, text)
		case api.AttachImage:
			n++
			fmt.Fprintf(&b, "<attachment image=\"%d\" name=%q type=%q bytes=\"%d\"/> (image %d follows)\n", n, a.name, a.image.MimeType, len(a.image.Data), n)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// attachedImages are the images of the attachments, in order.
func attachedImages(atts []attachment) []clients.Image {
	var out []clients.Image
	for _, a := range atts {
		if a.image != nil {
			out = append(out, *a.image)
		}
	}
	return out
}

// attachedNote is what the session records of the attachments, after the
// prompt.
func attachedNote(atts []attachment) string {
	if len(atts) == 0 {
		return ""
	}
	var parts []string
	for _, a := range atts {
		switch {
		case a.kind == api.AttachFile && a.lines != "":
			parts = append(parts, fmt.Sprintf("%s (lines %s)", a.path, a.lines))
		case a.kind == api.AttachFile:
			parts = append(parts, a.path)
		default:
			parts = append(parts, fmt.Sprintf("%s (%s, %d bytes)", a.name, a.image.MimeType, len(a.image.Data)))
		}
	}
	return "\n\nAttached: " + strings.Join(parts, ", ")
}

// userMessage is the first message of an agent: text, then what the user
// attached.
func (t *task) userMessage(text string) clients.Message {
	return clients.Message{Role: clients.RoleUser, Text: text + attachedText(t.attachments), Images: attachedImages(t.attachments)}
}

// userFiles puts what the user gave and named on tr's heat map: the files
// attached (userProvided), and the files the prompt names (userReferenced).
func (t *task) userFiles(tr interface{ Access(path, action string) }) {
	for _, p := range t.references {
		tr.Access(p, api.ActionUserReferenced)
	}
	for _, a := range t.attachments {
		if a.path != "" {
			tr.Access(a.path, api.ActionUserProvided)
		}
	}
}
