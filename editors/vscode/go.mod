// No Go code lives here. This file keeps ./... out of node_modules, whose
// npm packages may carry Go sources of their own.
module github.com/agentls/agentls/editors/vscode

go 1.26
