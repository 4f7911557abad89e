package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// render turns a tool's result into the text the model is given, and its
// images:
//
//   - text content as it is;
//   - an image as a line naming it, its type and size ("[image 1:
//     image/png, 70 bytes]"), its bytes in Result.Images: the models whose
//     tool results take images get it after the text (docs/MODELS.md);
//   - audio as a line naming its type and size (the bytes do not reach the
//     model);
//   - a resource link as its name, URI, type and description;
//   - an embedded resource as its URI and type, then its text (a binary
//     one as its size);
//   - structured content as JSON after the rest, unless a text content
//     already holds the same JSON (servers are asked to send both).
//
// Parts are separated by a blank line.
func render(res *sdk.CallToolResult) Result {
	var parts []string
	var images []Image
	texts := map[string]bool{}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
			if res.StructuredContent != nil {
				texts[compactJSON(c.Text)] = true
			}
		case *sdk.ImageContent:
			images = append(images, Image{MIMEType: c.MIMEType, Data: c.Data})
			parts = append(parts, fmt.Sprintf("[image %d: %s, %d bytes]", len(images), orUnknown(c.MIMEType), len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes; not played: tool results reach the model as text]", orUnknown(c.MIMEType), len(c.Data)))
		case *sdk.ResourceLink:
			line := "[resource link: " + c.URI
			if c.Name != "" {
				line += " (" + c.Name + ")"
			}
			if c.MIMEType != "" {
				line += ", " + c.MIMEType
			}
			line += "]"
			if c.Description != "" {
				line += " " + c.Description
			}
			parts = append(parts, line)
		case *sdk.EmbeddedResource:
			r := c.Resource
			if r == nil {
				continue
			}
			head := "[resource: " + r.URI
			if r.MIMEType != "" {
				head += ", " + r.MIMEType
			}
			if r.Text != "" || len(r.Blob) == 0 {
				parts = append(parts, head+"]\n"+r.Text)
			} else {
				parts = append(parts, fmt.Sprintf("%s, %d bytes of binary data; not shown]", head, len(r.Blob)))
			}
		default:
			if b, err := json.Marshal(c); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil && !texts[compactJSON(string(b))] {
			if c := compactJSON(string(b)); c != "" {
				b = []byte(c)
			}
			parts = append(parts, "Structured content:\n"+string(b))
		}
	}
	text := strings.Join(parts, "\n\n")
	if strings.TrimSpace(text) == "" {
		text = "(the tool returned no content)"
	}
	return Result{Text: text, IsError: res.IsError, Images: images}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "of unknown type"
	}
	return mime
}

// compactJSON is s in a canonical JSON form (no insignificant space, object
// keys sorted) when it is a JSON object or array, else "".
func compactJSON(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return ""
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
