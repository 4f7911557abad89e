package api

// Method names of docs/PROTOCOL.md §3, §4 and §5. Every other package names methods
// through these constants so a rename is one edit.
const (
	MethodInitialize             = "initialize"
	MethodInitialized            = "initialized"
	MethodShutdown               = "shutdown"
	MethodExit                   = "exit"
	MethodCancelRequest          = "$/cancelRequest"
	MethodProgress               = "$/progress"
	MethodSetTrace               = "$/setTrace"
	MethodDidChangeConfiguration = "workspace/didChangeConfiguration"
	MethodWorkDoneProgressCancel = "window/workDoneProgress/cancel"

	MethodRun           = "agent/run"
	MethodStop          = "agent/stop"
	MethodAddSubtask    = "agent/addSubtask"
	MethodRemoveSubtask = "agent/removeSubtask"
	MethodSkipSubtask   = "agent/skipSubtask"
	MethodSessions      = "agent/sessions"
	MethodSession       = "agent/session"
	MethodDeleteSession = "agent/deleteSession"
	MethodHeatSnapshot  = "agent/heatSnapshot"
	MethodTrace         = "agent/trace"
	MethodUndo          = "agent/undo"
	MethodPing          = "agent/ping"
	MethodModels        = "agent/models"
	MethodCheckModel    = "agent/checkModel"
	MethodIntents       = "agent/intents"
	MethodMCPServers    = "agent/mcpServers"

	MethodReadFile               = "agent/readFile"
	MethodRunCommand             = "agent/runCommand"
	MethodAsk                    = "agent/ask"
	MethodApplyEdit              = "workspace/applyEdit"
	MethodShowMessageRequest     = "window/showMessageRequest"
	MethodWorkDoneProgressCreate = "window/workDoneProgress/create"

	MethodTaskUpdate  = "agent/taskUpdate"
	MethodHeatUpdate  = "agent/heatUpdate"
	MethodLogMessage  = "window/logMessage"
	MethodShowMessage = "window/showMessage"
)
