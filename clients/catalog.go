package clients

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
)

// Bounds of the calls that ask providers about their models: they answer
// a person waiting on a menu, so a provider that does not answer is
// reported rather than waited for.
const (
	// ListTimeout bounds one provider's model list.
	ListTimeout = 15 * time.Second
	// CheckTimeout bounds a whole check: the list, then a one-token request.
	CheckTimeout = 30 * time.Second
)

// listedProviders are the providers ListModels asks, in its order.
var listedProviders = []string{"openai", "anthropic", "ollama"}

// ListModels asks each provider the environment sets up for the models it
// offers (docs/MODELS.md, Listing and checking models), all at once, each
// bounded by ListTimeout: OpenAI and compatible servers (GET /models),
// Anthropic (GET /v1/models, every page), Ollama (GET /api/tags, at
// OLLAMA_HOST or, when that is unset, at the default address if something
// answers there). setting is the model setting (initializationOptions.model;
// opts.Source names another source): the current model is marked, and
// listed even when its provider does not list it. A provider that fails is
// listed with the problem in words for the person; no error stops the
// listing, and no key appears in it. Cancelling ctx ends every call.
func ListModels(ctx context.Context, setting string, env func(string) string, opts Options) *api.ModelsResult {
	if env == nil {
		env = func(string) string { return "" }
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	res := &api.ModelsResult{Models: []api.ModelInfo{}, Providers: []api.ProviderInfo{}}
	currentProvider, currentName := "", ""
	spec, source, err := pickSpec(setting, opts.Source, env)
	if err == nil {
		res.Current, res.Source = spec, source
		if currentProvider, currentName, err = splitSpec(spec, source); err == nil {
			if _, rerr := Resolve(spec, env, opts); rerr != nil {
				res.CurrentError = rerr.Error()
			}
			res.Current = currentProvider + ":" + currentName
		}
	}
	if err != nil {
		res.CurrentError = err.Error()
	}

	type answer struct {
		info   api.ProviderInfo
		models []api.ModelInfo
	}
	answers := make([]answer, len(listedProviders))
	var wg sync.WaitGroup
	for i, p := range listedProviders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			info, models := listProvider(ctx, p, currentProvider == p, env, opts)
			answers[i] = answer{info, models}
		}()
	}
	wg.Wait()
	for _, a := range answers {
		res.Providers = append(res.Providers, a.info)
		res.Models = append(res.Models, a.models...)
	}
	if currentProvider == "script" {
		info := api.ProviderInfo{Provider: "script", Configured: true}
		if res.CurrentError != "" {
			info.Problem, info.Error = api.ProblemConfig, res.CurrentError
		} else {
			info.Models = 1
		}
		res.Providers = append(res.Providers, info)
	}
	if currentProvider != "" {
		markCurrent(res, currentProvider, currentName)
	}
	return res
}

// markCurrent marks the current model among the listed ones, or adds it
// where its provider's models go.
func markCurrent(res *api.ModelsResult, provider, name string) {
	rank := func(p string) int {
		for i, q := range append(listedProviders, "script") {
			if p == q {
				return i
			}
		}
		return len(listedProviders) + 1
	}
	at := 0
	for i := range res.Models {
		m := &res.Models[i]
		if m.Provider == provider && sameModel(provider, m.Name, name) {
			m.Current = true
			return
		}
		if rank(m.Provider) <= rank(provider) {
			at = i + 1
		}
	}
	cur := api.ModelInfo{ID: provider + ":" + name, Provider: provider, Name: name, Current: true}
	res.Models = append(res.Models[:at], append([]api.ModelInfo{cur}, res.Models[at:]...)...)
}

