;;; agentls-tasks.el --- The agent's tasks: run, steer, undo, list -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; What a task is in Emacs (`agentls-task'), kept up to date from
;; agent/taskUpdate and $/progress; the commands that start, stop and
;; steer tasks, follow up on them and undo them; the intent, the model
;; and the engine of the next tasks; the mode line; and the tasks
;; buffer (`agentls-tasks'), a live tree of tasks, subtasks and their
;; todos.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'seq)
(require 'subr-x)
(require 'tabulated-list)
(require 'agentls-rpc)

(defvar agentls--connections)
(defvar agentls-task-finished-functions)
(declare-function agentls--connection "agentls" (&optional root))
(declare-function agentls--project-root "agentls" (&optional dir))
(declare-function agentls--refresh-trust "agentls" (conn))
(declare-function agentls--transcript-add "agentls-transcript" (task event))
(declare-function agentls--heat-redraw "agentls-heat" ())
(declare-function agentls-transcript "agentls-transcript" (task))

;;;; Tasks

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
  (subtask-counts nil :documentation "How its subtasks ended, the server's counts plist, once it ended.")
  (usage nil :documentation "Its usage plist so far: the last usage event's, then the result's.")
  (instructions nil :documentation "The project's instruction files it works under (plists).")
  (thinking nil :documentation "Subtask ids (\"\" the coordinator) whose model thinks now.")
  (log nil :documentation "Its events for the transcript, newest first.")
  (pending nil :documentation "Events its transcript buffer has not shown yet.")
  (transcript nil :documentation "Its transcript buffer, once shown.")
  (started (float-time) :documentation "When it was started."))

(defconst agentls--final-states '("done" "failed" "stopped" "interrupted")
  "Task states after which nothing more happens.")

;;;; Updates from the server

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
          ("instructions" (setf (agentls-task-instructions task) (append (plist-get event :instructions) nil)))
          ("thinking" (cl-pushnew (or (plist-get event :subtaskId) "") (agentls-task-thinking task)
                                  :test #'equal))
          ((or "messageDelta" "message" "toolCall" "subtaskFinished")
           (setf (agentls-task-thinking task)
                 (delete (or (plist-get event :subtaskId) "") (agentls-task-thinking task)))))
        (when (and (equal (plist-get event :kind) "stateChanged") (plist-get event :applied))
          (setf (agentls-task-counts task)
                (cons (plist-get event :applied) (or (plist-get event :rejected) 0))))
        (when (and (equal (plist-get event :kind) "stateChanged") (plist-get event :counts))
          (setf (agentls-task-subtask-counts task) (plist-get event :counts)))
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
    ;; The trust may have changed since the last task (a function of
    ;; `agentls-workspace-trust' asked again): agentls hears it first.
    (agentls--refresh-trust conn)
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
                             :summary (format "%s (%s)" (agentls--words message) code)))))
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
For example \"1200 in (800 cached) / 34 out, $0.0123, context 1200 of
200000 (0%)\": what the provider's cache read, the cost and the context
only when known."
  (if (not usage)
      ""
    (let ((ctx (or (plist-get usage :contextTokens) 0))
          (window (or (plist-get usage :contextWindow) 0))
          (cached (or (plist-get usage :cacheReadTokens) 0))
          (cost (plist-get usage :cost)))
      (concat (format "%d in%s / %d out" (or (plist-get usage :inputTokens) 0)
                      (if (> cached 0) (format " (%d cached)" cached) "")
                      (or (plist-get usage :outputTokens) 0))
              (if (numberp cost) (format ", $%.4f" cost) "")
              (cond ((and (> ctx 0) (> window 0)) (format ", context %d of %d (%d%%)" ctx window (/ (* ctx 100) window)))
                    ((> ctx 0) (format ", context %d" ctx))
                    (t ""))))))

(defun agentls--instructions-text (files)
  "Name the instruction FILES of an instructions event.
For example \"AGENTS.md (9 tokens), pkg/AGENTS.md (cut at 30 tokens),
web/CLAUDE.md (left out)\"; \"none\" when there is none."
  (if (null files)
      "none"
    (mapconcat (lambda (f)
                 (let ((tokens (or (plist-get f :tokens) 0)))
                   (cond ((and (plist-get f :cut) (> tokens 0))
                          (format "%s (cut at %d tokens)" (plist-get f :path) tokens))
                         ((plist-get f :cut) (format "%s (left out)" (plist-get f :path)))
                         (t (format "%s (%d tokens)" (plist-get f :path) tokens)))))
               files ", ")))

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
  (when-let ((counts (plist-get result :counts)))
    (setf (agentls-task-subtask-counts task) counts))
  ;; One line, in the echo area: it takes no key and moves no point; the
  ;; whole summary is in the transcript and the tasks buffer.
  (message "%s" (agentls--end-message task))
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

