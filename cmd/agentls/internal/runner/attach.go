package runner

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentls/agentls/api"
)

// lineSpan is the ":12" or ":12-30" after an attached file's path.
var lineSpan = regexp.MustCompile(`:(\d+)(?:-(\d+))?$`)

// imageExts are the extensions attached as images.
var imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true}

// Attachments turns --attach values into agent/run's attachments: PATH
// (a file, or an image by its extension: png, jpg, jpeg, gif, webp), or
// PATH:L1-L2 (lines L1 to L2 of a file, 1-based, both included; PATH:L1
// is one line). A relative path is taken from the current directory; the
// server checks the rest (docs/PROTOCOL.md §3, Attachments).
func Attachments(values []string) ([]api.Attachment, error) {
	var out []api.Attachment
	for _, v := range values {
		path, from, to := v, 0, 0
		if m := lineSpan.FindStringSubmatch(v); m != nil {
			path = strings.TrimSuffix(v, m[0])
			from, _ = strconv.Atoi(m[1])
			to = from
			if m[2] != "" {
				to, _ = strconv.Atoi(m[2])
			}
			if from < 1 || to < from {
				return nil, fmt.Errorf("%q: the lines are L1-L2, from 1, L2 not before L1", v)
			}
		}
		if path == "" {
			return nil, fmt.Errorf("%q: a path is required (PATH or PATH:L1-L2)", v)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", v, err)
		}
		if imageExts[strings.ToLower(filepath.Ext(path))] {
			if from != 0 {
				return nil, fmt.Errorf("%q: an image has no lines", v)
			}
			out = append(out, api.Attachment{Type: api.AttachImage, Path: abs, Name: filepath.Base(path)})
			continue
		}
		a := api.Attachment{Type: api.AttachFile, Path: abs}
		if from != 0 {
			// An end at character 0 leaves its line out: line L2 (1-based)
			// is the last one in.
			a.Range = &api.Range{Start: api.Position{Line: uint32(from - 1)}, End: api.Position{Line: uint32(to)}}
		}
		out = append(out, a)
	}
	return out, nil
}