// listProvider lists one provider's models. named says the current model
// is the provider's: it is then asked even when the environment does not
// set it up, so that what is missing is said.
func listProvider(ctx context.Context, provider string, named bool, env func(string) string, opts Options) (api.ProviderInfo, []api.ModelInfo) {
	info := api.ProviderInfo{Provider: provider, Configured: named}
	probe := false // Ollama at its default address, looked for
	switch provider {
	case "openai":
		info.Configured = info.Configured || env("OPENAI_API_KEY") != "" || strings.TrimSpace(env("OPENAI_BASE_URL")) != ""
		info.Hint = "set OPENAI_API_KEY in the editor's environment, or OPENAI_BASE_URL to an OpenAI-compatible server"
	case "anthropic":
		info.Configured = info.Configured || env("ANTHROPIC_API_KEY") != ""
		info.Hint = "set ANTHROPIC_API_KEY in the editor's environment"
	case "ollama":
		probe = !info.Configured && strings.TrimSpace(env("OLLAMA_HOST")) == ""
		info.Configured = info.Configured || !probe
		info.Hint = "set OLLAMA_HOST in the editor's environment to the address of an Ollama server"
	}
	if !info.Configured && !probe {
		return info, nil
	}
	c, err := connect(provider, "", provider, env, &opts)
	if err != nil {
		info.Hint = ""
		info.Problem, info.Error = api.ProblemConfig, err.Error()
		return info, nil
	}
	info.URL = c.listEP.baseURL
	lctx, cancel := context.WithTimeout(ctx, ListTimeout)
	defer cancel()
	list, err := c.lister.list(lctx)
	if err != nil {
		if probe {
			// Nothing answers at the default address: Ollama is not
			// set up here, which is no error.
			info.Hint = fmt.Sprintf("no Ollama answers at %s: start it (ollama serve), or set OLLAMA_HOST in the editor's environment", info.URL)
			return info, nil
		}
		info.Hint = ""
		info.Problem, info.Error = describe(err, c.listEP, env, "")
		return info, nil
	}
	info.Configured, info.Hint = true, ""
	info.Models = len(list)
	models := make([]api.ModelInfo, len(list))
	for i, m := range list {
		models[i] = api.ModelInfo{ID: provider + ":" + m.name, Provider: provider, Name: m.name, DisplayName: m.display}
	}
	return info, models
}

