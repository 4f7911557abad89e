;;; agentls.el --- Coding agent that works through your buffers -*- lexical-binding: t; -*-

;; Author: The agentls authors
;; Maintainer: The agentls authors
;; Version: 0.2.0
;; Package-Requires: ((emacs "28.1") (jsonrpc "1.0.14"))
;; Keywords: tools, convenience, processes
;; URL: https://github.com/agentls/agentls

;; This file is not part of GNU Emacs.

;;; Commentary:

;; agentls is a coding agent that an editor runs the way it runs a
;; language server: one `agentls' process per project, spoken to over
;; JSON-RPC on its standard input and output.  It plans a request into
;; subtasks, runs them in parallel, and does every file read, command
;; and edit through Emacs: it reads your buffers (unsaved edits
;; included), edits them as single undo steps, asks you before it
;; applies a change or runs a command, and asks you questions in the
;; minibuffer.
;;
;; This package is the Emacs side of that conversation, built on the
;; built-in `jsonrpc' library.  Start with:
;;
;;   M-x agentls-run      ask the agent to do something in this project
;;   M-x agentls-tasks    the live list of tasks and their subtasks
;;   M-x agentls-stop     stop a running task
;;   M-x agentls-heat     the files the agent is working with, hottest first
;;   M-x agentls-neighbours  the files a file references and those that
;;                        reference it, from the code graph (n in the heat)
;;   M-x agentls-sessions past conversations: read, continue, delete
;;   M-x agentls-trace-at-point  which task changed this line, and why
;;   M-x agentls-transcript  what the agent of a task writes and does, live
;;   M-x agentls-select-intent, agentls-select-model  for the next tasks
;;   M-x agentls-doctor   the binary, the server, the model, the MCP servers
;;   M-x agentls-undo     take back what a task changed
;;
;; In the tasks buffer, keys on the subtask at point skip it, remove it,
;; add a subtask after it, and follow up on a finished task (C-h m).
;;
;; `agentls-mode' is a global minor mode that puts these commands under
;; `agentls-keymap-prefix'.  Customize the group `agentls' for the
;; binary, the model, the edit mode and the rest of the settings sent as
;; initializationOptions.

;;; Code:

(require 'cl-lib)
(require 'json)
(require 'jsonrpc)
(require 'outline)
(require 'project)
(require 'subr-x)
(require 'tabulated-list)
(require 'url-util)

;;;; Customization

(defgroup agentls nil
  "Coding agent that works through your buffers."
  :group 'tools
  :prefix "agentls-"
  :link '(url-link :tag "Home page" "https://github.com/agentls/agentls"))

(defcustom agentls-program "agentls"
  "The agentls executable: a file name, or a name found in variable `exec-path'."
  :type 'string)

(defcustom agentls-program-args '("serve")
  "Arguments given to `agentls-program'."
  :type '(repeat string))

(defcustom agentls-model nil
  "Model the agent uses, as PROVIDER:MODEL.
For example \"anthropic:claude-sonnet-4-5\", \"openai:gpt-4.1-mini\",
\"ollama:qwen2.5-coder:7b\" or \"script:/abs/path.json\" for an
offline scripted model.  nil lets the server choose from its
environment (AGENTLS_MODEL, ANTHROPIC_API_KEY, OPENAI_API_KEY)."
  :type '(choice (const :tag "Server default" nil) string))

(defcustom agentls-edit-mode nil
  "How the agent's edits reach your files.
`apply' applies them at once, `propose' asks you to confirm each
one, `branch' applies them on a fresh git branch, `review' holds
every change of a task and shows them together when it ends.  nil
leaves the choice to the server, whose default is `propose'."
  :type '(choice (const :tag "Server default (propose)" nil)
                 (const apply) (const propose) (const branch) (const review)))

(defcustom agentls-max-workers nil
  "How many subtasks run at once; nil for the server default (3)."
  :type '(choice (const :tag "Server default" nil) natnum))

(defcustom agentls-commands nil
  "Whether the agent may run shell commands.
`ask' asks you each time, `allow' runs them, `deny' refuses them.
nil leaves the choice to the server, whose default is `ask'."
  :type '(choice (const :tag "Server default (ask)" nil)
                 (const ask) (const allow) (const deny)))

(defcustom agentls-allow-commands nil
  "Command prefixes that run without asking, such as \"go test\"."
  :type '(repeat string))

(defcustom agentls-zones nil
  "Which files of the project the agent may touch.
A plist (:allow GLOBS :deny GLOBS) of project-relative doublestar
globs; deny wins.  nil keeps the server default: everything but
.git."
  :type '(choice (const :tag "Server default" nil)
                 (list (const :allow) (repeat :tag "Allow" string)
                       (const :deny) (repeat :tag "Deny" string))))

(defcustom agentls-timeouts nil
  "Bounds on the server's waits, in milliseconds, as a plist.
Keys: :reverseCallMs, :commandMs, :modelMs, :humanMs.  Missing
keys keep the server defaults."
  :type '(plist :key-type (choice (const :reverseCallMs) (const :commandMs)
                                  (const :modelMs) (const :humanMs))
                :value-type natnum))

(defcustom agentls-mcp-servers nil
  "MCP servers whose tools the agent uses, as an alist of (NAME . PLIST).
A stdio server's PLIST has :command, :args (a list of strings) and :env
\(an alist of (VARIABLE . VALUE)); a streamable HTTP server's has :url
and :headers (an alist of (HEADER . VALUE)).  ${NAME} in a value is read
from the server's environment.  For example:

  ((\"everything\" :command \"npx\"
                   :args (\"-y\" \"@modelcontextprotocol/server-everything\"))
   (\"docs\" :url \"https://mcp.example.com/mcp\"
           :headers ((\"Authorization\" . \"Bearer ${DOCS_TOKEN}\"))))

`agentls-mcp-servers' (the command) shows their state."
  :type '(alist :key-type (string :tag "Name") :value-type (plist :value-type sexp)))

(defcustom agentls-engines nil
  "External agents subtasks may run on, as an alist of (NAME . PLIST).
They add to, or change, the built-in engines claude, codex and gemini
\(Claude Code, Codex and Gemini CLI, found on PATH or in npm's cache;
docs/ENGINES.md).  PLIST has :command (the program and its arguments,
a list of strings), :env (an alist of (VARIABLE . VALUE); ${NAME} in a
value is read from the server's environment), :isolate (t or
:json-false: run in a worktree of its own) and :disabled (t leaves the
engine out).  For example:

  ((\"goose\" :command (\"goose\" \"acp\") :isolate t)
   (\"codex\" :disabled t))

`agentls-doctor' lists the engines and whether each can be used."
  :type '(alist :key-type (string :tag "Name") :value-type (plist :value-type sexp)))

(defcustom agentls-allow-mcp-tools nil
  "MCP tools that run without asking: \"mcp__SERVER\" or \"mcp__SERVER__TOOL\"."
  :type '(repeat string))

(defcustom agentls-thinking nil
  "Whether the models are asked for their thinking, shown folded in the transcript.
nil leaves the server's default (no thinking), t asks for it, and a
number asks for it with that budget of tokens (Anthropic's, 1024 to
128000)."
  :type '(choice (const :tag "Default" nil) (const :tag "Think" t) (natnum :tag "Budget of tokens")))

(defcustom agentls-initialization-options nil
  "Further initializationOptions, as a plist merged over the others."
  :type '(plist :value-type sexp))

(defcustom agentls-keymap-prefix (kbd "C-c ~")
  "Prefix key of `agentls-command-map' in `agentls-mode'."
  :type 'key-sequence)

(defcustom agentls-confirm-edit-function #'agentls-confirm-edit
  "Function that asks whether to apply a change the agent proposes.
It is called with the change's LABEL (a string), the list of
affected file names and a buffer showing the diff, and returns
non-nil to apply it."
  :type 'function)

(defcustom agentls-command-output-limit (* 1024 1024)
  "Most bytes of a command's output sent back to the agent."
  :type 'natnum)

(defcustom agentls-task-finished-functions nil
  "Functions called with a task when it ends.
The task is an `agentls-task'; its state is \"done\", \"failed\" or
\"stopped\" and its result holds the server's RunResult plist."
  :type 'hook)

(defcustom agentls-transcript-interval 0.05
  "Seconds between two writes of a transcript buffer.
Events that arrive meanwhile are written together, so a fast stream
costs one redisplay per interval."
  :type 'number)

(defcustom agentls-events-buffer-size 2000000
  "Size limit of each connection's JSON-RPC events buffer.
0 disables the buffer, nil means no limit."
  :type '(choice (const :tag "Unlimited" nil) natnum))

;;;; Connections

(defclass agentls-connection (jsonrpc-process-connection)
  ((root
    :initarg :root :reader agentls-connection-root
    :documentation "The project root, a directory name.")
   (tasks
    :initform (make-hash-table :test #'equal)
    :reader agentls-connection-tasks
    :documentation "Task id to `agentls-task'.")
   (heat
    :initform (make-hash-table :test #'equal)
    :reader agentls-connection-heat
    :documentation "Project-relative path to the heat plist of that file.")
   (heat-seq
    :initform 0 :accessor agentls-connection-heat-seq
    :documentation "Sequence number of the last heat view received.")
   (pending
    :initform (make-hash-table :test #'eql)
    :reader agentls-connection-pending
    :documentation "Request id to `agentls--reply' not yet answered.")
   (server-info
    :initform nil :accessor agentls-connection-server-info
    :documentation "The serverInfo plist of the initialize result.")
   (intent
    :initform nil :accessor agentls-connection-intent
    :documentation "The intent id the next tasks work under, or nil.")
   (model
    :initform nil :accessor agentls-connection-model
    :documentation "The model of the next tasks, or nil for the model setting.")
   (attachments
    :initform nil :accessor agentls-connection-attachments
    :documentation "The attachments of the next task, in order (`agentls-attach')."))
  :documentation "A connection to one agentls process serving one project.")

(cl-defstruct (agentls-task (:constructor agentls--make-task)
                            (:copier nil))
  "A task the agent runs for a prompt."
  (id nil :documentation "The task id.")
  (connection nil :documentation "The `agentls-connection' running it.")
  (prompt "" :documentation "What was asked.")
  (session nil :documentation "The session id, once known.")
  (state "planning" :documentation "The task state of the protocol.")
  (subtasks nil :documentation "A list of subtask plists.")
  (seq -1 :documentation "Sequence number of the last update applied.")
  (events nil :documentation "The latest events, newest first.")
  (progress nil :documentation "Percentage from $/progress, or nil.")
  (progress-message nil :documentation "Message from $/progress, or nil.")
  (summary nil :documentation "Summary once it ended.")
  (result nil :documentation "The RunResult plist once it ended.")
  (counts nil :documentation "(APPLIED . REJECTED): its changes, once it ended.")
  (usage nil :documentation "Its usage plist so far: the last usage event's, then the result's.")
  (thinking nil :documentation "Subtask ids (\"\" the coordinator) whose model thinks now.")
  (log nil :documentation "Its events for the transcript, newest first.")
  (pending nil :documentation "Events its transcript buffer has not shown yet.")
  (transcript nil :documentation "Its transcript buffer, once shown.")
  (started (float-time) :documentation "When it was started."))

(defvar agentls--stopping nil
  "Non-nil while agentls processes are being shut down.
A question withdrawn then stays in the minibuffer until the shutdown
is over: leaving the minibuffer would unwind the shutdown, and
`kill-emacs' with it when Emacs is quitting.")

(defvar agentls--connections (make-hash-table :test #'equal)
  "Project root to live `agentls-connection'.")

(defconst agentls--final-states '("done" "failed" "stopped" "interrupted")
  "Task states after which nothing more happens.")

(defun agentls--project-root (&optional dir)
  "Return the project root of DIR (`default-directory' if nil).
Without a project it is DIR itself."
  (let* ((dir (or dir default-directory))
         (project (project-current nil dir)))
    (file-name-as-directory
     (expand-file-name (if project (project-root project) dir)))))

(defun agentls--path-to-uri (file)
  "Return the file:// URI of FILE."
  (concat "file://"
          (url-hexify-string (encode-coding-string (expand-file-name file) 'utf-8)
                             (cons ?/ url-unreserved-chars))))

(defun agentls--uri-to-path (uri)
  "Return the local file name of the file:// URI, or nil if URI is not one."
  (when (and (stringp uri) (string-prefix-p "file://" uri))
    (let ((path (substring uri (length "file://"))))
      ;; file://host/path: only the local host is ours.
      (unless (string-prefix-p "/" path)
        (setq path (substring path (or (string-search "/" path) (length path)))))
      (decode-coding-string (url-unhex-string path) 'utf-8))))

(defun agentls--initialization-options ()
  "Return the initializationOptions made of the customizations."
  (let ((opts (copy-sequence agentls-initialization-options)))
    (cl-flet ((add (key value) (unless (plist-member opts key)
                                 (setq opts (plist-put opts key value)))))
      (when agentls-model (add :model agentls-model))
      (when agentls-edit-mode (add :editMode (symbol-name agentls-edit-mode)))
      (when agentls-max-workers (add :maxWorkers agentls-max-workers))
      (when agentls-commands (add :commands (symbol-name agentls-commands)))
      (when agentls-allow-commands (add :allowCommands (vconcat agentls-allow-commands)))
      (when agentls-zones
        (let (zones)
          (when (plist-member agentls-zones :allow)
            (setq zones (plist-put zones :allow (vconcat (plist-get agentls-zones :allow)))))
          (when (plist-member agentls-zones :deny)
            (setq zones (plist-put zones :deny (vconcat (plist-get agentls-zones :deny)))))
          (add :zones zones)))
      (when agentls-timeouts (add :timeouts agentls-timeouts))
      (when agentls-mcp-servers (add :mcpServers (agentls--mcp-servers-json agentls-mcp-servers)))
      (when agentls-engines (add :engines (agentls--engines-json agentls-engines)))
      (when agentls-allow-mcp-tools (add :allowMcpTools (vconcat agentls-allow-mcp-tools)))
      (when agentls-thinking
        (add :thinking (append (list :enabled t)
                               (and (numberp agentls-thinking) (list :budgetTokens agentls-thinking))))))
    (or opts (make-hash-table))))

(defun agentls--mcp-servers-json (servers)
  "Return SERVERS, the value of `agentls-mcp-servers', as JSON objects."
  (let ((out (make-hash-table :test #'equal)))
    (pcase-dolist (`(,name . ,plist) servers)
      (let ((entry (make-hash-table :test #'equal)))
        (cl-loop for (key value) on plist by #'cddr
                 do (puthash (substring (symbol-name key) 1)
                             (pcase key
                               (:args (vconcat value))
                               ((or :env :headers)
                                (let ((map (make-hash-table :test #'equal)))
                                  (pcase-dolist (`(,k . ,v) value) (puthash k v map))
                                  map))
                               (_ value))
                             entry))
        (puthash name entry out)))
    out))

(defun agentls--engines-json (engines)
  "Return ENGINES, the value of `agentls-engines', as JSON objects."
  (let ((out (make-hash-table :test #'equal)))
    (pcase-dolist (`(,name . ,plist) engines)
      (let ((entry (make-hash-table :test #'equal)))
        (cl-loop for (key value) on plist by #'cddr
                 do (puthash (substring (symbol-name key) 1)
                             (pcase key
                               (:command (vconcat value))
                               (:env (let ((map (make-hash-table :test #'equal)))
                                       (pcase-dolist (`(,k . ,v) value) (puthash k v map))
                                       map))
                               (_ value))
                             entry))
        (puthash name entry out)))
    out))

(defun agentls--client-capabilities ()
  "Return the client capabilities Emacs advertises."
  (list :workspace
        (list :applyEdit t
              :workspaceEdit (list :documentChanges t
                                   :resourceOperations ["create" "delete"]
                                   :failureHandling "abort"
                                   :changeAnnotationSupport (list :groupsOnLabel :json-false)))
        :window
        (list :workDoneProgress t
              :showMessage (list :messageActionItem
                                 (list :additionalPropertiesSupport :json-false)))
        :experimental
        (list :agent (list :readFile t :runCommand t :ask t))))

(defun agentls--live-connection (&optional root)
  "Return the live connection of ROOT (default: this project), or nil."
  (let ((conn (gethash (or root (agentls--project-root)) agentls--connections)))
    (and conn (jsonrpc-running-p conn) conn)))

(defun agentls--connection (&optional root)
  "Return the live connection of ROOT (default: this project), starting one."
  (let ((root (or root (agentls--project-root))))
    (or (agentls--live-connection root) (agentls--start root))))

(defun agentls--start (root)
  "Start agentls for the project at ROOT, initialize it and return it."
  (let* ((program (or (executable-find agentls-program)
                      (user-error "Cannot find the agentls program %S; set `agentls-program'"
                                  agentls-program)))
         (name (format "agentls[%s]" (file-name-nondirectory (directory-file-name root))))
         (default-directory root)
         (conn
          (make-instance
           'agentls-connection
           :name name
           :root root
           :events-buffer-scrollback-size agentls-events-buffer-size
           :request-dispatcher #'agentls--handle-request
           :notification-dispatcher #'agentls--handle-notification
           :on-shutdown #'agentls--on-shutdown
           :process
           (lambda ()
             (make-process
              :name name
              :command (cons program agentls-program-args)
              :connection-type 'pipe
              :coding 'utf-8-emacs-unix
              :noquery t
              ;; jsonrpc expects the stderr buffer under exactly this name.
              :stderr (get-buffer-create (format "*%s stderr*" name)))))))
    (puthash root conn agentls--connections)
    (condition-case err
        (let ((result (agentls--request
                       conn 'initialize
                       (list :processId (emacs-pid)
                             :clientInfo (list :name "Emacs" :version emacs-version)
                             :rootUri (agentls--path-to-uri root)
                             :rootPath (directory-file-name root)
                             :workspaceFolders
                             (vector (list :uri (agentls--path-to-uri (directory-file-name root))
                                           :name (file-name-nondirectory
                                                  (directory-file-name root))))
                             :capabilities (agentls--client-capabilities)
                             :initializationOptions (agentls--initialization-options))
                       :timeout 30)))
          (setf (agentls-connection-server-info conn) (plist-get result :serverInfo))
          (jsonrpc-notify conn 'initialized (make-hash-table))
          (agentls--mode-line-install)
          (add-hook 'kill-emacs-hook #'agentls-shutdown-all)
          conn)
      (error
       (remhash root agentls--connections)
       (ignore-errors (jsonrpc-shutdown conn t))
       (signal (car err) (cdr err))))))

(defun agentls--on-shutdown (conn)
  "Forget CONN, whose process ended, and fail its unfinished tasks."
  (let ((root (agentls-connection-root conn)))
    (when (eq (gethash root agentls--connections) conn)
      (remhash root agentls--connections)))
  (maphash (lambda (_id reply) (agentls--reply-abort reply))
           (agentls-connection-pending conn))
  (maphash (lambda (_id task)
             (unless (member (agentls-task-state task) agentls--final-states)
               (setf (agentls-task-state task) "failed"
                     (agentls-task-summary task) "the agentls process exited")
               (run-hook-with-args 'agentls-task-finished-functions task)))
           (agentls-connection-tasks conn))
  (agentls--refresh-views))

(defun agentls--stop-connection (conn)
  "Shut CONN down the way LSP asks: shutdown, exit, then wait for the process."
  (let ((process (jsonrpc--process conn))
        (agentls--stopping t))
    (when (jsonrpc-running-p conn)
      (ignore-errors (agentls--request conn 'shutdown nil :timeout 5))
      (ignore-errors (jsonrpc-notify conn 'exit nil))
      ;; `jsonrpc-shutdown' kills the process at once: give it the time to
      ;; flush its state and exit by itself first.
      (with-timeout (5 nil)
        (while (process-live-p process)
          (accept-process-output process 0.05))))
    (jsonrpc-shutdown conn)))

;;;###autoload
(defun agentls-start ()
  "Start agentls for the current project, unless it is already running."
  (interactive)
  (let ((conn (agentls--connection)))
    (message "agentls: serving %s (%s)" (agentls-connection-root conn)
             (or (plist-get (agentls-connection-server-info conn) :version) "unknown version"))
    conn))

;;;###autoload
(defun agentls-shutdown (&optional root)
  "Shut down the agentls of the project at ROOT (default: this project)."
  (interactive)
  (let ((conn (agentls--live-connection root)))
    (if (not conn)
        (when (called-interactively-p 'interactive)
          (message "agentls: not running for %s" (agentls--project-root)))
      (agentls--stop-connection conn))))

(defun agentls-shutdown-all ()
  "Shut down every agentls process."
  (interactive)
  (dolist (conn (hash-table-values agentls--connections))
    (ignore-errors (agentls--stop-connection conn))))

(defun agentls-reconfigure ()
  "Send the current customizations to every running agentls.
They apply to tasks started afterwards."
  (interactive)
  (dolist (conn (hash-table-values agentls--connections))
    (when (jsonrpc-running-p conn)
      (jsonrpc-notify conn 'workspace/didChangeConfiguration
                      (list :settings (list :agentls (agentls--initialization-options)))))))

;;;; Requests to the server

(defun agentls--request (conn method params &rest args)
  "Send the request METHOD with PARAMS on CONN and wait for its result.
ARGS are those of `jsonrpc-request'.  jsonrpc.el 1.0.14 returns from
its process filter by a throw as soon as the reply is read, leaving
any message that came in the same read unparsed until more output
arrives (a run's final reply right after the reply to agent/stop would
wait forever): parse what is left once the result is in."
  (unwind-protect (apply #'jsonrpc-request conn method params args)
    (let ((process (jsonrpc--process conn)))
      (when (buffer-live-p (process-buffer process))
        (jsonrpc--process-filter process "")))))

;;;; Replies that come later

;; jsonrpc.el answers a request with whatever its dispatcher returns, from
;; inside the process filter.  Questions to the person and commands must not
;; block there, so their dispatchers return an `agentls--reply', which the
;; :around method below keeps instead of sending; the answer goes out once the
;; person answered or the command ended.

(cl-defstruct (agentls--reply (:constructor agentls--reply-create)
                              (:copier nil))
  "A request from the server whose answer comes later."
  (connection nil :documentation "The connection the request came on.")
  (id nil :documentation "The request id, once jsonrpc has given it.")
  (outcome nil :documentation "(:result R) or (:error E) once known.")
  (cancel nil :documentation "Function run if the server cancels it.")
  (sent nil :documentation "Non-nil once answered."))

(cl-defmethod jsonrpc-connection-send :around ((conn agentls-connection) &rest args)
  "Hold back replies that come later on CONN; send everything else (ARGS)."
  (let ((result (plist-get args :result)))
    (if (not (agentls--reply-p result))
        (cl-call-next-method)
      (setf (agentls--reply-id result) (plist-get args :id))
      (if (agentls--reply-outcome result)
          (agentls--reply-send result)
        (puthash (plist-get args :id) result (agentls-connection-pending conn))))))

(defun agentls--reply-send (reply)
  "Send REPLY's outcome, once, if its id is known."
  (when (and (agentls--reply-id reply) (not (agentls--reply-sent reply)))
    (setf (agentls--reply-sent reply) t)
    (let ((conn (agentls--reply-connection reply)))
      (remhash (agentls--reply-id reply) (agentls-connection-pending conn))
      (when (jsonrpc-running-p conn)
        (apply #'jsonrpc-connection-send conn :id (agentls--reply-id reply)
               (agentls--reply-outcome reply))))))

(defun agentls--reply-resolve (reply outcome)
  "Answer REPLY with OUTCOME, (:result R) or (:error (:code C :message M))."
  (unless (agentls--reply-outcome reply)
    (setf (agentls--reply-outcome reply) outcome)
    (agentls--reply-send reply)))

(defun agentls--reply-abort (reply)
  "The server no longer wants REPLY: stop the work and answer -32800."
  (let ((cancel (agentls--reply-cancel reply)))
    (setf (agentls--reply-cancel reply) nil)
    (agentls--reply-resolve reply '(:error (:code -32800 :message "cancelled")))
    (when cancel (funcall cancel))))

;;;; Questions to the person, one at a time

(defvar agentls--prompt-queue nil
  "Questions waiting for the minibuffer: a list of (REPLY FUNCTION DISMISSED).")

(defvar agentls--prompt-active nil
  "The `agentls--reply' whose question is in the minibuffer, or nil.")

(defun agentls--defer-prompt (conn function &optional dismissed)
  "Answer the current request on CONN with the value of FUNCTION.
FUNCTION runs later, outside the process filter and after every
question queued before it, so it may use the minibuffer.  When the
person quits it (\[keyboard-quit]), the answer is DISMISSED.  Returns
the `agentls--reply' that the dispatcher hands back to jsonrpc."
  (let ((reply (agentls--reply-create :connection conn)))
    (setf (agentls--reply-cancel reply)
          (lambda ()
            (if (eq agentls--prompt-active reply)
                ;; The question is in the minibuffer: leave it.  Done from
                ;; a timer, which runs inside the minibuffer's wait.
                (agentls--withdraw reply)
              (setq agentls--prompt-queue (cl-remove reply agentls--prompt-queue :key #'car)))))
    (setq agentls--prompt-queue (append agentls--prompt-queue (list (list reply function dismissed))))
    (agentls--schedule-prompt)
    reply))

(defun agentls--withdraw (reply)
  "Leave the minibuffer of REPLY's question, from a timer, once it is safe."
  (run-at-time (if agentls--stopping 0.1 0) nil
               (lambda ()
                 (when (eq agentls--prompt-active reply)
                   (if agentls--stopping
                       (agentls--withdraw reply)
                     (message "agentls: the question was withdrawn")
                     (ignore-errors (throw reply nil)))))))

(defun agentls--schedule-prompt ()
  "Arrange for the next queued question to be asked."
  (when (and agentls--prompt-queue (not agentls--prompt-active))
    (run-at-time 0 nil #'agentls--next-prompt)))

(defun agentls--next-prompt ()
  "Ask the next queued question and send its answer."
  (when-let ((item (and (not agentls--prompt-active) (pop agentls--prompt-queue))))
    (pcase-let ((`(,reply ,function ,dismissed) item))
      (setq agentls--prompt-active reply)
      (unwind-protect
          (let ((outcome
                 (catch reply
                   (condition-case err
                       (list :result (funcall function))
                     ;; C-g: the person dismissed it, which the server
                     ;; must hear, or the task waits for ever.
                     (quit (list :result dismissed))
                     (jsonrpc-error
                      (list :error (list :code (or (alist-get 'jsonrpc-error-code (cdr err)) -32603)
                                         :message (or (alist-get 'jsonrpc-error-message (cdr err))
                                                      "internal error"))))
                     (error (list :error (list :code -32603
                                               :message (error-message-string err))))))))
            (when outcome (agentls--reply-resolve reply outcome)))
        (setq agentls--prompt-active nil)
        (agentls--schedule-prompt)))))

(defun agentls--ask (params)
  "Answer agent/ask PARAMS: the person's answer, or null when dismissed."
  (let* ((question (or (plist-get params :question) "The agent asks:"))
         (options (append (plist-get params :options) nil))
         (prompt (format "agentls: %s " (string-trim-right question)))
         (answer (condition-case nil
                     (if options
                         (completing-read prompt options nil nil)
                       (read-string prompt))
                   (quit nil))))
    (list :answer answer)))

(defun agentls--show-message-request (params)
  "Answer window/showMessageRequest PARAMS with the chosen action, or null."
  (let* ((actions (append (plist-get params :actions) nil))
         (titles (mapcar (lambda (a) (plist-get a :title)) actions))
         (text (or (plist-get params :message) "")))
    (if (null actions)
        (progn (message "agentls: %s" text) nil)
      (let ((choice (condition-case nil
                        (completing-read (format "agentls: %s " (string-trim-right text))
                                         titles nil t nil nil (car titles))
                      (quit nil))))
        (and choice (cl-find choice actions :key (lambda (a) (plist-get a :title))
                             :test #'equal))))))

;;;; Requests from the server

(defun agentls--handle-request (conn method params)
  "Answer the request METHOD with PARAMS that arrived on CONN."
  (pcase method
    ('agent/readFile (agentls--read-file conn params))
    ('agent/ask (agentls--defer-prompt conn (lambda () (agentls--ask params)) (list :answer nil)))
    ('window/showMessageRequest
     (agentls--defer-prompt conn (lambda () (agentls--show-message-request params))))
    ('workspace/applyEdit (agentls--apply-edit-request conn params))
    ('agent/runCommand (agentls--run-command conn params))
    ('window/workDoneProgress/create nil)
    (_ (jsonrpc-error :code -32601 :message (format "method not found: %s" method)))))

(defun agentls--file-of (conn params)
  "Return the absolute file name PARAMS (with :uri or :path) name on CONN.
Signal a -32602 error when it names none or one outside the project."
  (let* ((root (agentls-connection-root conn))
         (file (or (agentls--uri-to-path (plist-get params :uri))
                   (and (stringp (plist-get params :path))
                        (expand-file-name (plist-get params :path) root)))))
    (unless file
      (jsonrpc-error :code -32602 :message "invalid params: neither uri nor path given"))
    (unless (agentls--inside-p file root)
      (jsonrpc-error :code -32602 :message (format "%s is outside the project %s" file root)))
    file))

(defun agentls--inside-p (file root)
  "Return non-nil when FILE is inside the directory ROOT."
  (string-prefix-p (file-name-as-directory (file-truename root)) (file-truename file)))

(defun agentls--buffer-text (buffer)
  "Return the whole text of BUFFER, without properties."
  (with-current-buffer buffer
    (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max)))))

(defun agentls--read-file (conn params)
  "Answer agent/readFile PARAMS on CONN: a buffer's text, else the file's."
  (let* ((file (agentls--file-of conn params))
         (buffer (find-buffer-visiting file)))
    (cond
     (buffer (list :content (agentls--buffer-text buffer)))
     ((file-regular-p file)
      (with-temp-buffer
        (insert-file-contents file)
        (list :content (buffer-string))))
     (t (jsonrpc-error :code -32602
                       :message (format "cannot read %s: no such file"
                                        (or (plist-get params :path) file)))))))

;;;; Commands the agent runs

(defun agentls--run-command (conn params)
  "Run agent/runCommand PARAMS of CONN in a subprocess; answer when it ends."
  (let* ((command (plist-get params :command))
         (cwd (plist-get params :cwd))
         (timeout-ms (plist-get params :timeoutMs))
         (root (agentls-connection-root conn)))
    (unless (and (stringp command) (not (string-empty-p command)))
      (jsonrpc-error :code -32602 :message "invalid params: \"command\" is required"))
    (setq cwd (if (and (stringp cwd) (not (string-empty-p cwd))) cwd root))
    (unless (file-directory-p cwd)
      (jsonrpc-error :code -32602 :message (format "invalid params: cwd %s is not a directory" cwd)))
    (let* ((reply (agentls--reply-create :connection conn))
           (buffer (generate-new-buffer " *agentls-command*" t))
           (timed-out nil)
           (timer nil)
           (default-directory (file-name-as-directory cwd))
           (process-environment
            (agentls--command-environment (plist-get params :unsetEnv)))
           (process
            (make-process
             :name "agentls-command"
             :buffer buffer
             :command (list "sh" "-c" command)
             :connection-type 'pipe
             :coding 'utf-8-unix
             :noquery t
             :sentinel
             (lambda (proc _event)
               (unless (process-live-p proc)
                 (when timer (cancel-timer timer))
                 (let ((output (agentls--command-output (process-buffer proc)))
                       (code (if (eq (process-status proc) 'signal)
                                 (+ 128 (process-exit-status proc))
                               (process-exit-status proc))))
                   (kill-buffer (process-buffer proc))
                   (agentls--reply-resolve
                    reply (list :result (append (list :exitCode code :output output)
                                                (and timed-out (list :timedOut t)))))))))))
      ;; No input: a command that reads stdin sees its end.  A quick
      ;; command may be gone already, which is fine.
      (ignore-errors (process-send-eof process))
      (when (and (numberp timeout-ms) (> timeout-ms 0))
        (setq timer (run-at-time (/ timeout-ms 1000.0) nil
                                 (lambda ()
                                   (when (process-live-p process)
                                     (setq timed-out t)
                                     (kill-process process))))))
      ;; Emacs runs the command in its own process group: killing the
      ;; process kills everything the command started.
      (setf (agentls--reply-cancel reply)
            (lambda ()
              (when timer (cancel-timer timer))
              (when (process-live-p process) (kill-process process))))
      reply)))

(defun agentls--command-environment (unset)
  "Return `process-environment' without the variables named in UNSET.
UNSET is agent/runCommand's unsetEnv (a vector or list of names): the
secrets agentls knows of, which a command the model asked for must not
inherit.  A bare name in front of `process-environment' unsets it."
  (append (seq-filter (lambda (name) (and (stringp name) (not (string-empty-p name))))
                      (append unset nil))
          process-environment))

(defun agentls--command-output (buffer)
  "Return BUFFER's text, cut in the middle to `agentls-command-output-limit' bytes."
  (with-current-buffer buffer
    (let ((text (buffer-substring-no-properties (point-min) (point-max)))
          (limit agentls-command-output-limit))
      (if (<= (string-bytes text) limit)
          text
        (let* ((half (/ limit 2))
               (head (substring text 0 (min (length text) half)))
               (tail (substring text (max 0 (- (length text) half)))))
          ;; Characters may take several bytes: trim until it fits.
          (while (> (string-bytes head) half) (setq head (substring head 0 -1)))
          (while (> (string-bytes tail) half) (setq tail (substring tail 1)))
          (concat head "\n[… output cut …]\n" tail))))))

;;;; Applying edits

(define-error 'agentls-edit-refused "The edit cannot be applied")

(cl-defstruct (agentls--file (:constructor agentls--file-create)
                             (:copier nil))
  "A file while a workspace edit is being checked."
  (name nil :documentation "Absolute file name.")
  (buffer nil :documentation "The buffer visiting it, if any.")
  (tick nil :documentation "The buffer's modification tick when checked.")
  (existed nil :documentation "Whether it existed before the edit.")
  (exists nil :documentation "Whether it exists after the edit so far.")
  (original nil :documentation "Its text before the edit.")
  (text nil :documentation "Its text after the edit so far.")
  (coding nil :documentation "Coding system to write it with.")
  (batches nil :documentation "Lists of text edits applied to it, in order.")
  (replaced nil :documentation "Non-nil when it was deleted or created anew.")
  (touched nil :documentation "Non-nil when the edit changes it."))

(defun agentls--refuse (index format-string &rest args)
  "Refuse the edit at change INDEX with a reason made of FORMAT-STRING and ARGS."
  (signal 'agentls-edit-refused (list index (apply #'format-message format-string args))))

(defun agentls--lsp-position (pos)
  "Return the point of LSP position POS in the current buffer, or nil.
Columns count UTF-16 code units.  As editors do, a column past the
end of its line means the end of the line, and a line past the end
of the text means the end of the text.  nil means POS is malformed."
  (let ((line (plist-get pos :line))
        (col (plist-get pos :character)))
    (when (and (natnump line) (natnump col))
      (save-excursion
        (goto-char (point-min))
        (if (not (and (zerop (forward-line line)) (or (< line 1) (bolp))))
            (point-max)
          (while (and (> col 0) (not (eolp))
                      (<= (if (> (char-after) #xFFFF) 2 1) col))
            (setq col (- col (if (> (char-after) #xFFFF) 2 1)))
            (forward-char))
          (point))))))

(cl-defun agentls--apply-text-edits (edits)
  "Apply the LSP text EDITS (a sequence) to the current buffer.
Return nil, or a string saying why they cannot be applied; in that
case the buffer is left as it was."
  (let (spans)
    (cl-loop for edit across (vconcat edits)
             for i from 0
             for range = (plist-get edit :range)
             for beg = (agentls--lsp-position (plist-get range :start))
             for end = (agentls--lsp-position (plist-get range :end))
             do (cond
                 ((not (and beg end))
                  (cl-return-from agentls--apply-text-edits
                    (format "text edit %d: range %S is outside the text" i range)))
                 ((> beg end)
                  (cl-return-from agentls--apply-text-edits
                    (format "text edit %d: range ends before it starts" i)))
                 (t (push (list beg end (or (plist-get edit :newText) "") i) spans))))
    (setq spans (sort (nreverse spans)
                      (lambda (a b) (or (< (car a) (car b))
                                        (and (= (car a) (car b)) (< (nth 3 a) (nth 3 b)))))))
    (cl-loop for (a b) on spans while b
             when (> (nth 1 a) (car b))
             do (cl-return-from agentls--apply-text-edits
                  (format "text edits %d and %d overlap" (nth 3 a) (nth 3 b))))
    (save-excursion
      (dolist (span (reverse spans))
        (pcase-let ((`(,beg ,end ,text ,_) span))
          (unless (equal (buffer-substring-no-properties beg end) text)
            (goto-char beg)
            (delete-region beg end)
            (insert text)))))
    nil))

(defun agentls--edit-changes (edit)
  "Return the list of edits and file operations of WorkspaceEdit EDIT.
Each is (text URI VERSION EDITS), (create URI OPTIONS) or (delete URI OPTIONS)."
  (let ((document-changes (plist-get edit :documentChanges))
        (changes (plist-get edit :changes)))
    (if (and document-changes (> (length document-changes) 0))
        (cl-loop for change across document-changes
                 for kind = (plist-get change :kind)
                 collect (pcase kind
                           ("create" (list 'create (plist-get change :uri) (plist-get change :options)))
                           ("delete" (list 'delete (plist-get change :uri) (plist-get change :options)))
                           ((or 'nil "") (let ((doc (plist-get change :textDocument)))
                                           (list 'text (plist-get doc :uri) (plist-get doc :version)
                                                 (plist-get change :edits))))
                           (_ (list 'unsupported kind))))
      ;; `changes' keys arrive as keywords such as :file:///a/b.
      (sort (cl-loop for (key edits) on changes by #'cddr
                     collect (list 'text (substring (symbol-name key) 1) nil edits))
            (lambda (a b) (string< (nth 1 a) (nth 1 b)))))))

(defun agentls--needs-confirmation-p (edit)
  "Return non-nil when a change of EDIT carries an annotation to confirm."
  (let ((annotations (plist-get edit :changeAnnotations))
        (ids nil))
    (cl-loop for change across (or (plist-get edit :documentChanges) [])
             do (when-let ((id (plist-get change :annotationId))) (push id ids))
             (cl-loop for e across (or (plist-get change :edits) [])
                      do (when-let ((id (plist-get e :annotationId))) (push id ids))))
    (cl-some (lambda (id)
               (eq t (plist-get (plist-get annotations (intern (concat ":" id)))
                                :needsConfirmation)))
             ids)))

(defun agentls--stage-edit (conn edit)
  "Check every change of EDIT on CONN without touching anything.
Return the list of `agentls--file' it changes, in order.  Signal
`agentls-edit-refused' with the failing change's index and the reason."
  (let ((root (agentls-connection-root conn))
        (files nil))
    (cl-flet ((fetch (index uri)
                (let ((name (agentls--uri-to-path uri)))
                  (unless name (agentls--refuse index "%s is not a file:// URI" uri))
                  (setq name (expand-file-name name))
                  (unless (agentls--inside-p name root)
                    (agentls--refuse index "%s is outside the project %s" name root))
                  (or (cl-find name files :key #'agentls--file-name :test #'equal)
                      (let* ((buffer (find-buffer-visiting name))
                             (f (agentls--file-create :name name :buffer buffer)))
                        (cond
                         (buffer
                          (setf (agentls--file-tick f) (buffer-chars-modified-tick buffer)
                                (agentls--file-existed f) t
                                (agentls--file-text f) (agentls--buffer-text buffer)))
                         ((file-directory-p name)
                          (agentls--refuse index "%s is a directory" name))
                         ((file-exists-p name)
                          (with-temp-buffer
                            (condition-case err (insert-file-contents name)
                              (file-error (agentls--refuse index "cannot read %s: %s" name
                                                           (error-message-string err))))
                            (setf (agentls--file-existed f) t
                                  (agentls--file-coding f) last-coding-system-used
                                  (agentls--file-text f) (buffer-string)))))
                        (setf (agentls--file-exists f) (agentls--file-existed f)
                              (agentls--file-original f) (agentls--file-text f))
                        (setq files (append files (list f)))
                        f)))))
      (cl-loop
       for change in (agentls--edit-changes edit)
       for index from 0
       do (pcase change
            (`(text ,uri ,_version ,edits)
             (let ((f (fetch index uri)))
               (unless (agentls--file-exists f)
                 (agentls--refuse index "%s does not exist" uri))
               (with-temp-buffer
                 (insert (agentls--file-text f))
                 (when-let ((why (agentls--apply-text-edits edits)))
                   (agentls--refuse index "%s: %s" uri why))
                 (setf (agentls--file-text f) (buffer-string)))
               (setf (agentls--file-touched f) t
                     (agentls--file-batches f) (append (agentls--file-batches f) (list edits)))))
            (`(create ,uri ,options)
             (let ((f (fetch index uri)))
               (if (and (agentls--file-exists f) (not (eq t (plist-get options :overwrite))))
                   (unless (eq t (plist-get options :ignoreIfExists))
                     (agentls--refuse index "%s already exists" uri))
                 (setf (agentls--file-exists f) t (agentls--file-text f) ""
                       (agentls--file-replaced f) t (agentls--file-touched f) t))))
            (`(delete ,uri ,options)
             (let ((f (fetch index uri)))
               (cond
                ((not (agentls--file-exists f))
                 (unless (eq t (plist-get options :ignoreIfNotExists))
                   (agentls--refuse index "%s does not exist" uri)))
                ((and (agentls--file-buffer f)
                      (buffer-modified-p (agentls--file-buffer f)))
                 (agentls--refuse index "%s has unsaved changes in buffer %s; save or revert it first"
                                  uri (buffer-name (agentls--file-buffer f))))
                (t (setf (agentls--file-exists f) nil (agentls--file-text f) nil
                         (agentls--file-replaced f) t (agentls--file-touched f) t)))))
            (`(unsupported ,kind)
             (agentls--refuse index "resource operation %S is not supported" kind)))))
    (cl-remove-if-not #'agentls--file-touched files)))

(defun agentls--write-temp (f)
  "Write F's new text to a temporary file beside it; return that file's name."
  (let* ((name (agentls--file-name f))
         (dir (file-name-directory name))
         (coding-system-for-write (or (agentls--file-coding f) 'utf-8-unix))
         (write-region-inhibit-fsync nil))
    (make-directory dir t)
    ;; The temporary file is named as agentls names its own
    ;; (.NAME.agentls-RANDOM.tmp), so the server sweeps a crash's leftover.
    (let ((temp (make-temp-file (expand-file-name (concat "." (file-name-nondirectory name) ".agentls-") dir)
                                nil ".tmp")))
      (condition-case err
          (progn
            (write-region (agentls--file-text f) nil temp nil 'silent)
            (when (file-exists-p name)
              (set-file-modes temp (file-modes name)))
            temp)
        (error (ignore-errors (delete-file temp))
               (signal (car err) (cdr err)))))))

(defun agentls--commit-edit (files)
  "Apply the checked FILES of a workspace edit.
Buffers change in one undo step each; files nobody visits are
replaced atomically.  Return nil, or the reason nothing was applied."
  (catch 'refused
    ;; A buffer that changed since it was checked (while the person was
    ;; reading the proposal) would receive edits meant for other text.
    (dolist (f files)
      (let ((buffer (agentls--file-buffer f)))
        (when (and buffer (or (not (buffer-live-p buffer))
                              (/= (buffer-chars-modified-tick buffer) (agentls--file-tick f))))
          (throw 'refused (format "%s changed while the edit was pending" (agentls--file-name f))))))
    ;; Phase 1: new contents of unvisited files, beside them, in temporary files.
    (let ((temps nil))
      (condition-case err
          (dolist (f files)
            (when (and (not (agentls--file-buffer f)) (agentls--file-exists f))
              (push (cons f (agentls--write-temp f)) temps)))
        (error
         (dolist (temp temps) (ignore-errors (delete-file (cdr temp))))
         (throw 'refused (format "cannot write: %s" (error-message-string err)))))
      ;; Phase 2: renames, deletions and buffer edits.
      (dolist (f files)
        (let ((name (agentls--file-name f))
              (buffer (agentls--file-buffer f)))
          (cond
           ((not (agentls--file-exists f))
            (when (file-exists-p name) (delete-file name))
            (when (buffer-live-p buffer)
              (with-current-buffer buffer (set-buffer-modified-p nil))
              (kill-buffer buffer)))
           (buffer (agentls--edit-buffer buffer f))
           (t (rename-file (cdr (assq f temps)) name t))))))
    nil))

(defun agentls--edit-buffer (buffer f)
  "Apply F's edits to BUFFER as one undo step."
  (with-current-buffer buffer
    (save-restriction
      (widen)
      (let ((group (prepare-change-group))
            (inhibit-read-only t)
            (done nil))
        (undo-boundary)
        (unwind-protect
            (progn
              (activate-change-group group)
              (if (agentls--file-replaced f)
                  (progn (erase-buffer) (insert (agentls--file-text f)))
                (dolist (edits (agentls--file-batches f))
                  (when-let ((why (agentls--apply-text-edits edits)))
                    (error "%s" why))))
              (setq done t))
          (if done
              (progn (accept-change-group group)
                     (undo-amalgamate-change-group group))
            (cancel-change-group group)))
        (undo-boundary)
        (message "agentls: edited %s" (buffer-name))))))

(defun agentls-confirm-edit (label files diff-buffer)
  "Show DIFF-BUFFER and ask whether to apply the change LABEL to FILES."
  (display-buffer diff-buffer)
  (y-or-n-p (format "Apply %s to %s? " (if (string-empty-p label) "this change" label)
                    (mapconcat #'file-name-nondirectory files ", "))))

(defun agentls--diff-buffer (files root)
  "Return a buffer with the unified diff of the checked FILES under ROOT."
  (let ((buffer (get-buffer-create "*agentls-proposal*")))
    (with-current-buffer buffer
      ;; diff runs in the buffer's directory: the project's, not that of
      ;; the project whose proposal made the buffer (maybe gone since).
      (setq default-directory (file-name-as-directory root))
      (let ((inhibit-read-only t))
        (erase-buffer)
        (dolist (f files)
          (let ((rel (file-relative-name (agentls--file-name f) root))
                (old (make-temp-file "agentls-old"))
                (new (make-temp-file "agentls-new")))
            (unwind-protect
                (progn
                  (let ((coding-system-for-write 'utf-8-unix))
                    (write-region (or (agentls--file-original f) "") nil old nil 'silent)
                    (write-region (or (agentls--file-text f) "") nil new nil 'silent))
                  (let ((coding-system-for-read 'utf-8-unix))
                    (when (not (eql 0 (ignore-errors
                                        (call-process "diff" nil t nil "-u"
                                                      "--label" (if (agentls--file-existed f) (concat "a/" rel) "/dev/null")
                                                      "--label" (if (agentls--file-exists f) (concat "b/" rel) "/dev/null")
                                                      old new))))
                      nil)))
              (delete-file old)
              (delete-file new)))))
      (goto-char (point-min))
      (when (fboundp 'diff-mode) (diff-mode))
      (setq buffer-read-only t))
    buffer))

(defun agentls--apply-edit (conn params &optional confirm)
  "Apply workspace/applyEdit PARAMS of CONN; ask first when CONFIRM.
Return the ApplyWorkspaceEditResult plist."
  (let ((label (or (plist-get params :label) ""))
        (edit (plist-get params :edit)))
    (condition-case err
        (let ((files (agentls--stage-edit conn edit)))
          (if (and confirm
                   (not (funcall agentls-confirm-edit-function label
                                 (mapcar #'agentls--file-name files)
                                 (agentls--diff-buffer files (agentls-connection-root conn)))))
              (list :applied :json-false :failureReason "the user rejected the change")
            ;; No C-g half-way through: the edit lands whole or not at all.
            (let ((why (let ((inhibit-quit t)) (agentls--commit-edit files))))
              (if why
                  (list :applied :json-false :failureReason why)
                (list :applied t)))))
      (agentls-edit-refused
       (list :applied :json-false :failureReason (nth 2 err) :failedChange (nth 1 err))))))

(defun agentls--apply-edit-request (conn params)
  "Answer workspace/applyEdit PARAMS on CONN.
An edit to confirm waits for the person; any other applies at once."
  (if (agentls--needs-confirmation-p (plist-get params :edit))
      (agentls--defer-prompt conn (lambda () (agentls--apply-edit conn params t))
                             (list :applied :json-false :failureReason "the user rejected the change"))
    (agentls--apply-edit conn params)))

;;;; Notifications from the server

(defun agentls--handle-notification (conn method params)
  "Handle the notification METHOD with PARAMS that arrived on CONN."
  (pcase method
    ('agent/taskUpdate (agentls--task-update conn params))
    ('agent/heatUpdate (agentls--heat-update conn params))
    ('$/progress (agentls--progress conn params))
    ('$/cancelRequest
     (when-let ((reply (gethash (plist-get params :id) (agentls-connection-pending conn))))
       (agentls--reply-abort reply)))
    ((or 'window/logMessage 'window/showMessage)
     (agentls--log conn params (eq method 'window/showMessage)))
    (_ nil)))

(defun agentls--log (conn params show)
  "Log the window/logMessage PARAMS of CONN; echo them when SHOW or serious."
  (let ((type (or (plist-get params :type) 4))
        (text (or (plist-get params :message) "")))
    (with-current-buffer (get-buffer-create "*agentls-log*")
      (let ((inhibit-read-only t))
        (goto-char (point-max))
        (insert (format "%s %s %s: %s\n" (format-time-string "%T")
                        (jsonrpc-name conn)
                        (pcase type (1 "error") (2 "warning") (3 "info") (_ "log"))
                        text)))
      (setq buffer-read-only t))
    (when (or show (<= type 2))
      (message "agentls: %s" text))))

(defun agentls--task (conn id)
  "Return CONN's task ID, creating it if the server started it."
  (let ((tasks (agentls-connection-tasks conn)))
    (or (gethash id tasks)
        (puthash id (agentls--make-task :id id :connection conn) tasks))))

(defun agentls--task-update (conn params)
  "Apply the agent/taskUpdate PARAMS of CONN to its task."
  (let* ((task (agentls--task conn (plist-get params :taskId)))
         (seq (or (plist-get params :seq) 0)))
    (when (> seq (agentls-task-seq task))
      (setf (agentls-task-seq task) seq
            (agentls-task-session task) (or (plist-get params :sessionId) (agentls-task-session task)))
      ;; The run's reply settles the final state; a late update must not undo it.
      (unless (agentls-task-result task)
        (setf (agentls-task-state task) (or (plist-get params :state) (agentls-task-state task))))
      (when-let ((subtasks (plist-get params :subtasks)))
        (setf (agentls-task-subtasks task) (append subtasks nil)))
      (when-let ((event (plist-get params :event)))
        ;; A steps event tells of the engine's plan, which is its subtask's:
        ;; the transcript gets it with the event.
        (when (equal (plist-get event :kind) "steps")
          (let ((sub (cl-find (plist-get event :subtaskId) (agentls-task-subtasks task)
                              :key (lambda (s) (plist-get s :id)) :test #'equal)))
            (setq event (append event (list :steps (plist-get sub :steps))))))
        (push event (agentls-task-events task))
        (when (> (length (agentls-task-events task)) 200)
          (setcdr (nthcdr 199 (agentls-task-events task)) nil))
        (pcase (plist-get event :kind)
          ("usage" (setf (agentls-task-usage task) event))
          ("thinking" (cl-pushnew (or (plist-get event :subtaskId) "") (agentls-task-thinking task)
                                  :test #'equal))
          ((or "messageDelta" "message" "toolCall" "subtaskFinished")
           (setf (agentls-task-thinking task)
                 (delete (or (plist-get event :subtaskId) "") (agentls-task-thinking task)))))
        (when (and (equal (plist-get event :kind) "stateChanged") (plist-get event :applied))
          (setf (agentls-task-counts task)
                (cons (plist-get event :applied) (or (plist-get event :rejected) 0))))
        (unless (agentls-task-result task)
          (agentls--transcript-add task event))
        (agentls--announce-event task event))
      (agentls--refresh-views))))

(defun agentls--announce-event (task event)
  "Echo the parts of TASK's EVENT the person should notice."
  (pcase (plist-get event :kind)
    ("blocked" (message "agentls: %s blocked: %s" (agentls-task-id task)
                        (or (plist-get event :reason) "")))
    ("changeRejected" (message "agentls: change to %s rejected" (plist-get event :path)))))

(defun agentls--progress (conn params)
  "Show the $/progress PARAMS of CONN in its task's progress."
  (let* ((token (plist-get params :token))
         (value (plist-get params :value))
         (task (and (stringp token) (gethash token (agentls-connection-tasks conn)))))
    (when task
      (pcase (plist-get value :kind)
        ("end" (setf (agentls-task-progress task) 100))
        (_ (when-let ((pct (plist-get value :percentage)))
             (setf (agentls-task-progress task) pct))))
      (when-let ((msg (plist-get value :message)))
        (setf (agentls-task-progress-message task) msg))
      (agentls--refresh-mode-line))))

;;;; Running and stopping tasks

(defun agentls--new-task-id ()
  "Return a fresh task id."
  (format "emacs-%s" (substring (md5 (format "%s %s %s %s" (emacs-pid) (float-time)
                                             (random) (buffer-name)))
                                0 12)))

(defun agentls--region-context ()
  "Return the active region or, with one prefix argument, the buffer, as context.
The context is a string naming where the text comes from, or nil."
  (let ((file (and buffer-file-name
                   (file-relative-name buffer-file-name (agentls--project-root))))
        beg end)
    (cond ((use-region-p) (setq beg (region-beginning) end (region-end)))
          ((equal current-prefix-arg '(4)) (setq beg (point-min) end (point-max))))
    (when beg
      (let ((last (if (and (> end beg) (save-excursion (goto-char end) (bolp))) (1- end) end)))
        (format "\n\nContext from %s, lines %d-%d:\n```\n%s\n```"
                (or file (buffer-name))
                (line-number-at-pos beg) (line-number-at-pos last)
                (string-remove-suffix "\n" (buffer-substring-no-properties beg end)))))))

;;;###autoload
(defun agentls-run (prompt &optional context session-id intent model engine)
  "Ask the agent to do PROMPT in the current project; return the task id.
Interactively the active region, or with a prefix argument the whole
buffer, goes along as CONTEXT.  SESSION-ID continues an earlier
conversation.  The task works under INTENT and with MODEL; nil means
those chosen for the project with `agentls-select-intent' and
`agentls-select-model' (\"none\" and \"default\" mean no intent and the
model setting).  ENGINE runs every subtask on that engine (\"agentls\":
the built-in worker; nil: as the plan says; see `agentls-run-on-engine').
With two prefix arguments, the intent, the model and the engine of this
task are asked for.  The task runs in the background: see
`agentls-tasks' and `agentls-transcript'."
  (interactive
   (let* ((choose (equal current-prefix-arg '(16)))
          (conn (and choose (agentls--connection))))
     (list (read-string (if (or (use-region-p) (equal current-prefix-arg '(4)))
                            "agentls (with context): " "agentls: ")
                        nil 'agentls--prompt-history)
           (agentls--region-context)
           nil
           (and choose (or (agentls--read-intent conn "agentls: intent of this task: ") "none"))
           (and choose (or (agentls--read-model conn "agentls: model of this task: ") "default"))
           (and choose (agentls--read-engine conn "agentls: engine of this task: ")))))
  (when (string-empty-p (string-trim prompt))
    (user-error "The prompt is empty"))
  (let* ((conn (agentls--connection))
         (id (agentls--new-task-id))
         (task (agentls--make-task :id id :connection conn :prompt prompt :session session-id))
         (intent (pcase intent ("none" nil) ('nil (agentls-connection-intent conn)) (_ intent)))
         (model (pcase model ("default" nil) ('nil (agentls-connection-model conn)) (_ model)))
         ;; The run takes what `agentls-attach' gathered.
         (attachments (prog1 (agentls-connection-attachments conn)
                        (setf (agentls-connection-attachments conn) nil))))
    (puthash id task (agentls-connection-tasks conn))
    (jsonrpc-async-request
     conn 'agent/run
     (append (list :prompt (concat prompt (or context "")) :taskId id :workDoneToken id)
             (and attachments (list :attachments (vconcat attachments)))
             (and session-id (list :sessionId session-id))
             (and intent (list :intentId intent))
             (and model (list :model model))
             (and engine (list :engine engine)))
     :timeout nil
     :success-fn (lambda (result) (agentls--task-finished task result))
     :error-fn (jsonrpc-lambda (&key code message &allow-other-keys)
                 (agentls--task-finished
                  task (list :taskId id :state "failed"
                             :summary (format "%s (%s)" message code)))))
    (agentls--refresh-views)
    (message "agentls: task %s started" id)
    id))

(defvar agentls--prompt-history nil
  "Prompts given to `agentls-run'.")

(defconst agentls--plan-decides "plan decides"
  "The answer of `agentls--read-engine' that leaves the engines to the plan.")

(defun agentls-engines (&optional conn probe)
  "Return the engines of CONN's server (agent/engines), a list of plists.
Each has :name, :version, :command, :source, :isolated, :usable and
:reason.  With PROBE each usable engine is started to ask its version."
  (let ((conn (or conn (agentls--connection))))
    (append (plist-get (agentls--request conn 'agent/engines (if probe (list :probe t) (make-hash-table))
                                         :timeout (if probe 90 30))
                       :engines)
            nil)))

(defun agentls--read-engine (conn prompt)
  "Read an engine of CONN's server with PROMPT; nil for the plan's choice.
The choices are the usable engines of agent/engines and \"agentls\", the
built-in worker."
  (let* ((engines (agentls-engines conn))
         (usable (cl-loop for e in engines when (eq t (plist-get e :usable)) collect e))
         (names (append (list agentls--plan-decides "agentls") (mapcar (lambda (e) (plist-get e :name)) usable)))
         (completion-extra-properties
          (list :annotation-function
                (lambda (name)
                  (cond ((equal name agentls--plan-decides) "  each subtask where the plan puts it")
                        ((equal name "agentls") "  agentls's own workers")
                        (t (let ((e (cl-find name usable :key (lambda (e) (plist-get e :name)) :test #'equal)))
                             (format "  %s" (or (plist-get e :version) "")))))))))
    (let ((choice (completing-read prompt names nil t nil nil agentls--plan-decides)))
      (unless (or (string-empty-p choice) (equal choice agentls--plan-decides))
        choice))))

;;;###autoload
(defun agentls-run-on-engine (engine prompt &optional context)
  "Ask the agent to do PROMPT with every subtask on ENGINE; return the task id.
ENGINE is completed from the server's engines (agent/engines): Claude
Code, Codex, Gemini CLI, those of `agentls-engines', or \"agentls\" for
the built-in worker; nil leaves them to the plan.  CONTEXT is as for
`agentls-run'."
  (interactive
   (let ((engine (agentls--read-engine (agentls--connection) "agentls: run on engine: ")))
     (list engine
           (read-string (format "agentls on %s: " (or engine "the plan's engines")) nil 'agentls--prompt-history)
           (agentls--region-context))))
  (agentls-run prompt context nil nil nil engine))

(defconst agentls--image-extensions '("png" "jpg" "jpeg" "gif" "webp")
  "Extensions of the files attached as images.")

(defun agentls--attachment (file &optional first last)
  "Return the attachment of agent/run for FILE, an absolute file name.
An image by its extension, else a file, with its lines FIRST to LAST
\(1-based, both in) when given."
  (if (member (downcase (or (file-name-extension file) "")) agentls--image-extensions)
      (list :type "image" :path (expand-file-name file) :name (file-name-nondirectory file))
    (append (list :type "file" :path (expand-file-name file))
            ;; An end at character 0 leaves its line out: the line after LAST.
            (and first (list :range (list :start (list :line (1- first) :character 0)
                                          :end (list :line last :character 0)))))))

(defun agentls--describe-attachment (attachment root)
  "Say what ATTACHMENT is, its path relative to ROOT: \"main.go:5-7\"."
  (let ((path (file-relative-name (plist-get attachment :path) root))
        (range (plist-get attachment :range)))
    (cond ((equal (plist-get attachment :type) "image") (concat path " (image)"))
          (range (format "%s:%d-%d" path (1+ (plist-get (plist-get range :start) :line))
                         (plist-get (plist-get range :end) :line)))
          (t path))))

;;;###autoload
(defun agentls-attach (file &optional first last)
  "Attach FILE, or its lines FIRST to LAST, to the next task of the project.
Interactively: the lines of the active region, else with a prefix
argument a file or an image (png, jpeg, gif, webp) chosen in the
minibuffer, else the current file.  The next `agentls-run' sends them;
`agentls-detach' drops them."
  (interactive
   (cond ((and (use-region-p) buffer-file-name)
          (let* ((beg (region-beginning)) (end (region-end))
                 (last (if (and (> end beg) (save-excursion (goto-char end) (bolp))) (1- end) end)))
            (list buffer-file-name (line-number-at-pos beg) (line-number-at-pos last))))
         ((or current-prefix-arg (not buffer-file-name))
          (list (read-file-name "agentls: attach file or image: " nil nil t)))
         (t (list buffer-file-name))))
  (let ((conn (agentls--connection)))
    (setf (agentls-connection-attachments conn)
          (append (agentls-connection-attachments conn) (list (agentls--attachment file first last))))
    (message "agentls: attached to the next task: %s"
             (mapconcat (lambda (a) (agentls--describe-attachment a (agentls-connection-root conn)))
                        (agentls-connection-attachments conn) ", "))))

(defun agentls-detach ()
  "Drop the attachments gathered for the next task of the project."
  (interactive)
  (setf (agentls-connection-attachments (agentls--connection)) nil)
  (message "agentls: no attachment for the next task"))

(defun agentls--usage-text (usage)
  "Say what the USAGE plist counts.
For example \"1200 in / 34 out, $0.0123, context 1200 of 200000 (0%)\":
the cost and the context only when known."
  (if (not usage)
      ""
    (let ((ctx (or (plist-get usage :contextTokens) 0))
          (window (or (plist-get usage :contextWindow) 0))
          (cost (plist-get usage :cost)))
      (concat (format "%d in / %d out" (or (plist-get usage :inputTokens) 0) (or (plist-get usage :outputTokens) 0))
              (if (numberp cost) (format ", $%.4f" cost) "")
              (cond ((and (> ctx 0) (> window 0)) (format ", context %d of %d (%d%%)" ctx window (/ (* ctx 100) window)))
                    ((> ctx 0) (format ", context %d" ctx))
                    (t ""))))))

(defun agentls--step-line (step)
  "Return STEP, one step of an engine's own plan, as a line: \"[>] Add greet\"."
  (format "%s %s" (pcase (plist-get step :status) ("completed" "[x]") ("in_progress" "[>]") (_ "[ ]"))
          (plist-get step :content)))

(defun agentls--todo-line (todo)
  "Return TODO, one step of a checklist, as a line: \"[x] Add greet\"."
  (format "%s %s" (pcase (plist-get todo :status) ("done" "[x]") ("in_progress" "[>]") (_ "[ ]"))
          (plist-get todo :content)))

(defun agentls--task-finished (task result)
  "Record the RunResult RESULT of TASK and tell the person."
  (setf (agentls-task-result task) result
        (agentls-task-state task) (or (plist-get result :state) "failed")
        (agentls-task-summary task) (plist-get result :summary)
        (agentls-task-session task) (or (plist-get result :sessionId) (agentls-task-session task)))
  (when-let ((subtasks (plist-get result :subtasks)))
    (setf (agentls-task-subtasks task) (append subtasks nil)))
  (when-let ((usage (plist-get result :usage)))
    (setf (agentls-task-usage task) usage))
  (setf (agentls-task-thinking task) nil)
  (setf (agentls-task-counts task) (agentls--counts result))
  ;; A rejected change is no change: say what was applied and what not.
  (message "agentls: task %s %s (%s)%s" (agentls-task-id task) (agentls-task-state task)
           (agentls--counts-text (agentls-task-counts task))
           (if (agentls-task-summary task) (concat ": " (agentls-task-summary task)) ""))
  (agentls--transcript-add task (list :kind "agentlsResult" :result result))
  (run-hook-with-args 'agentls-task-finished-functions task)
  (agentls--refresh-views))

(defun agentls--counts (result)
  "Return (APPLIED . REJECTED) for the RunResult RESULT.
They are its applied and rejected counts; a server that sends none
has its changes counted by their applied flag."
  (if (numberp (plist-get result :applied))
      (cons (plist-get result :applied) (or (plist-get result :rejected) 0))
    (let ((applied 0) (rejected 0))
      (seq-doseq (change (or (plist-get result :changes) []))
        (if (eq t (plist-get change :applied))
            (cl-incf applied)
          (cl-incf rejected)))
      (cons applied rejected))))

(defun agentls--counts-text (counts)
  "Say COUNTS, (APPLIED . REJECTED), in words: \"2 applied, 1 rejected\"."
  (if (and (eql 0 (car counts)) (eql 0 (cdr counts)))
      "no change"
    (format "%d applied, %d rejected" (car counts) (cdr counts))))

(defun agentls--running-tasks ()
  "Return every task of a live connection that has not ended."
  (let (tasks)
    (dolist (conn (hash-table-values agentls--connections))
      (maphash (lambda (_ task)
                 (unless (member (agentls-task-state task) agentls--final-states)
                   (push task tasks)))
               (agentls-connection-tasks conn)))
    (sort tasks (lambda (a b) (< (agentls-task-started a) (agentls-task-started b))))))

(defun agentls--read-running-task ()
  "Ask for one of the running tasks and return it."
  (let ((tasks (agentls--running-tasks)))
    (cond
     ((null tasks) (user-error "No agentls task is running"))
     ((null (cdr tasks)) (car tasks))
     (t (let* ((choices (mapcar (lambda (task)
                                  (cons (format "%s  %s" (agentls-task-id task)
                                                (truncate-string-to-width
                                                 (agentls-task-prompt task) 60 nil nil "…"))
                                        task))
                                tasks)))
          (cdr (assoc (completing-read "agentls: task: " choices nil t) choices)))))))

;;;###autoload
(defun agentls-stop (task)
  "Stop TASK; interactively, the running task (asked for if several).
Return non-nil if the server stopped it."
  (interactive (list (agentls--read-running-task)))
  (let* ((task (if (stringp task) (agentls--find-task task) task))
         (result (agentls--request (agentls-task-connection task) 'agent/stop
                                  (list :taskId (agentls-task-id task))))
         (stopped (eq t (plist-get result :stopped))))
    (message "agentls: task %s %s" (agentls-task-id task)
             (if stopped "is stopping" "was not running"))
    stopped))

(defun agentls--find-task (id)
  "Return the task with ID of any connection."
  (or (cl-some (lambda (conn) (gethash id (agentls-connection-tasks conn)))
               (hash-table-values agentls--connections))
      (user-error "No agentls task %s" id)))

;;;; Steering a running task

(defun agentls--control (task method params)
  "Send the control METHOD with PARAMS about TASK; return its result.
A refusal of the server (a subtask in the wrong state, a task that
ended) is a `user-error' with its reason."
  (condition-case err
      (agentls--request (agentls-task-connection task) method params)
    (jsonrpc-error
     (user-error "agentls: %s" (or (alist-get 'jsonrpc-error-message (cdr err))
                                   (error-message-string err))))))

(defun agentls--subtask-line ()
  "Return (TASK . SUBTASK-ID) of the tasks buffer line at point, or nil.
SUBTASK-ID is nil on the line of a task."
  (when (derived-mode-p 'agentls-tasks-mode)
    (when-let ((id (tabulated-list-get-id)))
      (if (consp id)
          (cons (agentls--find-task (car id)) (cdr id))
        (cons (agentls--find-task id) nil)))))

(defun agentls--subtasks-in (task states)
  "Return the ids of TASK's subtasks whose state is one of STATES."
  (cl-loop for sub in (agentls-task-subtasks task)
           when (member (plist-get sub :state) states)
           collect (plist-get sub :id)))

(defun agentls--read-subtask (verb states)
  "Return (TASK SUBTASK-ID) for a control that VERBs a subtask in STATES.
On a subtask line of the tasks buffer, that one; else a subtask of
the running task (asked for when several run), read with completion."
  (let* ((line (agentls--subtask-line))
         (task (or (car line) (agentls--read-running-task))))
    (if (cdr line)
        (list task (cdr line))
      (let ((ids (agentls--subtasks-in task states)))
        (unless ids
          (user-error "Task %s has no %s subtask to %s" (agentls-task-id task)
                      (string-join states " or ") verb))
        (list task (completing-read (format "agentls: %s subtask of %s: " verb (agentls-task-id task))
                                    ids nil t nil nil (car ids)))))))

;;;###autoload
(defun agentls-skip-subtask (task subtask-id)
  "Skip the subtask SUBTASK-ID of TASK, pending or running.
A running subtask is cancelled; the subtasks that wait on it go on
as if it were done.  Interactively, the subtask at point in the
tasks buffer, else one of the running task's, read with completion."
  (interactive (agentls--read-subtask "skip" '("pending" "running")))
  (agentls--control task 'agent/skipSubtask (list :taskId (agentls-task-id task) :subtaskId subtask-id))
  (message "agentls: subtask %s of task %s skipped" subtask-id (agentls-task-id task)))

;;;###autoload
(defun agentls-remove-subtask (task subtask-id)
  "Remove the pending subtask SUBTASK-ID from TASK's plan.
Interactively, the subtask at point in the tasks buffer, else one of
the running task's, read with completion."
  (interactive (agentls--read-subtask "remove" '("pending")))
  (agentls--control task 'agent/removeSubtask (list :taskId (agentls-task-id task) :subtaskId subtask-id))
  (message "agentls: subtask %s of task %s removed" subtask-id (agentls-task-id task)))

;;;###autoload
(defun agentls-add-subtask (task content &optional depends-on)
  "Add a subtask doing CONTENT to the running TASK; return its id.
It waits for the subtasks DEPENDS-ON, a list of ids.  Interactively,
the task at point in the tasks buffer (else the running task), after
the subtask at point; the subtasks to wait for are read with
completion, separated by commas."
  (interactive
   (let* ((line (agentls--subtask-line))
          (task (or (car line) (agentls--read-running-task)))
          (content (read-string (format "agentls: add to %s: " (agentls-task-id task)))))
     (list task content
           (completing-read-multiple
            "agentls: after subtasks (comma-separated, none: RET): "
            (mapcar (lambda (s) (plist-get s :id)) (agentls-task-subtasks task))
            nil t (cdr line)))))
  (when (string-empty-p (string-trim content))
    (user-error "The subtask says nothing to do"))
  (let* ((result (agentls--control task 'agent/addSubtask
                                   (append (list :taskId (agentls-task-id task) :content content)
                                           (and depends-on (list :dependsOn (vconcat depends-on))))))
         (id (plist-get result :subtaskId)))
    (message "agentls: subtask %s added to task %s%s" id (agentls-task-id task)
             (if depends-on (concat " after " (string-join depends-on ", ")) ""))
    id))

(defun agentls--last-ended-task ()
  "Return the newest task that ended with a session, or nil."
  (car (last (cl-remove-if-not (lambda (task) (and (member (agentls-task-state task) agentls--final-states)
                                                   (agentls-task-session task)))
                               (agentls--all-tasks)))))

;;;###autoload
(defun agentls-follow-up (task prompt)
  "Continue TASK's conversation with PROMPT; return the new task's id.
The new task runs in TASK's session: its planner sees the earlier
prompts, plans and results.  Interactively, the task at point in the
tasks buffer, else the newest task that has ended."
  (interactive
   (let ((task (or (car (agentls--subtask-line)) (agentls--last-ended-task)
                   (user-error "No finished agentls task to follow up"))))
     (list task (read-string (format "agentls (follow up on %s): " (agentls-task-id task))
                             nil 'agentls--prompt-history))))
  (unless (agentls-task-session task)
    (user-error "Task %s has no session yet" (agentls-task-id task)))
  (let ((default-directory (agentls-connection-root (agentls-task-connection task))))
    (agentls-run prompt nil (agentls-task-session task))))

;;;; Mode line

(defvar agentls--mode-line-string nil
  "What the mode line shows about running tasks, or nil.")
(put 'agentls--mode-line-string 'risky-local-variable t)

(defun agentls--mode-line-install ()
  "Show `agentls--mode-line-string' in every mode line."
  (unless (memq 'agentls--mode-line-string mode-line-misc-info)
    (setq mode-line-misc-info (append mode-line-misc-info '(agentls--mode-line-string)))))

(defun agentls--task-progress (task)
  "Return TASK's progress as a short string."
  (let* ((subtasks (agentls-task-subtasks task))
         (total (length subtasks))
         (done (cl-count-if (lambda (s) (member (plist-get s :state) '("done" "skipped" "failed" "blocked")))
                            subtasks)))
    (cond ((agentls-task-progress task) (format "%d%%" (agentls-task-progress task)))
          ((> total 0) (format "%d/%d" done total))
          (t (agentls-task-state task)))))

(defun agentls--refresh-mode-line ()
  "Recompute the mode line's agentls part."
  (let* ((tasks (agentls--running-tasks))
         (string (when tasks
                   (propertize
                    (format " agentls[%s]" (mapconcat #'agentls--task-progress tasks " "))
                    'help-echo "agentls tasks: mouse-1 lists them"
                    'mouse-face 'mode-line-highlight
                    'local-map (make-mode-line-mouse-map 'mouse-1 #'agentls-tasks)))))
    (unless (equal string agentls--mode-line-string)
      (setq agentls--mode-line-string string)
      (force-mode-line-update t))))

;;;; The tasks buffer

(defvar agentls--refresh-timer nil
  "Timer that redraws the views soon, so bursts of updates redraw once.")

(defun agentls--refresh-views ()
  "Redraw the mode line now and the task and heat buffers soon."
  (agentls--refresh-mode-line)
  (unless agentls--refresh-timer
    (setq agentls--refresh-timer
          (run-at-time 0.1 nil
                       (lambda ()
                         (setq agentls--refresh-timer nil)
                         (agentls--redraw-views))))))

(defun agentls--redraw-views ()
  "Redraw the tasks and heat buffers that exist."
  (when-let ((buffer (get-buffer "*agentls-tasks*")))
    (with-current-buffer buffer (agentls--tasks-redraw)))
  (when-let ((buffer (get-buffer "*agentls-heat*")))
    (with-current-buffer buffer (agentls--heat-redraw))))

(defvar agentls-tasks-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'agentls-tasks-show)
    (define-key map (kbd "t") #'agentls-transcript)
    (define-key map (kbd "k") #'agentls-tasks-stop)
    (define-key map (kbd "x") #'agentls-skip-subtask)
    (define-key map (kbd "D") #'agentls-remove-subtask)
    (define-key map (kbd "a") #'agentls-add-subtask)
    ;; c, as before; f is the key the help shows.
    (define-key map (kbd "c") #'agentls-follow-up)
    (define-key map (kbd "f") #'agentls-follow-up)
    (define-key map (kbd "u") #'agentls-undo)
    map)
  "Keymap of `agentls-tasks-mode'.")

(define-derived-mode agentls-tasks-mode tabulated-list-mode "agentls-tasks"
  "Tasks of the agent and their subtasks, updated as they run.
\\<agentls-tasks-mode-map>On the line of a task or of one of its subtasks:

  \\[agentls-tasks-show]  the task: subtasks, changes and their diffs, events
  \\[agentls-transcript]  its live transcript
  \\[agentls-tasks-stop]  stop the task
  \\[agentls-skip-subtask]  skip the subtask (a running one is cancelled)
  \\[agentls-remove-subtask]  remove the subtask (a pending one)
  \\[agentls-add-subtask]  add a subtask to the task, after the subtask at point
  \\[agentls-follow-up]  follow up on the task (a finished one) with a new prompt
  \\[agentls-undo]  undo what the task (or the subtask) changed; \\[universal-argument]: what can be

\\{agentls-tasks-mode-map}"
  (setq tabulated-list-format [("Task" 20 nil) ("Sub" 4 nil) ("State" 9 nil)
                               ("Project" 14 nil) ("What" 0 nil)])
  (setq tabulated-list-padding 1)
  (add-hook 'tabulated-list-revert-hook #'agentls--tasks-entries nil t)
  (tabulated-list-init-header))

(defun agentls--state-face (state)
  "Return the face of STATE."
  (pcase state
    ((or "done" "skipped") 'success)
    ((or "failed" "blocked" "interrupted") 'error)
    ((or "running" "planning") 'warning)
    ("waiting" 'font-lock-keyword-face)
    (_ 'shadow)))

(defun agentls--all-tasks ()
  "Return the tasks of every connection, oldest first."
  (let (tasks)
    (dolist (conn (hash-table-values agentls--connections))
      (maphash (lambda (_ task) (push task tasks)) (agentls-connection-tasks conn)))
    (sort tasks (lambda (a b) (< (agentls-task-started a) (agentls-task-started b))))))

(defun agentls--tasks-entries ()
  "Fill `tabulated-list-entries' from the tasks."
  (setq tabulated-list-entries
        (cl-loop
         for task in (agentls--all-tasks)
         for id = (agentls-task-id task)
         for root = (agentls-connection-root (agentls-task-connection task))
         for usage = (agentls-task-usage task)
         collect (list id (vector id "" (propertize (agentls-task-state task) 'face
                                                    (agentls--state-face (agentls-task-state task)))
                                  (file-name-nondirectory (directory-file-name root))
                                  ;; One line per entry: a summary's first.
                                  (concat (or (car (split-string (or (agentls-task-summary task)
                                                                     (agentls-task-prompt task) "")
                                                                 "\n" t "[ \t]+"))
                                              "")
                                          (if usage (concat "  · tokens " (agentls--usage-text (agentls--task-total usage))) "")
                                          (if (member "" (agentls-task-thinking task)) "  · thinking…" ""))))
         append (cl-loop for sub in (agentls-task-subtasks task)
                         for sid = (plist-get sub :id)
                         for state = (or (plist-get sub :state) "")
                         collect (list (cons id sid)
                                       (vector "" (or sid "")
                                               (propertize state 'face (agentls--state-face state))
                                               ""
                                               (concat
                                                (string-trim
                                                 (or (plist-get sub :error) (plist-get sub :result)
                                                     (plist-get sub :content) ""))
                                                ;; A subtask run on an engine names it.
                                                (let ((engine (plist-get sub :engine)))
                                                  (if (and (stringp engine) (not (string-empty-p engine)))
                                                      (format "  [%s]" engine)
                                                    ""))
                                                (if-let ((u (plist-get sub :usage)))
                                                    (concat "  · tokens " (agentls--usage-text u))
                                                  "")
                                                (if (and (equal state "running") (member sid (agentls-task-thinking task)))
                                                    "  · thinking…" ""))))
                         ;; Its todos, a line each, under it.
                         ;; (Their id is the subtask's: its keys act on the subtask.)
                         append (cl-loop for todo across (or (plist-get sub :todos) [])
                                         collect (list (cons id sid)
                                                       (vector "" "" "" "" (concat "    " (agentls--todo-line todo)))))
                         ;; Its engine's own plan, a line each, under it.
                         append (cl-loop for step across (or (plist-get sub :steps) [])
                                         collect (list (cons id sid)
                                                       (vector "" "" "" "" (concat "    " (agentls--step-line step)))))))))

(defun agentls--task-total (usage)
  "Return the task's totals of USAGE, a usage event or the result's usage."
  (list :inputTokens (plist-get usage :inputTokens) :outputTokens (plist-get usage :outputTokens)
        :cost (plist-get usage :cost)))

(defun agentls--tasks-redraw ()
  "Redraw the tasks buffer, keeping point on its entry."
  (agentls--tasks-entries)
  (tabulated-list-print t))

;;;###autoload
(defun agentls-tasks ()
  "Show the agent's tasks and their subtasks, live."
  (interactive)
  (let ((buffer (get-buffer-create "*agentls-tasks*")))
    (with-current-buffer buffer
      (unless (derived-mode-p 'agentls-tasks-mode) (agentls-tasks-mode))
      (agentls--tasks-redraw))
    (pop-to-buffer buffer)))

(defun agentls--task-at-point ()
  "Return the task of the line at point."
  (let ((id (tabulated-list-get-id)))
    (unless id (user-error "No task on this line"))
    (agentls--find-task (if (consp id) (car id) id))))

(defun agentls-tasks-stop ()
  "Stop the task on this line."
  (interactive)
  (agentls-stop (agentls--task-at-point)))

(define-obsolete-function-alias 'agentls-tasks-continue #'agentls-follow-up "0.2.0")

(defun agentls-tasks-show ()
  "Show the task on this line: subtasks, diffs and latest events."
  (interactive)
  (let ((task (agentls--task-at-point))
        (buffer (get-buffer-create "*agentls-task*")))
    (with-current-buffer buffer
      (let ((inhibit-read-only t)
            (result (agentls-task-result task)))
        (erase-buffer)
        (insert (format "Task %s (%s)\nSession %s\nPrompt: %s\n"
                        (agentls-task-id task) (agentls-task-state task)
                        (or (agentls-task-session task) "-") (agentls-task-prompt task)))
        (when (agentls-task-summary task)
          (insert (format "Summary: %s\n" (agentls-task-summary task))))
        (insert "\nSubtasks:\n")
        (dolist (sub (agentls-task-subtasks task))
          (insert (format "  %s [%s] %s%s\n" (plist-get sub :id) (plist-get sub :state)
                          (plist-get sub :content)
                          (if-let ((err (plist-get sub :error))) (concat " — " err) ""))))
        (when-let ((changes (append (plist-get result :changes) nil)))
          (insert "\nChanges:\n")
          (dolist (change changes)
            (insert (format "%s %s%s\n" (plist-get change :operation) (plist-get change :path)
                            (if (eq t (plist-get change :applied)) "" " (not applied)")))
            (insert (or (plist-get change :diff) "") "\n")))
        (insert "\nEvents (newest first):\n")
        (dolist (event (agentls-task-events task))
          (insert (format "  %s %s %s\n" (plist-get event :kind) (or (plist-get event :subtaskId) "")
                          (string-trim (or (plist-get event :text) (plist-get event :summary)
                                           (plist-get event :tool) (plist-get event :reason)
                                           (plist-get event :path) "")))))
        (goto-char (point-min))
        (special-mode)))
    (pop-to-buffer buffer)))

;;;; The heat buffer

(defvar-local agentls--heat-connection nil
  "The connection whose heat this buffer shows.")

(defun agentls--heat-update (conn params)
  "Apply the agent/heatUpdate PARAMS of CONN to its heat map."
  (unless (plist-get params :taskId)
    (let ((heat (agentls-connection-heat conn)))
      (cl-loop for node across (or (plist-get params :updates) [])
               do (puthash (plist-get node :path) node heat))
      (cl-loop for path across (or (plist-get params :removed) [])
               do (remhash path heat))
      (setf (agentls-connection-heat-seq conn) (or (plist-get params :seq) 0))
      (agentls--refresh-views))))

(defvar agentls-heat-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'agentls-heat-visit)
    (define-key map (kbd "n") #'agentls-heat-neighbours)
    map)
  "Keymap of `agentls-heat-mode'.")

(define-derived-mode agentls-heat-mode tabulated-list-mode "agentls-heat"
  "The files the agent works with, hottest first.
\\{agentls-heat-mode-map}"
  (setq tabulated-list-format [("Heat" 16 nil) ("Last" 12 nil) ("Ctx" 4 nil)
                               ("Turn" 5 nil) ("File" 0 nil)])
  (setq tabulated-list-padding 1)
  (add-hook 'tabulated-list-revert-hook #'agentls--heat-refetch nil t)
  (tabulated-list-init-header))

(defun agentls--heat-refetch ()
  "Fetch a fresh heat snapshot for this buffer's connection."
  (let ((conn agentls--heat-connection))
    (when (and conn (jsonrpc-running-p conn))
      (let ((snapshot (agentls--request conn 'agent/heatSnapshot (make-hash-table)))
            (heat (agentls-connection-heat conn)))
        (clrhash heat)
        (cl-loop for node across (or (plist-get snapshot :nodes) [])
                 do (puthash (plist-get node :path) node heat))
        (setf (agentls-connection-heat-seq conn) (or (plist-get snapshot :seq) 0))))
    (agentls--heat-entries)))

(defun agentls--heat-entries ()
  "Fill `tabulated-list-entries' from this buffer's heat map."
  (let ((conn agentls--heat-connection) nodes)
    (when conn
      (maphash (lambda (_ node) (push node nodes)) (agentls-connection-heat conn)))
    (setq nodes (sort nodes (lambda (a b) (> (or (plist-get a :heat) 0) (or (plist-get b :heat) 0)))))
    (setq tabulated-list-entries
          (mapcar (lambda (node)
                    (let ((heat (or (plist-get node :heat) 0)))
                      (list (plist-get node :path)
                            (vector (format "%-10s %.2f" (make-string (round (* 10 heat)) ?█) heat)
                                    (or (plist-get node :lastAction) "")
                                    (if (eq t (plist-get node :inContext)) "yes" "")
                                    (format "%s" (or (plist-get node :turn) ""))
                                    (plist-get node :path)))))
                  nodes))))

(defun agentls--heat-redraw ()
  "Redraw the heat buffer from the heat map in memory."
  (agentls--heat-entries)
  (tabulated-list-print t))

;;;###autoload
(defun agentls-heat ()
  "Show the files the agent of this project works with, hottest first."
  (interactive)
  (let ((conn (agentls--connection))
        (buffer (get-buffer-create "*agentls-heat*")))
    (with-current-buffer buffer
      (unless (derived-mode-p 'agentls-heat-mode) (agentls-heat-mode))
      (setq agentls--heat-connection conn
            default-directory (agentls-connection-root conn))
      (setq header-line-format (format " Heat of %s" (agentls-connection-root conn)))
      (agentls--heat-refetch)
      (tabulated-list-print t))
    (pop-to-buffer buffer)))

(defun agentls-heat-visit ()
  "Visit the file on this line."
  (interactive)
  (let ((path (tabulated-list-get-id)))
    (unless path (user-error "No file on this line"))
    (find-file (expand-file-name path (agentls-connection-root agentls--heat-connection)))))

(defun agentls-heat-neighbours ()
  "Show the neighbours of the file on this line in the code graph."
  (interactive)
  (let ((path (tabulated-list-get-id)))
    (unless path (user-error "No file on this line"))
    (agentls-neighbours path agentls--heat-connection)))

;;;; A file's neighbours in the code graph

(defvar-local agentls--neighbours-connection nil
  "The connection whose code graph this buffer shows.")

(defvar-local agentls--neighbours-path nil
  "The project-relative path whose neighbours this buffer shows.")

(defvar-local agentls--neighbours-asked nil
  "A token of the last agent/codeGraph request; older answers are dropped.")

(defvar agentls-neighbours-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'agentls-neighbours-visit)
    (define-key map (kbd "n") #'agentls-neighbours)
    map)
  "Keymap of `agentls-neighbours-mode'.")

(define-derived-mode agentls-neighbours-mode special-mode "agentls-neighbours"
  "The files a file references and the files that reference it.
\{agentls-neighbours-mode-map}"
  (setq-local revert-buffer-function
              (lambda (&rest _) (agentls-neighbours agentls--neighbours-path
                                                     agentls--neighbours-connection))))

(defun agentls--neighbour-lists (path result)
  "Return the neighbours of PATH in the agent/codeGraph RESULT.
The value is (USES . USED-BY): the files PATH references and the
files that reference PATH, each a list of (FILE . COUNT), most
references first."
  (let (uses used-by)
    (cl-loop for edge across (or (plist-get result :edges) [])
             for from = (plist-get edge :from)
             for to = (plist-get edge :to)
             for count = (or (plist-get edge :count) 1)
             ;; File-to-file edges: a definition's id holds "#".
             when (and (equal (plist-get edge :kind) "references")
                       (not (string-search "#" from)) (not (string-search "#" to)))
             do (cond ((and (equal from path) (not (equal to path))) (push (cons to count) uses))
                      ((and (equal to path) (not (equal from path))) (push (cons from count) used-by))))
    (let ((order (lambda (a b) (if (= (cdr a) (cdr b)) (string< (car a) (car b)) (> (cdr a) (cdr b))))))
      (cons (sort uses order) (sort used-by order)))))

(defun agentls--neighbours-insert (path what)
  "Fill this buffer with the neighbours of PATH.
WHAT is `asking' while agent/codeGraph has not answered, (result .
RESULT) with its answer, or (error CODE MESSAGE)."
  (let ((inhibit-read-only t))
    (erase-buffer)
    (insert (propertize (format "Neighbours of %s" path) 'face 'bold)
            "    (RET visits the file, n its neighbours, g asks again, q quits)\n\n")
    (pcase what
      ('asking
       (insert "Asking the code graph... (it answers once it is built: on a large project, after a while)\n"))
      (`(error ,code ,message)
       (if (eql code -32602)
           (insert (format "%s is not a file of the code graph of %s:\n  %s\n"
                           path (agentls-connection-root agentls--neighbours-connection) message))
         (insert (format "The code graph could not answer: %s\n" message))))
      (`(result . ,result)
       (let ((lists (agentls--neighbour-lists path result)))
         (dolist (section (list (cons (format "References (the files %s uses, references each):" path)
                                      (car lists))
                                (cons (format "Referenced by (the files that use %s, references each):" path)
                                      (cdr lists))))
           (insert (car section) "\n")
           (unless (cdr section) (insert "  none\n"))
           (dolist (n (cdr section))
             (insert (propertize (format "  %4d  %s" (cdr n) (car n)) 'agentls-path (car n)) "\n"))
           (insert "\n"))
         (when (eq t (plist-get result :truncated))
           (insert "(the graph cut its answer short: not every neighbour is listed)\n")))))
    (goto-char (point-min))
    (forward-line 2)))

;;;###autoload
(defun agentls-neighbours (path &optional conn)
  "Show the neighbours of PATH in the code graph of CONN's project.
The files PATH references and those that reference it, with the number
of references, asked of agent/codeGraph now.  Interactively, the file on
this line of a neighbours buffer, else the file of this buffer."
  (interactive
   (list (or (get-text-property (line-beginning-position) 'agentls-path)
             (and buffer-file-name
                  (file-relative-name buffer-file-name (agentls-connection-root (agentls--connection))))
             (user-error "No file on this line"))
         (or agentls--neighbours-connection (agentls--connection))))
  (let* ((conn (or conn (agentls--connection)))
         (buffer (get-buffer-create "*agentls-neighbours*"))
         (token (list path)))
    (with-current-buffer buffer
      (unless (derived-mode-p 'agentls-neighbours-mode) (agentls-neighbours-mode))
      (setq agentls--neighbours-connection conn
            agentls--neighbours-path path
            agentls--neighbours-asked token
            default-directory (agentls-connection-root conn))
      (agentls--neighbours-insert path 'asking))
    (let ((answer (lambda (what)
                    (when (buffer-live-p buffer)
                      (with-current-buffer buffer
                        (when (eq agentls--neighbours-asked token)
                          (agentls--neighbours-insert path what)))))))
      (jsonrpc-async-request
       conn 'agent/codeGraph (list :path path)
       ;; The graph answers once it is built: no deadline.
       :timeout nil
       :success-fn (lambda (result) (funcall answer (cons 'result result)))
       :error-fn (jsonrpc-lambda (&key code message &allow-other-keys)
                   (funcall answer (list 'error code message)))))
    (pop-to-buffer buffer)))

(defun agentls-neighbours-visit ()
  "Visit the file on this line."
  (interactive)
  (let ((path (get-text-property (line-beginning-position) 'agentls-path)))
    (unless path (user-error "No file on this line"))
    (find-file-other-window (expand-file-name path (agentls-connection-root agentls--neighbours-connection)))))

;;;; Sessions

(defvar-local agentls--sessions-connection nil
  "The connection whose sessions this buffer lists.")

(defvar agentls-sessions-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'agentls-sessions-show)
    (define-key map (kbd "c") #'agentls-sessions-continue)
    (define-key map (kbd "D") #'agentls-sessions-delete)
    map)
  "Keymap of `agentls-sessions-mode'.")

(define-derived-mode agentls-sessions-mode tabulated-list-mode "agentls-sessions"
  "The agent's conversations in this project, newest first.
\\{agentls-sessions-mode-map}"
  (setq tabulated-list-format [("Updated" 20 nil) ("Tasks" 6 nil) ("Tokens" 34 nil) ("Title" 0 nil)])
  (setq tabulated-list-padding 1)
  (add-hook 'tabulated-list-revert-hook #'agentls--sessions-entries nil t)
  (tabulated-list-init-header))

(defun agentls--sessions-entries ()
  "Fill `tabulated-list-entries' with the sessions of this buffer's connection."
  (let ((result (agentls--request agentls--sessions-connection 'agent/sessions (make-hash-table))))
    (setq tabulated-list-entries
          (cl-loop for s across (or (plist-get result :sessions) [])
                   collect (list (plist-get s :sessionId)
                                 (vector (or (plist-get s :updatedAt) "")
                                         (format "%d" (length (plist-get s :tasks)))
                                         (agentls--usage-text (plist-get s :usage))
                                         (or (plist-get s :title) "")))))))

;;;###autoload
(defun agentls-sessions ()
  "List the agent's conversations in this project."
  (interactive)
  (let ((conn (agentls--connection))
        (buffer (get-buffer-create "*agentls-sessions*")))
    (with-current-buffer buffer
      (unless (derived-mode-p 'agentls-sessions-mode) (agentls-sessions-mode))
      (setq agentls--sessions-connection conn
            default-directory (agentls-connection-root conn))
      (agentls--sessions-entries)
      (tabulated-list-print))
    (pop-to-buffer buffer)))

(defun agentls--session-at-point ()
  "Return the session id on this line."
  (or (tabulated-list-get-id) (user-error "No session on this line")))

(defun agentls-sessions-show ()
  "Show the messages of the session on this line."
  (interactive)
  (let* ((id (agentls--session-at-point))
         (session (agentls--request agentls--sessions-connection 'agent/session
                                   (list :sessionId id)))
         (buffer (get-buffer-create "*agentls-session*")))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "Session %s: %s\n\n" id (or (plist-get session :title) "")))
        (cl-loop for m across (or (plist-get session :messages) [])
                 do (insert (propertize (format "%s %s%s\n" (plist-get m :time) (plist-get m :role)
                                                (if-let ((sub (plist-get m :subtaskId)))
                                                    (format " (subtask %s)" sub) ""))
                                        'face 'bold)
                            (or (plist-get m :text) "") "\n\n"))
        (goto-char (point-min))
        (special-mode)))
    (pop-to-buffer buffer)))

(defun agentls-sessions-continue (prompt)
  "Continue the session on this line with PROMPT."
  (interactive (list (read-string "agentls (continue): " nil 'agentls--prompt-history)))
  (agentls-run prompt nil (agentls--session-at-point)))

(defun agentls-sessions-delete ()
  "Delete the session on this line, after asking."
  (interactive)
  (let ((id (agentls--session-at-point)))
    (when (yes-or-no-p (format "Delete agentls session %s? " id))
      (agentls--request agentls--sessions-connection 'agent/deleteSession (list :sessionId id))
      (revert-buffer))))

;;;; Trace

;;;###autoload
(defun agentls-trace-at-point ()
  "Show the agent edits that touched the line at point."
  (interactive)
  (unless buffer-file-name (user-error "This buffer visits no file"))
  (let* ((conn (agentls--connection))
         (path (file-relative-name buffer-file-name (agentls-connection-root conn)))
         (line (line-number-at-pos))
         (result (agentls--request conn 'agent/trace (list :path path :line line)))
         (entries (append (plist-get result :entries) nil)))
    (if (null entries)
        (message "agentls: no agent change recorded for %s line %d" path line)
      (with-current-buffer (get-buffer-create "*agentls-trace*")
        (let ((inhibit-read-only t))
          (erase-buffer)
          (insert (format "Agent changes to %s line %d, oldest first:\n\n" path line))
          (dolist (e entries)
            (insert (format "%s  %s by task %s subtask %s (session %s, model %s)%s\n"
                            (plist-get e :time) (plist-get e :operation) (plist-get e :taskId)
                            (plist-get e :subtaskId) (plist-get e :sessionId) (plist-get e :model)
                            (if-let ((intent (plist-get e :intentId))) (format ", intent %s" intent) "")))
            (cl-loop for r across (or (plist-get e :ranges) [])
                     do (insert (format "    lines %d-%d %s\n" (plist-get r :startLine)
                                        (plist-get r :endLine) (plist-get r :contentHash)))))
          (goto-char (point-min))
          (special-mode))
        (display-buffer (current-buffer))))
    entries))

;;;; MCP servers

(defvar-local agentls--mcp-connection nil
  "The connection whose MCP servers this buffer lists.")

(defvar-local agentls--mcp-servers nil
  "The servers of the last agent/mcpServers reply, as plists.")

(defvar agentls-mcp-servers-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'agentls-mcp-servers-tools)
    (define-key map (kbd "s") #'agentls-mcp-servers-start)
    map)
  "Keymap of `agentls-mcp-servers-mode'.")

(define-derived-mode agentls-mcp-servers-mode tabulated-list-mode "agentls-mcp"
  "The MCP servers of `agentls-mcp-servers', with their state.
\\{agentls-mcp-servers-mode-map}"
  (setq tabulated-list-format [("Server" 16 t) ("State" 12 nil) ("Tools" 6 nil) ("Command, URL or error" 0 nil)])
  (setq tabulated-list-padding 1)
  (add-hook 'tabulated-list-revert-hook #'agentls--mcp-servers-refresh nil t)
  (tabulated-list-init-header))

(defun agentls--mcp-server-where (server)
  "Return how SERVER is reached: its command line or its URL."
  (if (equal (plist-get server :transport) "http")
      (or (plist-get server :url) "")
    (string-join (cons (or (plist-get server :command) "")
                       (append (plist-get server :args) nil))
                 " ")))

(defun agentls--mcp-servers-entries (servers)
  "Return the `tabulated-list-entries' of SERVERS (agent/mcpServers)."
  (cl-loop for s across servers
           collect (let ((state (plist-get s :state))
                         (err (plist-get s :error)))
                     (list (plist-get s :name)
                           (vector (plist-get s :name)
                                   (propertize (pcase state
                                                 ("notStarted" "not started")
                                                 (_ state))
                                               'face (pcase state
                                                       ((or "ready" "restarted") 'success)
                                                       ("failed" 'error)
                                                       (_ 'default)))
                                   (format "%d" (or (plist-get s :toolCount) 0))
                                   (if (and err (not (equal err "")))
                                       err
                                     (agentls--mcp-server-where s)))))))

(defun agentls--mcp-servers-refresh (&optional start)
  "Ask this buffer's server for its MCP servers; with START, start them first."
  (let ((result (agentls--request agentls--mcp-connection 'agent/mcpServers
                                  (if start (list :start t) (make-hash-table))
                                  :timeout 90)))
    (setq agentls--mcp-servers (or (plist-get result :servers) []))
    (setq tabulated-list-entries (agentls--mcp-servers-entries agentls--mcp-servers))))

;;;###autoload
(defun agentls-mcp-servers (&optional start)
  "List the MCP servers agentls gives the agent, with their state and tools.
With a prefix argument START, start the servers not started yet first."
  (interactive "P")
  (let ((conn (agentls--connection))
        (buffer (get-buffer-create "*agentls-mcp-servers*")))
    (with-current-buffer buffer
      (unless (derived-mode-p 'agentls-mcp-servers-mode) (agentls-mcp-servers-mode))
      (setq agentls--mcp-connection conn
            default-directory (agentls-connection-root conn))
      (agentls--mcp-servers-refresh start)
      (tabulated-list-print))
    (pop-to-buffer buffer)
    buffer))

(defun agentls-mcp-servers-start ()
  "Start the MCP servers not started yet, and show their state."
  (interactive)
  (agentls--mcp-servers-refresh t)
  (tabulated-list-print t))

(defun agentls-mcp-servers-tools ()
  "Show the tools of the MCP server on this line."
  (interactive)
  (let* ((name (or (tabulated-list-get-id) (user-error "No server on this line")))
         (server (cl-find name agentls--mcp-servers
                          :key (lambda (s) (plist-get s :name)) :test #'equal)))
    (with-current-buffer (get-buffer-create "*agentls-mcp-tools*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "MCP server %s (%s): %s\n" name (agentls--mcp-server-where server)
                        (plist-get server :state)))
        (when-let ((err (plist-get server :error)))
          (insert err "\n"))
        (insert "\n")
        (cl-loop for tool across (or (plist-get server :tools) [])
                 do (insert (propertize (plist-get tool :tool) 'face 'bold)
                            (format "  (the model calls it %s)%s\n    %s\n"
                                    (plist-get tool :name)
                                    (if (eq (plist-get tool :readOnly) t) ", read-only" "")
                                    (or (plist-get tool :description) ""))))
        (goto-char (point-min))
        (special-mode))
      (display-buffer (current-buffer)))))

;;;; Undo

(defun agentls--undo-words (result what partial)
  "Say what the agent/undo RESULT did to WHAT, a task or subtask.
PARTIAL is non-nil when the undo was asked to do what it could."
  (let (done refused)
    (seq-doseq (file (plist-get result :files))
      (if (eq t (plist-get file :undone))
          (push (pcase (plist-get file :operation)
                  ("update" (concat "restored " (plist-get file :path)))
                  ("create" (concat "recreated " (plist-get file :path)))
                  ("delete" (concat "deleted " (plist-get file :path)))
                  (_ (format "%s (as it was already)" (plist-get file :path))))
                done)
        (when-let ((reason (plist-get file :reason)))
          (push reason refused))))
    (setq done (nreverse done) refused (nreverse refused))
    (if (eq t (plist-get result :undone))
        (format "undid %s: %s" what (if done (string-join done ", ") "nothing to undo"))
      (concat (format "%s not undone: %s" what (if refused (string-join refused "; ") "refused"))
              (cond (done (concat "; " (string-join done ", ")))
                    ((not partial) " (with a prefix argument, agentls-undo undoes the files that can be)"))))))

;;;###autoload
(defun agentls-undo (task &optional subtask-id partial)
  "Take back what TASK (with SUBTASK-ID, that subtask) changed.
Each file goes back to its text before the task, through Emacs as
every edit does (in a visited file, one undo step takes the undo
back); a file the task created is deleted, one it deleted is
recreated.  It works from the checkpoints agentls keeps, so TASK may
be a task id of an earlier session.  A file changed since on the
lines the task wrote is refused, and then nothing is undone; with
PARTIAL the files that can be are undone all the same.

Interactively, the task (or subtask) at point in the tasks buffer,
else the newest task that has ended, after asking; a prefix argument
means PARTIAL.  Return the agent/undo result."
  (interactive
   (let* ((line (agentls--subtask-line))
          (task (or (car line)
                    (car (last (cl-remove-if-not (lambda (task) (member (agentls-task-state task) agentls--final-states))
                                                 (agentls--all-tasks))))
                    (user-error "No finished agentls task to undo")))
          (what (if (cdr line) (format "subtask %s of task %s" (cdr line) (agentls-task-id task))
                  (format "task %s" (agentls-task-id task)))))
     (unless (y-or-n-p (format "Undo what %s changed%s? " what
                               (if current-prefix-arg ", as far as it can" "")))
       (user-error "Not undone"))
     (list task (cdr line) (and current-prefix-arg t))))
  (let* ((task (if (stringp task)
                   (or (ignore-errors (agentls--find-task task))
                       (agentls--make-task :id task :connection (agentls--connection)))
                 task))
         (what (if subtask-id (format "subtask %s of task %s" subtask-id (agentls-task-id task))
                 (format "task %s" (agentls-task-id task))))
         (result (condition-case err
                     (agentls--request (agentls-task-connection task) 'agent/undo
                                       (append (list :taskId (agentls-task-id task))
                                               (and subtask-id (list :subtaskId subtask-id))
                                               (and (agentls-task-session task)
                                                    (list :sessionId (agentls-task-session task)))
                                               (and partial (list :partial t)))
                                       :timeout 120)
                   (jsonrpc-error
                    (user-error "agentls: %s" (or (alist-get 'jsonrpc-error-message (cdr err))
                                                  (error-message-string err)))))))
    (message "agentls: %s" (agentls--undo-words result what partial))
    result))

;;;; Intents and models of the next tasks

(defun agentls--intents (conn)
  "Return the intents of CONN's project (agent/intents), as plists.
A broken intents file is a `user-error' saying what is wrong."
  (let* ((result (agentls--request conn 'agent/intents (make-hash-table)))
         (err (plist-get result :error)))
    (when (and (stringp err) (not (string-empty-p err)))
      (user-error "agentls: %s" err))
    (append (plist-get result :intents) nil)))

(defun agentls--read-intent (conn prompt)
  "Read, with PROMPT, an intent of CONN's project that can be selected.
A COMPLETED intent is not offered.  Return its id, or nil for none."
  (let* ((intents (cl-remove-if (lambda (i) (eq :json-false (plist-get i :selectable)))
                                (agentls--intents conn)))
         (current (agentls-connection-intent conn))
         (annotate
          (lambda (id)
            (if-let ((i (cl-find id intents :key (lambda (i) (plist-get i :id)) :test #'equal)))
                (format "  %s (%s%s)%s" (or (plist-get i :name) "") (or (plist-get i :status) "")
                        (if-let ((scope (append (plist-get i :ownedScope) nil)))
                            (concat "; " (string-join scope ", "))
                          "")
                        (if (equal id current) "  ← the next tasks" ""))
              (format "  each worker selects the intent of its subtask%s"
                      (if current "" "  ← the next tasks"))))))
    (unless intents
      (user-error "No intent to select in .orchestration/active_intents.yaml"))
    (let ((choice (let ((completion-extra-properties (list :annotation-function annotate)))
                    (completing-read prompt (cons "none" (mapcar (lambda (i) (plist-get i :id)) intents))
                                     nil t nil nil (or current "none")))))
      (unless (member choice '("none" "")) choice))))

;;;###autoload
(defun agentls-select-intent (intent)
  "Make the next tasks of this project work under INTENT (an id, or nil).
Every worker of those tasks starts with INTENT selected; nil lets
each select the intent of its subtask.  Interactively, read with
completion from .orchestration/active_intents.yaml; a COMPLETED
intent is not offered (the server refuses it)."
  (interactive (list (agentls--read-intent (agentls--connection) "agentls: intent of the next tasks: ")))
  (let ((conn (agentls--connection)))
    (when intent
      (let ((found (cl-find intent (agentls--intents conn) :key (lambda (i) (plist-get i :id)) :test #'equal)))
        (unless found
          (user-error "No intent %s in .orchestration/active_intents.yaml" intent))
        (when (eq :json-false (plist-get found :selectable))
          (user-error "Intent %s (%s) is %s: a completed intent cannot be selected"
                      intent (plist-get found :name) (plist-get found :status)))))
    (setf (agentls-connection-intent conn) intent)
    (message "agentls: the next tasks %s" (if intent (format "work under %s" intent)
                                           "choose their intents themselves"))
    intent))

(defun agentls--models (conn)
  "Return CONN's agent/models result: what the providers offer."
  (agentls--request conn 'agent/models (make-hash-table) :timeout 30))

(defun agentls--read-model (conn prompt)
  "Read, with PROMPT, a model the providers of CONN offer.
Return its id, or nil for the model setting."
  (let* ((result (agentls--models conn))
         (models (append (plist-get result :models) nil))
         (next (or (agentls-connection-model conn) (plist-get result :current)))
         (annotate
          (lambda (id)
            (if-let ((m (cl-find id models :key (lambda (m) (plist-get m :id)) :test #'equal)))
                (concat (if-let ((name (plist-get m :displayName))) (concat "  " name) "")
                        (if (eq t (plist-get m :current)) "  (the setting)" "")
                        (if (equal id next) "  ← the next tasks" ""))
              (format "  the model setting (%s)%s" (or (plist-get result :current) "none")
                      (if (agentls-connection-model conn) "" "  ← the next tasks"))))))
    (let ((choice (let ((completion-extra-properties (list :annotation-function annotate)))
                    (completing-read prompt (cons "default" (mapcar (lambda (m) (plist-get m :id)) models))
                                     nil nil nil nil next))))
      (unless (member choice '("default" "")) choice))))

;;;###autoload
(defun agentls-check-model (&optional model)
  "Test the connection to MODEL (default: the next tasks' model); say how it went.
Return the agent/checkModel result.  With a prefix argument, read
MODEL with completion from what the providers offer."
  (interactive (list (and current-prefix-arg
                          (agentls--read-model (agentls--connection) "agentls: check the model: "))))
  (let* ((conn (agentls--connection))
         (model (or model (agentls-connection-model conn)))
         (result (agentls--request conn 'agent/checkModel
                                   (if model (list :model model) (make-hash-table))
                                   :timeout 40)))
    (message "agentls: %s%s" (if (eq t (plist-get result :ok)) "" "not usable: ")
             (plist-get result :message))
    result))

;;;###autoload
(defun agentls-select-model (model)
  "Make the next tasks of this project use MODEL (nil: the model setting).
Interactively, read with completion from the models the providers
offer (the next tasks' model is marked); the choice is then tried
with `agentls-check-model'."
  (interactive (list (agentls--read-model (agentls--connection) "agentls: model of the next tasks: ")))
  (let ((conn (agentls--connection)))
    (setf (agentls-connection-model conn) model)
    (agentls-check-model model)
    model))

;;;; Doctor

;;;###autoload
(defun agentls--engine-line (engine)
  "Return the line of `agentls-doctor' for ENGINE, a plist of agent/engines."
  (let ((name (concat (plist-get engine :name)
                      (let ((v (plist-get engine :version)))
                        (if (and (stringp v) (not (string-empty-p v))) (concat " " v) "")))))
    (if (eq t (plist-get engine :usable))
        (format "  %-16s %s  usable%s (%s%s)" name (propertize "ok" 'face 'success)
                (if (eq t (plist-get engine :isolated)) ", isolated" "")
                (mapconcat #'identity (plist-get engine :command) " ")
                (let ((src (plist-get engine :source)))
                  (if (and (stringp src) (not (string-empty-p src))) (concat ", from " src) "")))
      (format "  %-16s %s  cannot be used: %s" name (propertize "--" 'face 'shadow)
              (or (plist-get engine :reason) "")))))

(defun agentls-doctor ()
  "Report whether agentls works here: binary, server, model, MCP servers, engines.
The model is tried with agent/checkModel and the MCP servers are
started, so each says whether it works and, if not, why; the engines
\(agent/engines) are listed with their version, or why each cannot be
used."
  (interactive)
  (let* ((root (agentls--project-root))
         (buffer (get-buffer-create "*agentls-doctor*"))
         (program (executable-find agentls-program))
         (ok (lambda (good) (propertize (if good "ok" "PROBLEM") 'face (if good 'success 'error)))))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (special-mode)
        (setq default-directory root)
        (insert (propertize (format "agentls doctor for %s\n\n" root) 'face 'bold))
        (insert (format "Binary   %s  %s\n" (funcall ok program)
                        (or program (format "%S not found in `exec-path': set `agentls-program'"
                                            agentls-program))))
        (when program
          (insert (format "Version  %s\n"
                          (with-temp-buffer
                            (if (eql 0 (call-process program nil t nil "version"))
                                (string-trim (buffer-string))
                              (format "`%s version' failed: %s" program (string-trim (buffer-string)))))))
          (let ((conn (condition-case err (agentls--connection root)
                        (error (insert (format "Server   %s  does not start: %s\n" (funcall ok nil)
                                               (error-message-string err)))
                               nil))))
            (when conn
              (let ((info (agentls-connection-server-info conn)))
                (insert (format "Server   %s  %s %s, serving %s\n" (funcall ok t)
                                (or (plist-get info :name) "agentls") (or (plist-get info :version) "")
                                (agentls-connection-root conn))))
              (let* ((check (agentls-check-model))
                     (good (eq t (plist-get check :ok))))
                (insert (format "Model    %s  %s (from %s): %s%s\n" (funcall ok good)
                                (plist-get check :model) (plist-get check :source)
                                (if good "" (format "[%s] " (plist-get check :problem)))
                                (plist-get check :message))))
              (when-let ((intent (agentls-connection-intent conn)))
                (insert (format "Intent   the next tasks work under %s\n" intent)))
              (insert "\nMCP servers (started to see whether they work):\n")
              (let ((servers (plist-get (agentls--request conn 'agent/mcpServers (list :start t) :timeout 90)
                                        :servers)))
                (if (seq-empty-p servers)
                  (insert "  none configured (`agentls-mcp-servers')\n")
                  (seq-doseq (server servers)
                    (let ((state (plist-get server :state)))
                      (insert (format "  %-16s %s  %s, %d tools: %s\n" (plist-get server :name)
                                      (funcall ok (member state '("ready" "restarted")))
                                      (pcase state ("notStarted" "not started") (_ state))
                                      (or (plist-get server :toolCount) 0)
                                      (or (plist-get server :error) (agentls--mcp-server-where server))))))))
              (insert "\nEngines (`agentls-run-on-engine'; one not installed is no problem):\n")
              (dolist (engine (agentls-engines conn))
                (insert (agentls--engine-line engine) "\n")))))
        (goto-char (point-min))))
    (pop-to-buffer buffer)
    buffer))

;;;; The transcript of a task

;; A task's transcript shows what its agents write, as it streams
;; (messageDelta), each tool call on one line with its arguments hidden
;; under it, questions, commands, changes, and the end.  Every event is
;; kept in the task's log (streamed text joined); the buffer, once shown,
;; is written from the events that came since its last write, at most
;; every `agentls-transcript-interval' seconds.

(defvar agentls--transcript-timer nil
  "Timer that writes the pending events of the shown transcripts.")

(defun agentls--log-push (list event)
  "Return LIST (newest first) with EVENT pushed.
Streamed text of a subtask that follows streamed text of the same
subtask joins it, so a long stream is one entry with its parts."
  (let ((last (car list)))
    (if (and (equal (plist-get event :kind) "messageDelta")
             (equal (plist-get last :kind) "messageDelta")
             (equal (plist-get last :subtaskId) (plist-get event :subtaskId)))
        (progn (plist-put last :parts (cons (plist-get event :text) (plist-get last :parts)))
               list)
      (cons (if (equal (plist-get event :kind) "messageDelta")
                (list :kind "messageDelta" :subtaskId (plist-get event :subtaskId)
                      :parts (list (plist-get event :text)))
              event)
            list))))

(defun agentls--transcript-add (task event)
  "Record TASK's EVENT for its transcript, and write it soon if shown."
  (setf (agentls-task-log task) (agentls--log-push (agentls-task-log task) event))
  (when (buffer-live-p (agentls-task-transcript task))
    (setf (agentls-task-pending task) (agentls--log-push (agentls-task-pending task) (copy-sequence event)))
    (unless agentls--transcript-timer
      (setq agentls--transcript-timer
            (run-at-time agentls-transcript-interval nil #'agentls--transcript-flush-all)))))

(defun agentls--transcript-flush-all ()
  "Write the pending events of every shown transcript."
  (setq agentls--transcript-timer nil)
  (dolist (task (agentls--all-tasks))
    (when (and (agentls-task-pending task) (buffer-live-p (agentls-task-transcript task)))
      (let ((events (reverse (agentls-task-pending task))))
        (setf (agentls-task-pending task) nil)
        (agentls--transcript-write (agentls-task-transcript task) events)))))

(defvar-local agentls--tr-task nil "The task this transcript shows.")
(defvar-local agentls--tr-speaker nil "Subtask id of the last block (\"\" the task), or nil.")
(defvar-local agentls--tr-open nil "Non-nil when the last line is text to append to.")
(defvar-local agentls--tr-streamed nil "Subtask ids whose text streamed since their last message.")
(defvar-local agentls--tr-tools nil "Alist of subtask id to the (TOOL . MARKER) awaiting results.")
(defvar-local agentls--tr-thinking nil "Alist of subtask id to its thinking streamed so far.")
(defvar-local agentls--tr-finished nil "Non-nil once the end of the task is written.")
(defvar-local agentls--tr-ended nil "Non-nil once the task's changes are written.")
(defvar-local agentls-transcript-writes 0
  "How many times this transcript buffer was written (each write is a batch).")

(defun agentls--tr-push (line &optional face)
  "Add LINE, a line of its own, at the end, in FACE."
  (goto-char (point-max))
  (unless (= (point-min) (point-max)) (insert "\n"))
  (insert (if face (propertize line 'face face) line)))

(defun agentls--tr-header (speaker)
  "Return the header line of SPEAKER's block."
  (if (equal speaker "")
      "── task ──"
    (let* ((sub (cl-find speaker (agentls-task-subtasks agentls--tr-task)
                         :key (lambda (s) (plist-get s :id)) :test #'equal))
           (content (plist-get sub :content)))
      (if (and content (not (string-empty-p content)))
          (format "── %s · %s ──" speaker (truncate-string-to-width
                                          (replace-regexp-in-string "[ \t\n]+" " " content) 80 nil nil "…"))
        (format "── %s ──" speaker)))))

(defun agentls--tr-block (speaker)
  "Make SPEAKER's block the current one, with a header when another wrote last."
  (unless (equal agentls--tr-speaker speaker)
    (setq agentls--tr-open nil
          agentls--tr-speaker speaker)
    (agentls--tr-push "")
    (agentls--tr-push (agentls--tr-header speaker) 'bold)))

(defun agentls--tr-text (speaker text)
  "Append the streamed TEXT to SPEAKER's block."
  (when (and text (not (string-empty-p text)))
    (agentls--tr-block speaker)
    (unless agentls--tr-open
      (agentls--tr-push "")
      (setq agentls--tr-open t))
    (goto-char (point-max))
    (insert text)))

(defun agentls--tr-line (speaker line &optional face)
  "Add LINE, an event, to SPEAKER's block, in FACE."
  (agentls--tr-block speaker)
  (setq agentls--tr-open nil)
  (agentls--tr-push line face))

(defun agentls--tr-details (lines)
  "Add LINES under the line before them, hidden until shown."
  (when lines
    (let ((start (point-max)))
      (dolist (line (if (> (length lines) 200)
                        (append (seq-take lines 200) (list (format "        … %d more lines" (- (length lines) 200))))
                      lines))
        (agentls--tr-push line 'shadow))
      (let ((ov (make-overlay start (point-max) nil t nil)))
        (overlay-put ov 'agentls-details t)
        (overlay-put ov 'invisible 'agentls-details)
        (overlay-put ov 'evaporate t)))))

(defun agentls--tr-short (text &optional width)
  "Return TEXT on one line, at most WIDTH (default 100) characters."
  (truncate-string-to-width (replace-regexp-in-string "[ \t\n]+" " " (format "%s" (or text "")))
                            (or width 100) nil nil "…"))

(defun agentls--tr-brief (tool args)
  "Say what the call of TOOL with ARGS (a plist) does, in a few words."
  (let* ((key (pcase tool
                ((or "read_file" "write_file" "edit_file" "delete_file") :path)
                ("list_files" :pattern) ("search_files" :regex) ("run_command" :command)
                ("ask_human" :question) ("select_intent" :intentId) ("finish" :summary)))
         (value (and key (plist-get args key))))
    (concat tool " " (agentls--tr-short (if (stringp value) value
                                          (if args (json-encode args) ""))
                                        80))))

(defun agentls--tr-arguments (args)
  "Return the lines showing ARGS (a plist), long text on lines of its own."
  (cl-loop for (key value) on (and (consp args) (keywordp (car args)) args) by #'cddr
           append (let ((name (substring (symbol-name key) 1)))
                    (if (and (stringp value) (string-search "\n" value))
                        (cons (format "      %s:" name)
                              (mapcar (lambda (l) (concat "        " l))
                                      (split-string (string-remove-suffix "\n" value) "\n")))
                      (list (format "      %s: %s" name (json-encode value)))))))

(defun agentls--tr-finish (state summary counts change-list)
  "Write the task's end from STATE, SUMMARY, COUNTS and CHANGE-LIST.
CHANGE-LIST is nil until the run's result gives it."
  (unless agentls--tr-finished
    (setq agentls--tr-finished t agentls--tr-open nil agentls--tr-speaker nil)
    (agentls--tr-push "")
    (agentls--tr-push (format "── task %s: %s ──" state (agentls--counts-text counts)) 'bold)
    (dolist (line (split-string (or summary "") "\n" t))
      (agentls--tr-push (concat "  " line))))
  (when (and change-list (not agentls--tr-ended))
    (setq agentls--tr-ended t)
    (unless (seq-empty-p change-list)
      (agentls--tr-push "")
      (agentls--tr-push "changes:" 'bold))
    (seq-doseq (change change-list)
      (let ((applied (eq t (plist-get change :applied))))
        (agentls--tr-push (format "  %s %s %s%s" (if applied "✓" "✗") (plist-get change :operation)
                                  (plist-get change :path) (if applied "" "  (not applied)"))
                          (if applied 'success 'error))
        (agentls--tr-details (mapcar (lambda (l) (concat "      " l))
                                     (split-string (string-remove-suffix "\n" (or (plist-get change :diff) ""))
                                                   "\n")))))))

(defun agentls--tr-think (speaker)
  "End SPEAKER's block of thinking: one line, its text hidden under it."
  (when-let ((text (alist-get speaker agentls--tr-thinking nil nil #'equal)))
    (setf (alist-get speaker agentls--tr-thinking nil t #'equal) nil)
    (unless (string-empty-p (string-trim text))
      (agentls--tr-line speaker (format "  ∴ thought (%d characters): %s" (length text) (agentls--tr-short text))
                        'font-lock-comment-face)
      (agentls--tr-details (mapcar (lambda (l) (concat "      " l))
                                   (split-string (string-trim text) "\n"))))))

(defun agentls--tr-event (e)
  "Write the event E (a plist of agent/taskUpdate, or the run's result)."
  (let ((sub (or (plist-get e :subtaskId) ""))
        (kind (plist-get e :kind)))
    ;; A block of thinking ends at its agent's next text or tool call, or
    ;; when the agent or the task ends.
    (pcase kind
      ((or "messageDelta" "message" "toolCall" "subtaskFinished") (agentls--tr-think sub))
      ((or "stateChanged" "agentlsResult")
       (when (or (equal kind "agentlsResult") (member (plist-get e :state) '("done" "failed" "stopped")))
         (dolist (entry agentls--tr-thinking)
           (agentls--tr-think (car entry))))))
    (pcase kind
      ("thinking"
       (setf (alist-get sub agentls--tr-thinking nil nil #'equal)
             (concat (alist-get sub agentls--tr-thinking nil nil #'equal) (plist-get e :text))))
      ("engineStarted"
       (agentls--tr-line sub (format "  ▶ on %s: %s" (plist-get e :text) (or (plist-get e :summary) "started"))))
      ("steps"
       (let* ((steps (append (plist-get e :steps) nil))
              (done (cl-count "completed" steps :key (lambda (st) (plist-get st :status)) :test #'equal)))
         (if (null steps)
             (agentls--tr-line sub "  ☰ steps cleared")
           (agentls--tr-line sub (format "  ☰ steps: %d of %d done" done (length steps)))
           (agentls--tr-details (mapcar (lambda (st) (concat "      " (agentls--step-line st))) steps)))))
      ("todos"
       (let* ((todos (append (plist-get e :todos) nil))
              (done (cl-count "done" todos :key (lambda (td) (plist-get td :status)) :test #'equal)))
         (if (null todos)
             (agentls--tr-line sub "  ☐ todos cleared")
           (agentls--tr-line sub (format "  ☐ todos: %d of %d done" done (length todos)))
           (agentls--tr-details (mapcar (lambda (td) (concat "      " (agentls--todo-line td))) todos)))))
      ("messageDelta"
       (push sub agentls--tr-streamed)
       (agentls--tr-text sub (apply #'concat (reverse (plist-get e :parts)))))
      ("message"
       ;; The whole text of a turn that streamed already: shown.  Text
       ;; that did not stream (a note of the server's) is shown now.
       (if (member sub agentls--tr-streamed)
           (setq agentls--tr-streamed (delete sub agentls--tr-streamed))
         (setq agentls--tr-open nil)
         (agentls--tr-text sub (plist-get e :text)))
       (setq agentls--tr-open nil))
      ("planned"
       (agentls--tr-line "" "  plan:")
       (dolist (line (split-string (or (plist-get e :text) "") "\n" t))
         (agentls--tr-push (concat "    " line))))
      ("subtaskStarted" (agentls--tr-block sub))
      ("toolCall"
       (let ((args (plist-get e :arguments)))
         (agentls--tr-line sub (concat "  ⚙ " (agentls--tr-brief (plist-get e :tool) args)))
         (let ((marker (copy-marker (line-beginning-position))))
           (setf (alist-get sub agentls--tr-tools nil nil #'equal)
                 (append (alist-get sub agentls--tr-tools nil nil #'equal)
                         (list (cons (plist-get e :tool) marker)))))
         (agentls--tr-details (agentls--tr-arguments args))))
      ("toolResult"
       (let* ((queue (alist-get sub agentls--tr-tools nil nil #'equal))
              (entry (cl-find (plist-get e :tool) queue :key #'car :test #'equal)))
         (when entry
           (setf (alist-get sub agentls--tr-tools nil nil #'equal) (delq entry queue))
           (save-excursion
             (goto-char (cdr entry))
             (when (looking-at "  ⚙")
               (replace-match (if (eq :json-false (plist-get e :ok)) "  ✗" "  ✓") t t))
             (end-of-line)
             (when-let ((summary (plist-get e :summary)))
               (insert "  → " (agentls--tr-short summary))))
           (set-marker (cdr entry) nil))))
      ("ask"
       (agentls--tr-line sub (format "  ? %s%s" (agentls--tr-short (or (plist-get e :question) (plist-get e :text)) 200)
                                     (if-let ((options (append (plist-get e :options) nil)))
                                         (format "  [%s]" (string-join options " / "))
                                       ""))))
      ("answered"
       (agentls--tr-line sub (concat "  ↳ " (or (plist-get e :answer) "(no answer)"))))
      ("blocked"
       (agentls--tr-line sub (format "  ⊘ blocked %s: %s" (or (plist-get e :path) "")
                                     (agentls--tr-short (plist-get e :reason) 160))
                         'error))
      ("changeApplied"
       (agentls--tr-line sub (format "  ✎ changed %s%s" (plist-get e :path)
                                     (if-let ((why (plist-get e :reason)))
                                         (format "  (%s)" (agentls--tr-short why 120))
                                       ""))
                         'success))
      ("changeHeld"
       (agentls--tr-line sub (format "  ⏸ held %s for the review at the end" (plist-get e :path))))
      ("changeRejected"
       (agentls--tr-line sub (format "  ✗ not changed %s: %s" (plist-get e :path)
                                     (agentls--tr-short (plist-get e :reason) 160))
                         'error))
      ("commandStarted" (agentls--tr-line sub (concat "  $ " (agentls--tr-short (plist-get e :text) 160))))
      ("commandFinished"
       (agentls--tr-line sub (format "  $ %s → %s" (agentls--tr-short (plist-get e :text) 120)
                                     (or (plist-get e :summary) ""))))
      ("subtaskFinished"
       (let* ((s (cl-find sub (agentls-task-subtasks agentls--tr-task)
                          :key (lambda (s) (plist-get s :id)) :test #'equal))
              (state (or (plist-get e :state) (plist-get s :state) "finished"))
              (detail (or (plist-get e :reason) (plist-get e :summary) (plist-get s :error) (plist-get s :result))))
         (agentls--tr-line sub (format "  %s %s%s" (pcase state ("done" "✓") ("failed" "✗") ("skipped" "↷")
                                                     ("blocked" "⊘") (_ "•"))
                                       state (if detail (concat ": " (agentls--tr-short detail 160)) "")))))
      ("subtaskAdded"
       (agentls--tr-line "" (format "  + subtask %s added: %s" sub (agentls--tr-short (plist-get e :text) 120))))
      ("subtaskRemoved" (agentls--tr-line "" (format "  − subtask %s removed" sub)))
      ("subtaskSkipped" (agentls--tr-line "" (format "  ↷ subtask %s skipped" sub)))
      ("intentSelected" (agentls--tr-line sub (format "  intent %s" (plist-get e :text))))
      ("sessionContinued" (agentls--tr-line "" (format "  continues session %s" (plist-get e :text))))
      ("stateChanged"
       (when (member (plist-get e :state) '("done" "failed" "stopped"))
         (agentls--tr-finish (plist-get e :state) (plist-get e :summary)
                             (cons (or (plist-get e :applied) 0) (or (plist-get e :rejected) 0))
                             nil)))
      ("agentlsResult"
       (let ((result (plist-get e :result)))
         (agentls--tr-finish (plist-get result :state) (plist-get result :summary)
                             (agentls--counts result) (or (plist-get result :changes) [])))))))

(defun agentls--transcript-write (buffer events)
  "Write EVENTS at the end of the transcript BUFFER, in one batch.
Windows whose point was at the end follow it; the others stay."
  (with-current-buffer buffer
    (let* ((inhibit-read-only t)
           (end (point-max))
           (following (cl-remove-if-not (lambda (w) (= (window-point w) end))
                                        (get-buffer-window-list buffer nil t)))
           (at-end (= (point) end))
           (here (point)))
      (dolist (e events)
        (unless agentls--tr-ended
          ;; An event the transcript cannot show costs that event only.
          (with-demoted-errors "agentls: transcript: %S"
            (agentls--tr-event e))))
      (goto-char (if at-end (point-max) here))
      (dolist (w following)
        (set-window-point w (point-max)))
      (cl-incf agentls-transcript-writes)
      (set-buffer-modified-p nil))))

(defun agentls-transcript-toggle ()
  "Show or hide the arguments of the tool call or the diff on this line.
On a header line, show or hide its block."
  (interactive)
  (if (outline-on-heading-p)
      (outline-toggle-children)
    (let ((ov (cl-find-if (lambda (o) (overlay-get o 'agentls-details))
                          (overlays-in (line-end-position) (min (point-max) (1+ (line-end-position)))))))
      (unless ov (user-error "Nothing is hidden under this line"))
      (overlay-put ov 'invisible (if (overlay-get ov 'invisible) nil 'agentls-details)))))

(defun agentls-transcript-show-all (&optional hide)
  "Show the arguments of every tool call and the diffs; with HIDE, hide them."
  (interactive "P")
  (dolist (ov (overlays-in (point-min) (point-max)))
    (when (overlay-get ov 'agentls-details)
      (overlay-put ov 'invisible (and hide 'agentls-details)))))

(defvar agentls-transcript-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "TAB") #'agentls-transcript-toggle)
    (define-key map (kbd "a") #'agentls-transcript-show-all)
    (define-key map (kbd "n") #'outline-next-visible-heading)
    (define-key map (kbd "p") #'outline-previous-visible-heading)
    map)
  "Keymap of `agentls-transcript-mode'.")

(define-derived-mode agentls-transcript-mode special-mode "agentls-transcript"
  "The live transcript of an agentls task.
What the agents write, as it streams, in a block per subtask (a
header each time another subtask speaks); each tool call on one line
\(⚙ while it runs, then ✓ or ✗ and its result) with its arguments
hidden under it; questions, commands and changes; and at the end the
task's state, its changes applied and rejected, and their diffs.
Point at the end follows the stream; elsewhere it stays.
\\<agentls-transcript-mode-map>
  \\[agentls-transcript-toggle]  show or hide what is under the line (on a header: its block)
  \\[agentls-transcript-show-all]  show everything hidden (\\[universal-argument]: hide it)
  \\[outline-next-visible-heading] \\[outline-previous-visible-heading]  next, previous header

\\{agentls-transcript-mode-map}"
  (setq-local outline-regexp "── ")
  (setq-local outline-level (lambda () 1))
  (outline-minor-mode 1)
  (add-to-invisibility-spec '(agentls-details . t))
  (setq-local truncate-lines nil)
  (setq-local word-wrap t))

(defun agentls--default-task ()
  "Return the task at point in the tasks buffer, else the running or newest one."
  (or (car (agentls--subtask-line))
      (car (last (agentls--running-tasks)))
      (car (last (agentls--all-tasks)))
      (user-error "No agentls task yet")))

;;;###autoload
(defun agentls-transcript (task)
  "Show the live transcript of TASK; return its buffer.
Interactively, the task at point in the tasks buffer, else the
running task, else the newest; with a prefix argument, read it."
  (interactive
   (list (if current-prefix-arg
             (let ((choices (mapcar (lambda (task) (cons (format "%s  %s" (agentls-task-id task)
                                                                 (agentls--tr-short (agentls-task-prompt task) 60))
                                                         task))
                                    (reverse (agentls--all-tasks)))))
               (cdr (assoc (completing-read "agentls: transcript of task: " choices nil t) choices)))
           (agentls--default-task))))
  (let ((buffer (agentls-task-transcript task)))
    (unless (buffer-live-p buffer)
      (setq buffer (get-buffer-create (format "*agentls-transcript: %s*" (agentls-task-id task))))
      (with-current-buffer buffer
        (agentls-transcript-mode)
        (setq agentls--tr-task task
              default-directory (agentls-connection-root (agentls-task-connection task)))
        (let ((inhibit-read-only t))
          (erase-buffer)
          (insert (propertize (format "agentls transcript  task %s  %s" (agentls-task-id task)
                                      (agentls--tr-short (agentls-task-prompt task) 80))
                              'face 'bold))))
      (setf (agentls-task-transcript task) buffer
            (agentls-task-pending task) nil)
      (agentls--transcript-write buffer (reverse (agentls-task-log task)))
      (with-current-buffer buffer (goto-char (point-max))))
    (let ((window (display-buffer buffer)))
      (when window (set-window-point window (with-current-buffer buffer (point-max)))))
    buffer))

;;;; The minor mode

(defvar agentls-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "r") #'agentls-run)
    (define-key map (kbd "s") #'agentls-stop)
    (define-key map (kbd "t") #'agentls-tasks)
    (define-key map (kbd "h") #'agentls-heat)
    (define-key map (kbd "n") #'agentls-neighbours)
    (define-key map (kbd "S") #'agentls-sessions)
    (define-key map (kbd "l") #'agentls-trace-at-point)
    (define-key map (kbd "m") #'agentls-mcp-servers)
    (define-key map (kbd "T") #'agentls-transcript)
    (define-key map (kbd "x") #'agentls-skip-subtask)
    (define-key map (kbd "a") #'agentls-add-subtask)
    (define-key map (kbd "D") #'agentls-remove-subtask)
    (define-key map (kbd "f") #'agentls-follow-up)
    (define-key map (kbd "i") #'agentls-select-intent)
    (define-key map (kbd "M") #'agentls-select-model)
    (define-key map (kbd "e") #'agentls-run-on-engine)
    (define-key map (kbd "c") #'agentls-check-model)
    (define-key map (kbd "d") #'agentls-doctor)
    (define-key map (kbd "u") #'agentls-undo)
    (define-key map (kbd "q") #'agentls-shutdown)
    (define-key map (kbd "A") #'agentls-attach)
    map)
  "Keymap of the agentls commands.")
(fset 'agentls-command-map agentls-command-map)

(defvar agentls-mode-map (make-sparse-keymap)
  "Keymap of `agentls-mode'.
`agentls-keymap-prefix' in it leads to `agentls-command-map'.")

;;;###autoload
(define-minor-mode agentls-mode
  "Global minor mode for the agentls commands.
It puts `agentls-command-map' under `agentls-keymap-prefix' and shows
the progress of running tasks in the mode line.

\\{agentls-command-map}"
  :global t
  :group 'agentls
  :keymap agentls-mode-map
  (when agentls-mode
    (define-key agentls-mode-map agentls-keymap-prefix 'agentls-command-map)
    (agentls--mode-line-install)))

(provide 'agentls)
;;; agentls.el ends here
