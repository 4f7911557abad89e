package workforce

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editing"
)

// getDiagnosticsParams are the arguments of get_diagnostics.
type getDiagnosticsParams struct {
	Path string `json:"path,omitempty" jsonschema:"a file or a directory, workspace-relative; left out: the whole workspace"`
}

var getDiagnosticsTool = define("get_diagnostics",
	"List the current diagnostics (errors, warnings, notes) of a file, a directory or the whole workspace, as path:line:column: severity: message: from the editor's language servers, or where the editor gives none from the diagnostics command of the file's language. An edit's result already tells the problems it introduced.",
	func(ctx context.Context, w *worker, p getDiagnosticsParams) (result, error) {
		t := w.t
		where, scope, file := "the workspace", "", ""
		var rp editing.Path
		if strings.TrimSpace(p.Path) != "" {
			var err error
			rp, err = t.edit.Access(editing.Actor{TaskID: t.id, AgentID: w.sub.ID}, p.Path, false, nil)
			if err != nil {
				return result{}, err
			}
			if rp.Rel != "." {
				where, scope = rp.Rel, rp.Rel
				if st, err := os.Stat(rp.Abs); err != nil || !st.IsDir() {
					file = rp.Rel // a file, or one that is not there (yet)
				}
			}
		}
		files, says, err := w.currentDiagnostics(ctx, rp, file)
		if err != nil {
			return result{}, err
		}
		var all []found
		for rel, ds := range files {
			if scope != "" && rel != scope && !strings.HasPrefix(rel, scope+"/") {
				continue
			}
			for _, d := range ds {
				all = append(all, found{rel, d})
			}
		}
		if len(all) == 0 {
			return result{content: fmt.Sprintf("No diagnostics in %s, from %s.", where, says)}, nil
		}
		sortFound(all)
		count := map[api.DiagnosticSeverity]int{}
		paths := map[string]bool{}
		for _, f := range all {
			count[api.DiagnosticSeverity(severityRank(f.d.Severity))]++
			paths[f.rel] = true
		}
		var parts []string
		for _, s := range []api.DiagnosticSeverity{api.SeverityError, api.SeverityWarning, api.SeverityInformation, api.SeverityHint} {
			if n := count[s]; n > 0 {
				name := s.String()
				parts = append(parts, fmt.Sprintf("%d %s", n, plural(n, name, name+"s")))
			}
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "%s in %d %s of %s, from %s:\n", strings.Join(parts, ", "), len(paths), plural(len(paths), "file", "files"), where, says)
		writeFound(&sb, all, maxListedDiagnostics)
		if len(all) > maxListedDiagnostics && scope == "" {
			sb.WriteString("Give path to narrow.\n")
		}
		return result{content: strings.TrimRight(sb.String(), "\n"), path: file}, nil
	})

// currentDiagnostics are the diagnostics as they are of the file (file:
// workspace-relative), else of the whole workspace (rp names a directory,
// or nothing), from where the workspace's diagnostics come, and what that
// is, as the worker reads it.
func (w *worker) currentDiagnostics(ctx context.Context, rp editing.Path, file string) (fileDiags, string, error) {
	t := w.t
	if t.diagnosticsEditor() != nil {
		var uris []string
		if file != "" {
			uris = []string{rp.URI}
		}
		files, err := t.fromEditor(ctx, uris...)
		if err != nil {
			return nil, "", fmt.Errorf("the editor could not give its diagnostics: %w", err)
		}
		return files, "the editor's language servers", nil
	}
	cmds := t.settings.Diagnostics.Commands
	var run []string
	if file != "" {
		src := t.diagSourceOf(file)
		if src.kind != diagCommand {
			return nil, "", noDiagnosticsFor(src.lang, cmds)
		}
		run = []string{src.command}
	} else {
		for _, lang := range slices.Sorted(maps.Keys(cmds)) {
			if !slices.Contains(run, cmds[lang]) {
				run = append(run, cmds[lang])
			}
		}
		if len(run) == 0 {
			return nil, "", noDiagnosticsFor("", cmds)
		}
	}
	all := fileDiags{}
	var names []string
	for _, c := range run {
		files, err := w.commandDiagnostics(ctx, c, false)
		if err != nil {
			return nil, "", err
		}
		for rel, ds := range files {
			all[rel] = append(all[rel], ds...)
		}
		names = append(names, "`"+c+"`")
	}
	return all, strings.Join(names, ", ") + " (the diagnostics setting)", nil
}

// noDiagnosticsFor says why there are no diagnostics to give: of the
// language lang ("" the workspace's, or a file of no language).
func noDiagnosticsFor(lang string, cmds map[string]string) error {
	what := "the diagnostics setting names no command"
	if len(cmds) > 0 {
		what = "the diagnostics setting names commands for " + strings.Join(slices.Sorted(maps.Keys(cmds)), ", ") + " only"
	}
	if lang != "" {
		return fmt.Errorf("%w for %s files here: the editor gives none, and %s; check by building or testing (run_command)", errNoDiagnostics, lang, what)
	}
	return fmt.Errorf("%w here: the editor gives none, and %s; check by building or testing (run_command)", errNoDiagnostics, what)
}