// CheckModel tries a model (docs/MODELS.md, Listing and checking models):
// spec, or when it is "" the model of the setting chosen as agent/run
// chooses it (spec names its source in opts.Source). It lists the
// provider's models; a model the list does not name (an alias, a server
// without a list) is tried with a one-token request, without retries.
// Whatever is wrong is said in words the person can act on: which
// variable to set, a key refused, the URL that does not answer, the
// nearest names of an unknown model. The whole check is bounded by
// CheckTimeout; it fails only when ctx ends (with ctx's error).
func CheckModel(ctx context.Context, spec string, env func(string) string, opts Options) (*api.CheckModelResult, error) {
	if env == nil {
		env = func(string) string { return "" }
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	res := &api.CheckModelResult{}
	spec, source, err := pickSpec(spec, opts.Source, env)
	if err != nil {
		res.Problem, res.Message = api.ProblemNoModel, err.Error()
		return res, nil
	}
	res.Model, res.Source = spec, source
	provider, name, err := splitSpec(spec, source)
	if err != nil {
		res.Problem, res.Message = api.ProblemConfig, err.Error()
		return res, nil
	}
	res.Model = provider + ":" + name
	opts.Retry = RetryPolicy{MaxAttempts: 1, BaseDelay: time.Second, MaxDelay: time.Second, MaxElapsed: CheckTimeout}
	opts.OnRetry = nil
	c, err := connect(provider, name, fmt.Sprintf("model %q (from %s)", spec, source), env, &opts)
	if err != nil {
		res.Problem, res.Message = api.ProblemConfig, err.Error()
		return res, nil
	}
	if c.lister == nil {
		res.OK, res.Checked = true, api.CheckedByScript
		res.Message = fmt.Sprintf("%s: the script loads; it answers offline", res.Model)
		return res, nil
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	list, listErr := c.lister.list(ctx)
	if err := parent.Err(); err != nil {
		return nil, err
	}
	var names []string
	for _, m := range list {
		names = append(names, m.name)
	}
	switch {
	case listErr == nil:
		for _, n := range names {
			if sameModel(provider, n, name) {
				res.OK, res.Checked = true, api.CheckedByList
				res.Message = fmt.Sprintf("%s is ready: %s offers it", res.Model, c.ep.baseURL)
				return res, nil
			}
		}
		if provider == "ollama" {
			// Ollama's list is every model it has: one not in it is
			// not pulled.
			return unknownModel(res, c.listEP.baseURL, provider, name, names), nil
		}
	case provider != "ollama" && (errors.Is(listErr, ErrModelNotFound) || errors.Is(listErr, ErrBadRequest) || errors.Is(listErr, ErrBadResponse)):
		// A server without a model list: the one-token request decides.
		// (Every Ollama has one: a URL without it is not Ollama.)
	default:
		res.Problem, res.Message = describe(listErr, c.listEP, env, name)
		return res, nil
	}
	_, err = c.model.Complete(ctx, &Request{
		Agent:     "check",
		Messages:  []Message{{Role: RoleUser, Text: "Reply with the word OK."}},
		MaxTokens: 1,
	}, nil)
	if err == nil {
		res.OK, res.Checked = true, api.CheckedByCompletion
		res.Message = fmt.Sprintf("%s is ready: it answered a one-token request at %s", res.Model, c.ep.baseURL)
		return res, nil
	}
	if err := parent.Err(); err != nil {
		return nil, err
	}
	res.Checked = api.CheckedByCompletion
	if errors.Is(err, ErrModelNotFound) {
		r := unknownModel(res, c.ep.baseURL, provider, name, names)
		if listErr != nil {
			var me *Error
			if errors.As(err, &me) && me.detail != "" {
				r.Message += ": " + me.detail
			}
		}
		return r, nil
	}
	res.Problem, res.Message = describe(err, c.ep, env, name)
	return res, nil
}

// unknownModel fills in the verdict on a model the provider does not
// offer, with the nearest names it does.
func unknownModel(res *api.CheckModelResult, url, provider, name string, names []string) *api.CheckModelResult {
	if res.Checked == "" {
		res.Checked = api.CheckedByList
	}
	res.Problem = api.ProblemUnknownModel
	res.Message = fmt.Sprintf("%s offers no model %q", url, name)
	for _, n := range closest(name, names, 3) {
		res.Closest = append(res.Closest, provider+":"+n)
	}
	if len(res.Closest) > 0 {
		res.Message += "; the closest are " + strings.Join(res.Closest, ", ")
	}
	if provider == "ollama" {
		res.Message += fmt.Sprintf("; pull it with: ollama pull %s", name)
	}
	return res
}

// describe turns a failed call to ep into a problem kind and the words
// for the person: what happened, where, and what to do. model is the
// model asked for, "" for a listing.
func describe(err error, ep *endpoint, env func(string) string, model string) (string, string) {
	var me *Error
	if !errors.As(err, &me) {
		return api.ProblemBadAnswer, ep.red.Echoes(err.Error())
	}
	detail := me.detail
	if detail == "" && me.Err != nil {
		detail = me.Err.Error()
	}
	status := ""
	if me.Status != 0 {
		status = fmt.Sprintf(" (HTTP %d %s)", me.Status, http.StatusText(me.Status))
	}
	said := ""
	if detail != "" {
		said = ": " + detail
	}
	where := ep.baseURL
	urlHint := "check that the server runs"
	if ep.urlVar != "" && env(ep.urlVar) != "" {
		urlHint += " and that " + ep.urlVar + " is its address"
	} else if ep.urlVar != "" {
		urlHint += ", or set " + ep.urlVar + " to its address"
	}
	var problem, msg string
	switch {
	case errors.Is(err, ErrAuth):
		problem = api.ProblemAuth
		switch {
		case ep.keyVar == "":
			msg = fmt.Sprintf("%s refused the request%s%s", where, status, said)
		case env(ep.keyVar) == "":
			msg = fmt.Sprintf("%s wants a key%s%s; set %s", where, status, said, ep.keyVar)
		default:
			msg = fmt.Sprintf("%s refused the key in %s%s%s; set %s to a valid key", where, ep.keyVar, status, said, ep.keyVar)
		}
	case errors.Is(err, ErrTimeout):
		problem = api.ProblemUnreachable
		bound := ListTimeout
		if model != "" {
			bound = CheckTimeout
		}
		msg = fmt.Sprintf("no answer from %s within %s; %s", where, bound, urlHint)
	case errors.Is(err, ErrNetwork):
		problem = api.ProblemUnreachable
		cause := ""
		if me.Err != nil {
			cause = ": " + me.Err.Error()
		}
		msg = fmt.Sprintf("cannot reach %s%s; %s", where, cause, urlHint)
		if strings.Contains(me.Message, "SSL_CERT_FILE") {
			msg = me.Message
		}
	case errors.Is(err, ErrModelNotFound):
		problem = api.ProblemUnknownModel
		if model != "" {
			msg = fmt.Sprintf("%s offers no model %q%s", where, model, said)
		} else {
			msg = fmt.Sprintf("%s has no model list%s%s", where, status, said)
		}
	case errors.Is(err, ErrRateLimited):
		problem = api.ProblemRateLimited
		msg = fmt.Sprintf("%s is rate limiting%s%s; try again later", where, status, said)
	case errors.Is(err, ErrServer):
		problem = api.ProblemProvider
		msg = fmt.Sprintf("%s failed%s%s; try again later", where, status, said)
	case errors.Is(err, ErrBadResponse):
		problem = api.ProblemBadAnswer
		name := map[string]string{"openai": "an OpenAI-compatible", "anthropic": "Anthropic's", "ollama": "Ollama's"}[ep.provider]
		msg = fmt.Sprintf("%s answered something that is not %s API%s; %s", where, name, said, urlHint)
	default:
		problem = api.ProblemRefused
		msg = fmt.Sprintf("%s refused the request%s%s", where, status, said)
	}
	return problem, ep.red.Echoes(msg)
}
