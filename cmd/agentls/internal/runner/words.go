package runner

import (
	"errors"
	"strings"

	"github.com/agentls/agentls/api"
)

// The server words its configuration errors for an editor: its settings
// (initializationOptions) and the editor's environment. For `agentls run`
// the settings are flags and the environment is the shell's; forTerminal
// rewords them so a person at the terminal reads what to type.
var terminalWords = strings.NewReplacer(
	// The whole hint for a missing model, then the names one by one.
	`set initializationOptions.model (editor setting "model", e.g. "anthropic:`, `pass --model (e.g. --model "anthropic:`,
	`), or AGENTLS_MODEL, or put ANTHROPIC_API_KEY or OPENAI_API_KEY in the editor's environment`, `), or set AGENTLS_MODEL, or export ANTHROPIC_API_KEY or OPENAI_API_KEY`,
	`use the scripted model: "script:/abs/path/to/script.json"`, `use the scripted model: --model script:path/to/script.json`,
	`set it in the editor's environment`, `export it in the shell agentls run starts from`,
	`in the editor's environment`, `in the shell agentls run starts from`,
	`initializationOptions.model`, `--model`,
	`initializationOptions.editMode`, `--mode`,
	`initializationOptions.maxWorkers`, `--max-workers`,
	`initializationOptions.commandEnv.pass`, `--pass-env`,
	`initializationOptions.commandEnv`, `--pass-env`,
	`initializationOptions.diagnostics.commands.`, `--diagnostics `,
	`editor setting "model"`, `--model`,
	`agent/checkModel model`, `--model`,
	`"engine": `, `--engine: `,
)

// forTerminal is the message of err as `agentls run` prints it: the
// server's configuration errors (-32010, -32602) in the words of its flags
// and environment variables.
func forTerminal(err error) string {
	var we *api.Error
	if errors.As(err, &we) && (we.Code == api.CodeModelUnavailable || we.Code == api.CodeInvalidParams) {
		return terminalWords.Replace(err.Error())
	}
	return err.Error()
}

// terminalText is a message of the server (a result's words, not an
// error) in the words of the terminal's flags and environment.
func terminalText(s string) string { return terminalWords.Replace(s) }
