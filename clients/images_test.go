package clients

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// A PNG of one pixel.
var pixel, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

// withImages is a conversation whose user message carries an image and
// whose tool result carries another (an MCP tool's).
func withImages() *Request {
	req := conversation()
	req.Messages[0].Images = []Image{{MimeType: "image/png", Data: pixel, Name: "shot.png"}}
	req.Messages[2].ToolResults[0].Images = []Image{{MimeType: "image/png", Data: pixel}}
	return req
}

// messagesOf are the messages of a request body, as JSON values.
func messagesOf(t *testing.T, body map[string]any) []map[string]any {
	t.Helper()
	raw, _ := json.Marshal(body["messages"])
	var out []map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestOpenAISendsImagesAsDataURLParts(t *testing.T) {
	pc := providers[0]
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, pc.text)(w) })
	if _, err := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil)).Complete(context.Background(), withImages(), nil); err != nil {
		t.Fatal(err)
	}
	msgs := messagesOf(t, fp.request(0).Body)
	t.Run("the user message is its text, then an image_url part with the image as a data URL", func(t *testing.T) {
		want := `[{"text":"Add a greet function","type":"text"},{"image_url":{"url":"data:image/png;base64,` + base64.StdEncoding.EncodeToString(pixel) + `"},"type":"image_url"}]`
		if got := jsonOf(msgs[1]["content"]); got != want {
			t.Errorf("content = %s\nwant      %s", got, want)
		}
	})
	t.Run("a tool result keeps its text and says its image is not shown", func(t *testing.T) {
		tool := msgs[3]
		if tool["role"] != "tool" || tool["content"] != "main.go\n\n"+imagesNotShown(1) {
			t.Errorf("tool message = %s", jsonOf(tool))
		}
	})
}

func TestAnthropicSendsImageBlocks(t *testing.T) {
	pc := providers[1]
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, pc.text)(w) })
	if _, err := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil)).Complete(context.Background(), withImages(), nil); err != nil {
		t.Fatal(err)
	}
	msgs := messagesOf(t, fp.request(0).Body)
	image := `{"source":{"data":"` + base64.StdEncoding.EncodeToString(pixel) + `","media_type":"image/png","type":"base64"},"type":"image"}`
	t.Run("the user message is its text block, then an image block with a base64 source", func(t *testing.T) {
		// (The message is the first of the two last turns of the user's
		// side: its last block is a cache breakpoint.)
		want := `[{"text":"Add a greet function","type":"text"},{"cache_control":{"type":"ephemeral"},` + image[1:] + `]`
		if got := jsonOf(msgs[0]["content"]); got != want {
			t.Errorf("content = %s\nwant      %s", got, want)
		}
	})
	t.Run("a tool result holds its text block and its image block", func(t *testing.T) {
		want := `[{"cache_control":{"type":"ephemeral"},"content":[{"text":"main.go","type":"text"},` + image + `],"is_error":false,"tool_use_id":"call_1","type":"tool_result"}]`
		if got := jsonOf(msgs[2]["content"]); got != want {
			t.Errorf("content = %s\nwant      %s", got, want)
		}
	})
}

// ollamaImages reads a chat request's images as Ollama's
// OpenAI-compatible endpoint does (openai.FromChatRequest): each
// image_url part must be a data URL of a jpeg, jpg, png or webp, whose
// bytes become the message's images; anything else is "invalid image
// input".
func ollamaImages(body map[string]any) ([][]byte, error) {
	var out [][]byte
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		parts, ok := m.(map[string]any)["content"].([]any)
		if !ok {
			continue
		}
		for _, p := range parts {
			part := p.(map[string]any)
			if part["type"] != "image_url" {
				continue
			}
			url, _ := part["image_url"].(map[string]any)["url"].(string)
			valid := false
			for _, typ := range []string{"jpeg", "jpg", "png", "webp"} {
				if prefix := "data:image/" + typ + ";base64,"; strings.HasPrefix(url, prefix) {
					url, valid = strings.TrimPrefix(url, prefix), true
					break
				}
			}
			if !valid {
				return nil, errors.New("invalid image input")
			}
			img, err := base64.StdEncoding.DecodeString(url)
			if err != nil {
				return nil, errors.New("invalid message format")
			}
			out = append(out, img)
		}
	}
	return out, nil
}

func TestOllamaGetsImagesItTurnsIntoTheMessagesImages(t *testing.T) {
	var got [][]byte
	var gotErr error
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "ollama_stream_tools.sse")(w) })
	m, err := Resolve("ollama:llava:7b", envOf(map[string]string{"OLLAMA_HOST": fp.srv.URL}), testOptions(&sleeps{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Complete(context.Background(), withImages(), nil); err != nil {
		t.Fatal(err)
	}
	got, gotErr = ollamaImages(fp.request(0).Body)
	if gotErr != nil || len(got) != 1 || string(got[0]) != string(pixel) {
		t.Errorf("Ollama reads the images as %d images (%v); want the one image of the user message", len(got), gotErr)
	}
}

func TestCheckImage(t *testing.T) {
	cases := []struct {
		name, spec, mime string
		says             string // "" when taken
	}{
		{"OpenAI takes a gif", "openai:gpt-4.1", "image/gif", ""},
		{"Anthropic takes a webp", "anthropic:claude-sonnet-4-5", "image/webp", ""},
		{"the scripted model takes a jpeg", "script:/w/s.json", "image/jpeg", ""},
		{"Ollama takes a png", "ollama:llava:7b", "image/png", ""},
		{"Ollama refuses a gif, which its endpoint calls invalid", "ollama:llava:7b", "image/gif", "Ollama takes image/png, image/jpeg, image/webp images, not image/gif"},
		{"no provider takes a bmp", "openai:gpt-4.1", "image/bmp", "image/bmp is not an image type models take"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckImage(c.spec, c.mime)
			if c.says == "" && err != nil || c.says != "" && (err == nil || !strings.Contains(err.Error(), c.says)) {
				t.Errorf("CheckImage(%q, %q) = %v, want %q", c.spec, c.mime, err, c.says)
			}
		})
	}
}

func TestScriptSeesTheImagesItIsGiven(t *testing.T) {
	s, err := ParseScript([]byte(`{"agents": {"1": [{"text": "a screenshot"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Complete(context.Background(), withImages(), nil); err != nil {
		t.Fatal(err)
	}
	seen := s.Seen()
	if len(seen) != 1 || seen[0].Agent != "1" || len(seen[0].Images) != 2 || seen[0].Images[0].Name != "shot.png" {
		t.Errorf("seen = %+v", seen)
	}
}
