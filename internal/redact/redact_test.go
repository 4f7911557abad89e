package redact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

const key = "sk-proj-0123456789abcdefXYZ"

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"OPENAI_API_KEY": true, "ANTHROPIC_API_KEY": true, "GITHUB_TOKEN": true, "HF_TOKEN": true,
		"AWS_SECRET_ACCESS_KEY": true, "CLIENT_SECRET": true, "DB_PASSWORD": true, "PGPASSWORD": true,
		"my_api_key": true, "STRIPE_SECRET_KEY": true, "GOOGLE_APIKEY": true, "SSH_PRIVATE_KEY": true,
		"PATH": false, "HOME": false, "MAX_TOKENS": false, "TOKEN_URL": false, "AWS_ACCESS_KEY_ID": false,
		"OPENAI_BASE_URL": false, "AGENTLS_MODEL": false, "KEYBOARD": false,
	} {
		if got := IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestString(t *testing.T) {
	r := FromEnviron([]string{
		"OPENAI_API_KEY=" + key,
		"SHORT_TOKEN=abc1234", // 7 characters: not redacted
		"PATH=/usr/bin:/bin",
		"HTTPS_PROXY=http://me:proxy-pass-42@proxy:3128",
		"NOT_AN_ENTRY",
	})
	t.Run("replaces a secret with the name of its variable", func(t *testing.T) {
		got := r.String("key is " + key + ".")
		if got != "key is [redacted OPENAI_API_KEY]." {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("leaves values shorter than MinLen and ordinary variables alone", func(t *testing.T) {
		s := "abc1234 in /usr/bin:/bin"
		if got := r.String(s); got != s {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("knows the password of a proxy URL", func(t *testing.T) {
		if got := r.String("dial proxy-pass-42"); got != "dial [redacted HTTPS_PROXY]" {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("replaces the longer of two overlapping secrets whole", func(t *testing.T) {
		r := New()
		r.Add("A_TOKEN", "abcdefgh")
		r.Add("B_TOKEN", "abcdefgh-and-more")
		if got := r.String("x abcdefgh-and-more abcdefgh"); got != "x [redacted B_TOKEN] [redacted A_TOKEN]" {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("a nil Redactor and an empty one redact nothing", func(t *testing.T) {
		var nilR *Redactor
		if nilR.String(key) != key || New().String(key) != key || nilR.Known() || New().Known() {
			t.Fatal("redacted without secrets")
		}
		if string(nilR.JSON([]byte(`"`+key+`"`))) != `"`+key+`"` {
			t.Fatal("JSON redacted without secrets")
		}
	})
}

func TestEchoes(t *testing.T) {
	r := New()
	r.Add("OPENAI_API_KEY", key)
	msg := "Incorrect API key provided: sk-proj-*************fXYZ."
	got := r.Echoes(msg)
	if strings.Contains(got, key[:8]) || strings.Contains(got, key[len(key)-4:]) {
		t.Fatalf("the masked key was left: %q", got)
	}
	if r.String(msg) != msg {
		t.Fatal("String replaced pieces of a key")
	}
}

func TestJSON(t *testing.T) {
	r := New()
	r.Add("OPENAI_API_KEY", key)
	r.Add("QUOTE_SECRET", `a"b<c>d\e`)
	r.Add("PIN_PASSWORD", "12345678")
	cases := []struct {
		name, in string
		want     string // "" when in must come back unchanged
	}{
		{"replaces inside strings", `{"text":"the key ` + key + `"}`, `{"text":"the key [redacted OPENAI_API_KEY]"}`},
		{"replaces in object keys too", `{"` + key + `":1}`, `{"[redacted OPENAI_API_KEY]":1}`},
		{"decodes escapes before matching", `{"a":"\u0073k-proj-0123456789abcdefXYZ\n"}`, `{"a":"[redacted OPENAI_API_KEY]\n"}`},
		{"matches a secret that needed escaping", `{"a":"x a\"b\u003cc\u003ed\\e"}`, `{"a":"x [redacted QUOTE_SECRET]"}`},
		{"never touches a number", `{"inputTokens":12345678,"s":"12345678"}`, `{"inputTokens":12345678,"s":"[redacted PIN_PASSWORD]"}`},
		{"leaves a document without secrets as it is", `{"a":"b\"c","n":[1,2]}`, ""},
		{"leaves an unterminated string as it is", `{"a":"` + key, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := string(r.JSON([]byte(c.in)))
			want := c.want
			if want == "" {
				want = c.in
			}
			if got != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
			if c.want != "" && !json.Valid([]byte(got)) {
				t.Fatalf("%s is not valid JSON", got)
			}
		})
	}
}

func TestValue(t *testing.T) {
	type event struct {
		Text   string          `json:"text"`
		Args   json.RawMessage `json:"args,omitempty"`
		Tokens int             `json:"tokens"`
	}
	r := New()
	r.Add("OPENAI_API_KEY", key)
	in := event{Text: "saw " + key, Args: json.RawMessage(`{"command":"echo ` + key + `"}`), Tokens: 3}
	got := Value(r, in)
	if got.Text != "saw [redacted OPENAI_API_KEY]" || string(got.Args) != `{"command":"echo [redacted OPENAI_API_KEY]"}` || got.Tokens != 3 {
		t.Fatalf("got %+v", got)
	}
	if in.Text != "saw "+key {
		t.Fatal("the original was changed")
	}
	p := &event{Text: "nothing secret"}
	if Value(r, p) != p {
		t.Fatal("a value without secrets was copied")
	}
}

func TestError(t *testing.T) {
	r := New()
	r.Add("OPENAI_API_KEY", key)
	err := r.Error(fmt.Errorf("call with %s: %w", key, context.Canceled))
	if strings.Contains(err.Error(), key) || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	plain := errors.New("nothing secret")
	if r.Error(plain) != plain || r.Error(nil) != nil {
		t.Fatal("an error without secrets was wrapped")
	}
}

type stringer struct{}

func (stringer) String() string { return "stringer " + key }

func TestCore(t *testing.T) {
	r := New()
	r.Add("OPENAI_API_KEY", key)
	var buf bytes.Buffer
	for _, enc := range []zapcore.Encoder{
		zapcore.NewConsoleEncoder(zap.NewProductionEncoderConfig()),
		zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()),
	} {
		inner := zapcore.NewCore(enc, zapcore.AddSync(&buf), zapcore.DebugLevel)
		log := zap.New(inner).WithOptions(zap.WrapCore(r.Core)).With(zap.String("with", key))
		log.Debug("message " + key)
		log.Info("fields",
			zap.String("s", key), zap.ByteString("b", []byte(key)), zap.Error(errors.New("failed: "+key)),
			zap.Stringer("st", stringer{}), zap.Any("m", map[string]any{"k": key}), zap.Strings("list", []string{"a", key}),
			zap.Int("n", 42))
		log.Named("child").Warn("child", zap.Any("nested", struct{ Cmd string }{key}))
	}
	out := buf.String()
	if strings.Contains(out, key) {
		t.Fatalf("the key is in the log:\n%s", out)
	}
	for _, want := range []string{"[redacted OPENAI_API_KEY]", `"n": 42`, "message"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
		}
	}
	t.Run("keeps the level of the wrapped core", func(t *testing.T) {
		buf.Reset()
		inner := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&buf), zapcore.InfoLevel)
		zap.New(r.Core(inner)).Debug("hidden")
		if buf.Len() != 0 {
			t.Fatalf("a debug line passed an info core: %s", buf.String())
		}
	})
}

func TestUnsetAndEnviron(t *testing.T) {
	r := FromEnviron([]string{"OPENAI_API_KEY=" + key, "GITHUB_TOKEN=ghp_0123456789", "SHORT_TOKEN=x", "PATH=/bin",
		"HTTPS_PROXY=http://me:proxy-pass-42@proxy:3128"})
	r.Add("RESOLVED_CREDENTIAL", "resolved-value-123")
	got := r.Unset([]string{"GITHUB_TOKEN"})
	want := []string{"OPENAI_API_KEY", "RESOLVED_CREDENTIAL", "SHORT_TOKEN"}
	if !slices.Equal(got, want) {
		t.Fatalf("Unset = %v, want %v (proxies stay: commands need them)", got, want)
	}
	env := Environ([]string{"OPENAI_API_KEY=" + key, "PATH=/bin", "GITHUB_TOKEN=ghp_0123456789", "SHORT_TOKEN=x"}, got)
	if !slices.Equal(env, []string{"PATH=/bin", "GITHUB_TOKEN=ghp_0123456789"}) {
		t.Fatalf("Environ = %v", env)
	}
	var nilR *Redactor
	if nilR.Unset(nil) != nil {
		t.Fatal("a nil Redactor unsets variables")
	}
}

func TestConcurrentUse(t *testing.T) {
	r := New()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			r.Add(fmt.Sprintf("K%d_TOKEN", i), fmt.Sprintf("value-%d-0123456789", i))
		}()
		go func() {
			defer wg.Done()
			_ = r.String("text value-1-0123456789")
			_ = r.JSON([]byte(`{"a":"value-2-0123456789"}`))
			_ = r.Unset(nil)
		}()
	}
	wg.Wait()
	if got := r.String("value-7-0123456789"); got != "[redacted K7_TOKEN]" {
		t.Fatalf("got %q", got)
	}
}

func TestStream(t *testing.T) {
	r := New()
	r.Add("OPENAI_API_KEY", key)
	t.Run("replaces a secret split across pieces, and never shows a piece of it", func(t *testing.T) {
		s := r.Stream()
		var shown []string
		for _, piece := range []string{"the key is sk-pr", "oj-0123456789", "abcdefXYZ and s", "o on"} {
			shown = append(shown, s.Write(piece))
		}
		shown = append(shown, s.Flush())
		if got := strings.Join(shown, ""); got != "the key is [redacted OPENAI_API_KEY] and so on" {
			t.Fatalf("got %q", got)
		}
		for _, p := range shown {
			if strings.Contains(p, "sk-pr") || strings.Contains(p, "0123456789") {
				t.Fatalf("a piece of the key was shown: %q", shown)
			}
		}
	})
	t.Run("gives back what it held when the text ends", func(t *testing.T) {
		s := r.Stream()
		if got := s.Write("ends with sk"); got != "ends with " {
			t.Fatalf("got %q", got)
		}
		if got := s.Flush(); got != "sk" {
			t.Fatalf("flushed %q", got)
		}
	})
	t.Run("drops what it held on Reset", func(t *testing.T) {
		s := r.Stream()
		s.Write("void sk-proj")
		s.Reset()
		if got := s.Write("new") + s.Flush(); got != "new" {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("passes text through without secrets", func(t *testing.T) {
		s := New().Stream()
		if got := s.Write("sk-proj") + s.Flush(); got != "sk-proj" {
			t.Fatalf("got %q", got)
		}
	})
}

func TestAddValue(t *testing.T) {
	r := New()
	r.AddValue("mcpServers.github.headers.Authorization", "ghp_headervalue123")
	if got := r.String("Bearer ghp_headervalue123"); got != "Bearer [redacted mcpServers.github.headers.Authorization]" {
		t.Fatalf("String = %q", got)
	}
	if u := r.Unset(nil); len(u) != 0 {
		t.Fatalf("a value from the settings unsets variables: %v", u)
	}
}
