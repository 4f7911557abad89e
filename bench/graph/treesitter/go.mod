module github.com/agentls/agentls/bench/graph/treesitter

go 1.26.0

require github.com/agentls/agentls v0.0.0

require (
	github.com/bmatcuk/doublestar/v4 v4.10.4 // indirect
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/hexops/gotextdiff v1.0.3 // indirect
	github.com/smacker/go-tree-sitter v0.0.0-20240827094217-dd81d9e9be82
	github.com/sourcegraph/conc v0.3.0 // indirect
	go.lsp.dev/uri v1.0.1 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	go.uber.org/zap v1.28.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/agentls/agentls => ../../..
