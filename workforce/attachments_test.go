package workforce

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/internal/testkit"
)

var onePixel, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

func TestAttachments(t *testing.T) {
	const key = "sk-attach-0123456789abcdef"
	m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		if req.Agent == clients.AgentCoordinator {
			return planOf(map[string]any{"id": "1", "content": "look"}, map[string]any{"id": "2", "content": "look too"}), nil
		}
		return finish("looked"), nil
	}}
	n := &fakeEvents{}
	e, _ := newEngine(t, m, n, map[string]string{"config.go": "package config\n\nconst key = \"" + key + "\"\n", "shot.png": string(onePixel)})
	red := redact.New()
	red.Add("TEST_API_KEY", key)
	e.cfg.Redactor = red
	res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "fix config.go", Attachments: []api.Attachment{
		{Type: api.AttachFile, Path: "config.go"},
		{Type: api.AttachImage, Path: "shot.png"},
	}}, settings())
	if err != nil || res.State != api.TaskDone {
		t.Fatalf("run = %+v, %v", res, err)
	}
	for _, agent := range []string{clients.AgentCoordinator, "1", "2"} {
		first := m.requests(agent)[0].Messages[0]
		t.Run(agent+" gets the file after its first message's text, secrets redacted", func(t *testing.T) {
			if !strings.Contains(first.Text, "<attachment path=\"config.go\">\npackage config\n") || strings.Contains(first.Text, key) || !strings.Contains(first.Text, "[redacted TEST_API_KEY]") {
				t.Errorf("text = %q", first.Text)
			}
		})
		t.Run(agent+" gets the image", func(t *testing.T) {
			if len(first.Images) != 1 || first.Images[0].MimeType != "image/png" || first.Images[0].Name != "shot.png" || string(first.Images[0].Data) != string(onePixel) {
				t.Errorf("images = %+v", first.Images)
			}
		})
	}
}

func TestAModelThatRefusesImagesFailsTheRunInItsWords(t *testing.T) {
	m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		return nil, &clients.Error{Kind: clients.ErrBadRequest, Message: "openai:gpt-3.5-turbo: Invalid content type. image_url is only supported by certain models."}
	}}
	e, _ := newEngine(t, m, &fakeEvents{}, nil)
	res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "look", Attachments: []api.Attachment{
		{Type: api.AttachImage, Data: base64.StdEncoding.EncodeToString(onePixel), MimeType: "image/png"},
	}}, settings())
	if err != nil {
		t.Fatal(err)
	}
	if res.State != api.TaskFailed || !strings.Contains(res.Summary, "image_url is only supported by certain models. (the request carried 1 image(s): the model may not take images)") {
		t.Errorf("result = %+v", res)
	}
}

func TestLineRange(t *testing.T) {
	text := "one\ntwo\nthree\nfour"
	pos := func(l, c uint32) api.Position { return api.Position{Line: l, Character: c} }
	cases := []struct {
		name     string
		r        api.Range
		from, to int
		part     string
		err      string
	}{
		{"takes the lines a selection covers, whole", api.Range{Start: pos(1, 2), End: pos(2, 1)}, 2, 3, "two\nthree\n", ""},
		{"leaves out the line a selection ends at the start of", api.Range{Start: pos(0, 0), End: pos(2, 0)}, 1, 2, "one\ntwo\n", ""},
		{"takes one line for an empty selection", api.Range{Start: pos(3, 0), End: pos(3, 0)}, 4, 4, "four", ""},
		{"stops at the end of the file", api.Range{Start: pos(2, 0), End: pos(99, 0)}, 3, 4, "three\nfour", ""},
		{"refuses a range that ends before it starts", api.Range{Start: pos(2, 0), End: pos(1, 0)}, 0, 0, "", "ends before it starts"},
		{"refuses a range past the end", api.Range{Start: pos(4, 0), End: pos(5, 0)}, 0, 0, "", "past the file's 4 lines"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			from, to, part, err := lineRange(text, c.r)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || from != c.from || to != c.to || part != c.part {
				t.Errorf("lineRange = %d-%d %q, %v", from, to, part, err)
			}
		})
	}
}

func TestAttachmentsOfOllamaAreNoGif(t *testing.T) {
	gif := []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
	e, _ := newEngine(t, &funcModel{}, &fakeEvents{}, nil)
	_, err := e.attach(testkit.Context(t), api.RunParams{Attachments: []api.Attachment{
		{Type: api.AttachImage, Data: base64.StdEncoding.EncodeToString(gif), MimeType: "image/gif", Name: "spin.gif"},
	}}, settings(), "ollama:llava:7b")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "spin.gif: Ollama takes image/png, image/jpeg, image/webp images, not image/gif") {
		t.Errorf("err = %v", err)
	}
}