(defun agentls--subtask-counts-text (counts)
  "Say how a task's subtasks ended, from the server's COUNTS plist.
Every subtask it had is counted, the removed ones too: \"1 of 3 subtasks
done, 1 skipped, 1 removed\".  nil without COUNTS (an older server) or
without a subtask (planning failed)."
  (when counts
    (let* ((n (lambda (k) (or (plist-get counts k) 0)))
           (total (apply #'+ (mapcar n '(:done :skipped :removed :failed :blocked :notRun)))))
      (when (> total 0)
        (mapconcat #'identity
                   (cons (format "%d of %d %s done" (funcall n :done) total (if (= total 1) "subtask" "subtasks"))
                         (cl-loop for (key word) in '((:skipped "skipped") (:removed "removed") (:failed "failed")
                                                      (:blocked "blocked") (:notRun "not run"))
                                  when (> (funcall n key) 0)
                                  collect (format "%d %s" (funcall n key) word)))
                   ", ")))))

(defun agentls--summary-adds-p (task)
  "Return non-nil if TASK's summary has more to say than its counts.
It does for a task of one subtask (its result) and one without counts
\(an older server, a failed plan); the server words the first line of a
task of several subtasks from the same counts."
  (let ((counts (agentls-task-subtask-counts task)))
    (or (null (agentls--subtask-counts-text counts))
        (= 1 (apply #'+ (mapcar (lambda (k) (or (plist-get counts k) 0))
                                '(:done :skipped :removed :failed :blocked :notRun)))))))

(defun agentls--task-ending (task)
  "Say how TASK ended, in one line.
First its subtasks from the server's counts, then the first line of its
summary where that says more (one subtask's result).  nil while it runs."
  (when (member (agentls-task-state task) agentls--final-states)
    (let ((ended (agentls--subtask-counts-text (agentls-task-subtask-counts task)))
          (first (car (split-string (or (agentls-task-summary task) "") "\n" t "[ \t]+"))))
      (cond ((and ended first (agentls--summary-adds-p task)) (format "%s · %s" ended first))
            (ended ended)
            (t first)))))

(defun agentls--end-message (task)
  "Return TASK's end in one line: how its subtasks ended, what it changed.
A rejected change is no change: it says what was applied and what not."
  (let ((ended (agentls--subtask-counts-text (agentls-task-subtask-counts task)))
        (first (car (split-string (or (agentls-task-summary task) "") "\n" t "[ \t]+")))
        (changes (agentls--counts-text (agentls-task-counts task))))
    (format "agentls: task %s %s: %s" (agentls-task-id task) (agentls-task-state task)
            (let ((counts (if ended (format "%s; %s" ended changes) changes)))
              (if (and first (agentls--summary-adds-p task))
                  (format "%s (%s)" (agentls--words first) counts)
                counts)))))

(defun agentls--words (text)
  "Name the server's settings in TEXT as Emacs names them.
The server says initializationOptions.maxWorkers where the person set
`agentls-max-workers', and names a task's own model by the request that
gave it, where the person chose it with `agentls-select-model'."
  (let ((options '(("model" . "agentls-model") ("editMode" . "agentls-edit-mode")
                   ("maxWorkers" . "agentls-max-workers") ("commands" . "agentls-commands")
                   ("allowCommands" . "agentls-allow-commands") ("zones" . "agentls-zones")
                   ("timeouts" . "agentls-timeouts") ("mcpServers" . "agentls-mcp-servers")
                   ("engines" . "agentls-engines") ("allowMcpTools" . "agentls-allow-mcp-tools")
                   ("thinking" . "agentls-thinking")))
        (case-fold-search nil))
    (when (stringp text)
      (setq text (replace-regexp-in-string
                  "initializationOptions\\.model (editor setting \"model\", " "agentls-model (" text t t))
      (setq text (replace-regexp-in-string
                  "initializationOptions\\.\\([A-Za-z]+\\)"
                  (lambda (m)
                    (let ((key (match-string 1 m)))
                      (or (cdr (assoc key options))
                          (format "%s in agentls-initialization-options" key))))
                  text t t))
      (setq text (replace-regexp-in-string "agent/run model" "the model of agentls-select-model" text t t))
      (setq text (replace-regexp-in-string "agent/checkModel model" "the model checked" text t t)))
    text))

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

(defun agentls-skip-subtask (task subtask-id)
  "Skip the subtask SUBTASK-ID of TASK, pending or running.
A running subtask is cancelled; the subtasks that wait on it go on
as if it were done.  Interactively, the subtask at point in the
tasks buffer, else one of the running task's, read with completion."
  (interactive (agentls--read-subtask "skip" '("pending" "running")))
  (agentls--control task 'agent/skipSubtask (list :taskId (agentls-task-id task) :subtaskId subtask-id))
  (message "agentls: subtask %s of task %s skipped" subtask-id (agentls-task-id task)))

(defun agentls-remove-subtask (task subtask-id)
  "Remove the pending subtask SUBTASK-ID from TASK's plan.
Interactively, the subtask at point in the tasks buffer, else one of
the running task's, read with completion."
  (interactive (agentls--read-subtask "remove" '("pending")))
  (agentls--control task 'agent/removeSubtask (list :taskId (agentls-task-id task) :subtaskId subtask-id))
  (message "agentls: subtask %s of task %s removed" subtask-id (agentls-task-id task)))

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
                                  ;; One line per entry: how it ended (the server's
                                  ;; counts, then a summary's first line), else the prompt.
                                  (concat (or (agentls--task-ending task)
                                              (car (split-string (or (agentls-task-prompt task) "")
                                                                 "\n" t "[ \t]+"))
                                              "")
                                          (if usage (concat "  · tokens " (agentls--usage-text (agentls--task-total usage))) "")
                                          (if (member "" (agentls-task-thinking task)) "  · thinking…" ""))))
         ;; The project's instruction files it works under, on a line.
         append (when-let ((files (agentls-task-instructions task)))
                  (list (list id (vector "" "" "" "" (concat "  instructions: " (agentls--instructions-text files))))))
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
        :cacheReadTokens (plist-get usage :cacheReadTokens) :cost (plist-get usage :cost)))

(defun agentls--tasks-redraw ()
  "Redraw the tasks buffer, keeping point on its entry."
  (agentls--tasks-entries)
  (tabulated-list-print t))

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
             (agentls--words (plist-get result :message)))
    result))

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

(provide 'agentls-tasks)
;;; agentls-tasks.el ends here
