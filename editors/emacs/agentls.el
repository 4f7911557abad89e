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
;;
;; The package is this file and the six it loads, each a part a
;; newcomer can read on its own:
;;
;;   agentls.el            the settings, starting and stopping agentls
;;                         (one process per project), `agentls-mode'
;;   agentls-rpc.el        the connection on jsonrpc.el, requests to the
;;                         server, and the server's calls on Emacs: files,
;;                         questions, commands
;;   agentls-edit.el       workspace/applyEdit: check, confirm, apply whole
;;   agentls-diagnostics.el agent/diagnostics: eglot's and Flymake's
;;                         diagnostics, and the word that they changed
;;   agentls-tasks.el      tasks: run, stop, steer, follow up, undo; the
;;                         next tasks' intent, model and engine; the tasks
;;                         buffer and the mode line
;;   agentls-transcript.el the live transcript of a task
;;   agentls-heat.el       the heat view and a file's neighbours
;;   agentls-sessions.el   sessions, trace, MCP servers, the doctor
;;
;; The other files build on agentls-rpc.el, the transcript and the
;; sessions on agentls-tasks.el too; none loads this one.  What a file
;; uses of this one, the settings and `agentls--connection', it declares
;; at its top.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'project)
(require 'subr-x)
(require 'agentls-rpc)
(require 'agentls-diagnostics)
(require 'agentls-edit)
(require 'agentls-tasks)
(require 'agentls-transcript)
(require 'agentls-heat)
(require 'agentls-sessions)

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

(defcustom agentls-diagnostics-wait nil
  "Milliseconds an agent's edit waits for the language server to check it.
After a worker's edit, agentls waits for eglot's server (or another
Flymake backend) to report on the file before it tells the worker the
errors the edit introduced; this bounds the wait (agentls's default,
2000, when nil; 0 takes what Emacs has at once, 300000 at most)."
  :type '(choice (const :tag "Default" nil) natnum))

(defcustom agentls-diagnostics-commands nil
  "Commands that check each language where no editor gives diagnostics.
An alist of (LANGUAGE . COMMAND), LANGUAGE one of \"go\", \"python\",
\"javascript\", \"typescript\", \"rust\", \"java\", \"c\", \"cpp\":
for example ((\"go\" . \"go vet ./...\")).  Emacs gives agentls the
diagnostics of eglot and Flymake, so these matter only to a file of a
language neither checks."
  :type '(alist :key-type (string :tag "Language") :value-type (string :tag "Command")))

(defcustom agentls-initialization-options nil
  "Further initializationOptions, as a plist merged over the others."
  :type '(plist :value-type sexp))

(defcustom agentls-workspace-trust nil
  "Whether you trust the projects agentls works in.
In a project you do not trust, agentls asks before it runs any
command (whatever `agentls-commands' and `agentls-allow-commands'
say), starts an MCP server, makes an MCP call or runs a subtask on an
engine, and each question begins \"This workspace is not trusted.\"

`trusted' or `untrusted' says it for every project.  A function is
called with the project root (a directory name) and returns non-nil
when you trust it (but the symbol `untrusted').  nil derives it from
`trusted-content' where Emacs has it (Emacs 30, and the Emacs 28 and
29 of distributions that took in its security fix): a project is
trusted when that is :all or lists the root or a directory above it (a
name ending in a slash), so none is until you list it; elsewhere every
project is trusted, as agentls takes an editor that says nothing.

It is sent to agentls as workspaceTrust when it starts, and again
when it changes: when this option or `trusted-content' is set, and
before each task.  Only its global value counts: a directory-local
value, which a repository could bring, is ignored."
  :type '(choice (const :tag "From `trusted-content' (Emacs 30), else trusted" nil)
                 (const :tag "Trusted" trusted)
                 (const :tag "Untrusted" untrusted)
                 (function :tag "Function of the project root")))
(put 'agentls-workspace-trust 'risky-local-variable t)

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

(defvar agentls--connections (make-hash-table :test #'equal)
  "Project root to live `agentls-connection'.")

(defun agentls--project-root (&optional dir)
  "Return the project root of DIR (`default-directory' if nil).
Without a project it is DIR itself."
  (let* ((dir (or dir default-directory))
         (project (project-current nil dir)))
    (file-name-as-directory
     (expand-file-name (if project (project-root project) dir)))))

(defun agentls--trusted-content-p (root)
  "Return non-nil when `trusted-content' trusts the project at ROOT.
That is when it is :all, or lists ROOT or a directory above it (a name
ending in a slash, as `trusted-content-p' reads them), compared with
ROOT's true name: a project reached through a symbolic link is trusted
for where it really is."
  (let ((trusted (default-value 'trusted-content))
        (dir (file-name-as-directory (file-truename root))))
    (or (eq trusted :all)
        (and (listp trusted)
             (cl-some (lambda (entry)
                        (and (stringp entry)
                             (let ((name (expand-file-name entry)))
                               (if (string-suffix-p "/" entry)
                                   (string-prefix-p (file-name-as-directory name) dir)
                                 (equal (file-name-as-directory name) dir)))))
                      trusted)))))

(defun agentls--workspace-trust (root)
  "Return the trust of the project at ROOT, as (VALUE . SOURCE).
VALUE is \"trusted\" or \"untrusted\", the workspaceTrust of the
protocol; SOURCE says where it came from: `setting', `function',
`trusted-content' or `default' (nothing says otherwise).  A function of
`agentls-workspace-trust' that fails makes the project untrusted, and
says why."
  (let ((setting (default-value 'agentls-workspace-trust)))
    (pcase setting
      ((or 'trusted "trusted") (cons "trusted" 'setting))
      ((or 'untrusted "untrusted") (cons "untrusted" 'setting))
      ('nil (if (boundp 'trusted-content)
                (cons (if (agentls--trusted-content-p root) "trusted" "untrusted") 'trusted-content)
              (cons "trusted" 'default)))
      ((pred functionp)
       (condition-case err
           (cons (pcase (funcall setting root)
                   ((or 'nil 'untrusted "untrusted") "untrusted")
                   (_ "trusted"))
                 'function)
         (error
          (message "agentls: `agentls-workspace-trust' failed for %s: %s; the project is taken as untrusted"
                   root (error-message-string err))
          (cons "untrusted" 'function))))
      (_
       (message "agentls: `agentls-workspace-trust' is %S, which is no trust; the project is taken as untrusted"
                setting)
       (cons "untrusted" 'setting)))))

(defun agentls--initialization-options (&optional root)
  "Return the initializationOptions made of the customizations.
With ROOT, the project's trust goes along as workspaceTrust."
  (let ((opts (copy-sequence agentls-initialization-options)))
    (cl-flet ((add (key value) (unless (plist-member opts key)
                                 (setq opts (plist-put opts key value)))))
      (when root (add :workspaceTrust (car (agentls--workspace-trust root))))
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
      (when (or agentls-diagnostics-wait agentls-diagnostics-commands)
        (add :diagnostics
             (append (and agentls-diagnostics-wait (list :waitMs agentls-diagnostics-wait))
                     (and agentls-diagnostics-commands
                          (list :commands
                                (let ((map (make-hash-table :test #'equal)))
                                  (pcase-dolist (`(,lang . ,cmd) agentls-diagnostics-commands)
                                    (puthash lang cmd map))
                                  map))))))
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
        (list :agent (list :readFile t :runCommand t :ask t :references t :definition t
                           :diagnostics t))))

(defun agentls--live-connection (&optional root)
  "Return the live connection of ROOT (default: this project), or nil."
  (let ((conn (gethash (or root (agentls--project-root)) agentls--connections)))
    (and conn (jsonrpc-running-p conn) conn)))

(defun agentls--connection (&optional root)
  "Return the live connection of ROOT (default: this project), starting one."
  (let ((root (or root (agentls--project-root))))
    (or (agentls--live-connection root) (agentls--start root))))

(defun agentls--events-buffer-initargs ()
  "Return the initargs that bound a connection's events buffer.
The bound is `agentls-events-buffer-size'.  The jsonrpc.el of Emacs 30
takes it as :events-buffer-config; the one of Emacs 28 and 29 as
:events-buffer-scrollback-size, which the newer one still takes but
warns about at every connection.  jsonrpc.el is asked which it knows."
  (if (condition-case nil
          (progn (make-instance 'jsonrpc-connection :name "agentls-probe"
                                :events-buffer-config nil)
                 t)
        (invalid-slot-name nil))
      (list :events-buffer-config (list :size agentls-events-buffer-size :format 'full))
    (list :events-buffer-scrollback-size agentls-events-buffer-size)))

(defun agentls--start (root)
  "Start agentls for the project at ROOT, initialize it and return it."
  (let* ((program (or (executable-find agentls-program)
                      (user-error "Cannot find the agentls program %S; set `agentls-program'"
                                  agentls-program)))
         (name (format "agentls[%s]" (file-name-nondirectory (directory-file-name root))))
         (default-directory root)
         (process nil)
         (conn
          (apply
           #'make-instance
           'agentls-connection
           :name name
           :root root
           :request-dispatcher #'agentls--handle-request
           :notification-dispatcher #'agentls--handle-notification
           :on-shutdown #'agentls--on-shutdown
           :process
           (lambda ()
             (setq process
                   (make-process
                    :name name
                    :command (cons program agentls-program-args)
                    :connection-type 'pipe
                    :coding 'utf-8-emacs-unix
                    :noquery t
                    ;; jsonrpc.el takes the stderr buffer of this name (as eglot
                    ;; names it), hides it and copies its lines to the events buffer.
                    :stderr (get-buffer-create (format "*%s stderr*" name)))))
           (agentls--events-buffer-initargs))))
    (setf (agentls-connection-process conn) process)
    (puthash root conn agentls--connections)
    (condition-case err
        (let* ((options (agentls--initialization-options root))
               (result (agentls--request
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
                             :initializationOptions options)
                       :timeout 30)))
          (setf (agentls-connection-server-info conn) (plist-get result :serverInfo)
                (agentls-connection-trust conn) (plist-get options :workspaceTrust))
          (jsonrpc-notify conn 'initialized (make-hash-table))
          (agentls--mode-line-install)
          (add-hook 'kill-emacs-hook #'agentls-shutdown-all)
          conn)
      (error
       (remhash root agentls--connections)
       ;; Ended first: a newer `jsonrpc-shutdown' warns of a live process.
       (when (process-live-p process) (delete-process process))
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
  (let ((process (agentls-connection-process conn))
        (agentls--stopping t))
    (when (jsonrpc-running-p conn)
      (ignore-errors (agentls--request conn 'shutdown nil :timeout 5))
      (ignore-errors (jsonrpc-notify conn 'exit nil))
      ;; `jsonrpc-shutdown' kills the process at once: give it the time to
      ;; flush its state and exit by itself first.
      (with-timeout (5 nil)
        (while (jsonrpc-running-p conn)
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
      (let ((options (agentls--initialization-options (agentls-connection-root conn))))
        (jsonrpc-notify conn 'workspace/didChangeConfiguration
                        (list :settings (list :agentls options)))
        (setf (agentls-connection-trust conn) (plist-get options :workspaceTrust))))))

;;;; Workspace trust

(defun agentls--refresh-trust (conn)
  "Send CONN's project trust to its agentls when it changed; return it.
agentls takes it for the tasks started afterwards.  A connection still
initializing has no trust yet, and is sent nothing: its initialize
carries the trust."
  (let ((trust (car (agentls--workspace-trust (agentls-connection-root conn)))))
    (unless (or (null (agentls-connection-trust conn))
                (equal trust (agentls-connection-trust conn))
                (not (jsonrpc-running-p conn)))
      (jsonrpc-notify conn 'workspace/didChangeConfiguration
                      (list :settings (list :agentls (list :workspaceTrust trust))))
      (setf (agentls-connection-trust conn) trust)
      (message "agentls: %s is %s now" (agentls-connection-root conn) trust))
    trust))

(defvar agentls--trust-timer nil
  "The timer that sends a change of trust to every agentls, or nil.")

(defun agentls--refresh-all-trust ()
  "Send every running agentls its project's trust, where it changed."
  (setq agentls--trust-timer nil)
  (dolist (conn (hash-table-values agentls--connections))
    (when (jsonrpc-running-p conn)
      (agentls--refresh-trust conn))))

(defun agentls--trust-watcher (_symbol _value operation where)
  "Send the trust again once `agentls-workspace-trust' or `trusted-content' is set.
OPERATION and WHERE are those of `add-variable-watcher': a watcher runs
before the value changes, so the sending waits for a timer; a
buffer-local change counts for nothing."
  (when (and (memq operation '(set let unlet makunbound))
             (null where)
             (null agentls--trust-timer))
    (setq agentls--trust-timer (run-at-time 0 nil #'agentls--refresh-all-trust))))

(add-variable-watcher 'agentls-workspace-trust #'agentls--trust-watcher)
(add-variable-watcher 'trusted-content #'agentls--trust-watcher)

(defun agentls-unload-function ()
  "Remove the watchers of the trust before agentls is unloaded."
  (remove-variable-watcher 'agentls-workspace-trust #'agentls--trust-watcher)
  (remove-variable-watcher 'trusted-content #'agentls--trust-watcher)
  (when agentls--trust-timer (cancel-timer agentls--trust-timer))
  nil)

;;;; The commands of the other files

;; Each is autoloaded from this file, which loads the whole package.

;; agentls-tasks.el
;;;###autoload (autoload 'agentls-run "agentls" nil t)
;;;###autoload (autoload 'agentls-run-on-engine "agentls" nil t)
;;;###autoload (autoload 'agentls-attach "agentls" nil t)
;;;###autoload (autoload 'agentls-stop "agentls" nil t)
;;;###autoload (autoload 'agentls-skip-subtask "agentls" nil t)
;;;###autoload (autoload 'agentls-remove-subtask "agentls" nil t)
;;;###autoload (autoload 'agentls-add-subtask "agentls" nil t)
;;;###autoload (autoload 'agentls-follow-up "agentls" nil t)
;;;###autoload (autoload 'agentls-tasks "agentls" nil t)
;;;###autoload (autoload 'agentls-undo "agentls" nil t)
;;;###autoload (autoload 'agentls-select-intent "agentls" nil t)
;;;###autoload (autoload 'agentls-check-model "agentls" nil t)
;;;###autoload (autoload 'agentls-select-model "agentls" nil t)
;; agentls-transcript.el
;;;###autoload (autoload 'agentls-transcript "agentls" nil t)
;; agentls-heat.el
;;;###autoload (autoload 'agentls-heat "agentls" nil t)
;;;###autoload (autoload 'agentls-neighbours "agentls" nil t)
;; agentls-sessions.el
;;;###autoload (autoload 'agentls-sessions "agentls" nil t)
;;;###autoload (autoload 'agentls-trace-at-point "agentls" nil t)
;;;###autoload (autoload 'agentls-mcp-servers "agentls" nil t)
;;;###autoload (autoload 'agentls-doctor "agentls" nil t)

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
