package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
)

// listedModel is one model of a provider's list.
type listedModel struct {
	name    string // the provider's id of the model
	display string // its name for people, "" when the provider gives none
}

// lister asks a provider for the models it offers, in the provider's own
// order. Errors are classified (*Error).
type lister interface {
	list(ctx context.Context) ([]listedModel, error)
}

// maxListed bounds a listing: a provider that pages forever (or a server
// that repeats its last page) stops there.
const maxListed = 10000

// list is GET {base}/models of the OpenAI API (and of every compatible
// server), which is not paginated.
func (m *openaiModel) list(ctx context.Context) ([]listedModel, error) {
	data, err := m.conn.models(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]listedModel, 0, len(data))
	for _, d := range data {
		if id := modelID(d); id != "" && len(out) < maxListed {
			out = append(out, listedModel{name: id})
		}
	}
	return out, nil
}

// modelID is the id of an entry of an OpenAI model list, "" when it has
// none.
func modelID(entry map[string]json.RawMessage) string {
	var id wireString
	if raw, ok := entry["id"]; ok && id.UnmarshalJSON(raw) == nil {
		return string(id)
	}
	return ""
}

// list is GET /v1/models of the Anthropic API, following its pages
// (limit, after_id, has_more, last_id) with the key and version headers
// the SDK sends. Retired models, which no request can use, are left out.
func (m *anthropicModel) list(ctx context.Context) ([]listedModel, error) {
	it := m.client.Models.ListAutoPaging(ctx, anthropic.ModelListParams{Limit: anthropic.Int(1000)})
	var out []listedModel
	for it.Next() && len(out) < maxListed {
		mi := it.Current()
		if mi.ID == "" || (mi.JSON.Lifecycle.Valid() && mi.Lifecycle == "retired") {
			continue
		}
		out = append(out, listedModel{name: mi.ID, display: mi.DisplayName})
	}
	if err := it.Err(); err != nil {
		return nil, m.classify(ctx, err)
	}
	return out, nil
}

// ollamaLister is GET {OLLAMA_HOST}/api/tags: the models pulled into a
// local Ollama.
type ollamaLister struct {
	ep *endpoint // baseURL is the server's root
	hc *http.Client
}

// maxTagsBody bounds the answer read from /api/tags.
const maxTagsBody = 16 << 20

func (l *ollamaLister) list(ctx context.Context) ([]listedModel, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.ep.baseURL+"/api/tags", nil)
	if err != nil {
		return nil, l.ep.errorf(ErrBadRequest, 0, false, err, "cannot ask %s: %v", l.ep.baseURL, err)
	}
	resp, err := l.hc.Do(req)
	if err != nil {
		return nil, l.ep.classifyTransport(ctx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTagsBody+1))
	if err != nil {
		return nil, l.ep.classifyTransport(ctx, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, l.ep.classifyAPI(apiFailure{status: resp.StatusCode, header: resp.Header,
			message: errorMessageOf(body), cause: fmt.Errorf("GET /api/tags: %s", resp.Status)})
	}
	if len(body) > maxTagsBody {
		return nil, l.ep.errorf(ErrBadResponse, 0, false, nil, "the model list of %s is larger than %d bytes", l.ep.baseURL, maxTagsBody)
	}
	var tags struct {
		Models *[]struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	if err := json.Unmarshal(body, &tags); err != nil || tags.Models == nil {
		if err == nil {
			err = errors.New(`no "models" list`)
		}
		return nil, l.ep.errorf(ErrBadResponse, 0, false, err, "%s/api/tags is not Ollama's model list: %v", l.ep.baseURL, err)
	}
	out := make([]listedModel, 0, len(*tags.Models))
	for _, t := range *tags.Models {
		name := t.Name
		if name == "" {
			name = t.Model
		}
		if name != "" && len(out) < maxListed {
			out = append(out, listedModel{name: name})
		}
	}
	return out, nil
}

// sameModel reports whether a provider's model names a and b are one
// model: equal, or for Ollama equal once the implied ":latest" tag is
// written out.
func sameModel(provider, a, b string) bool {
	if a == b {
		return true
	}
	if provider != "ollama" {
		return false
	}
	tag := func(s string) string {
		if !strings.Contains(s, ":") {
			return s + ":latest"
		}
		return s
	}
	return tag(a) == tag(b)
}

// closest returns up to n of names nearest to name by edit distance (case
// folded), nearest first, ties in the order of names. A name more than
// about half different is left out, unless one of the two contains the
// other (an alias and its dated version).
func closest(name string, names []string, n int) []string {
	type cand struct {
		name string
		dist int
	}
	want := strings.ToLower(name)
	var cs []cand
	seen := map[string]bool{}
	for _, s := range names {
		if seen[s] {
			continue
		}
		seen[s] = true
		low := strings.ToLower(s)
		d := editDistance(want, low)
		contained := strings.Contains(low, want) || strings.Contains(want, low)
		if !contained && d*2 > max(len([]rune(want)), len([]rune(low)))+1 {
			continue // more than about half of it differs
		}
		cs = append(cs, cand{s, d})
	}
	// Insertion sort: lists are short, and equal distances keep the
	// provider's order.
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].dist < cs[j-1].dist; j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
