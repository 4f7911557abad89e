;;; agentls-transcript.el --- The live transcript of an agentls task -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; `agentls-transcript' shows what a task's agents write, as it streams,
;; in a block per subtask: each tool call on one line with its arguments
;; folded under it, thinking, todos, an engine's steps, questions,
;; commands, changes, and the end with its diffs.  Events are kept in
;; the task's log; a shown transcript is written in batches, at most
;; every `agentls-transcript-interval' seconds.

;;; Code:

(require 'cl-lib)
(require 'json)
(require 'outline)
(require 'seq)
(require 'subr-x)
(require 'agentls-tasks)

(defvar agentls-transcript-interval)

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

(defun agentls--tr-finish (state summary counts change-list &optional subtask-counts)
  "Write the task's end from STATE, SUMMARY, COUNTS and CHANGE-LIST.
CHANGE-LIST is nil until the run's result gives it.  SUBTASK-COUNTS,
the server's counts of how the subtasks ended, head the end when given."
  (unless agentls--tr-finished
    (setq agentls--tr-finished t agentls--tr-open nil agentls--tr-speaker nil)
    (agentls--tr-push "")
    (agentls--tr-push (format "── task %s: %s%s ──" state
                              (if-let ((ended (agentls--subtask-counts-text subtask-counts))) (concat ended " · ") "")
                              (agentls--counts-text counts))
                      'bold)
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
      ("instructions"
       (agentls--tr-line sub (concat "  ⓘ instructions: "
                                     (agentls--instructions-text (append (plist-get e :instructions) nil)))))
      ("compacted"
       (agentls--tr-line sub (format "  ⇣ context compacted: %d → %d tokens"
                                     (or (plist-get e :tokensBefore) 0) (or (plist-get e :tokensAfter) 0)))
       (when-let ((text (plist-get e :text)))
         (agentls--tr-details (list (concat "      " text)))))
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
                             nil (plist-get e :counts))))
      ("agentlsResult"
       (let ((result (plist-get e :result)))
         (agentls--tr-finish (plist-get result :state) (plist-get result :summary)
                             (agentls--counts result) (or (plist-get result :changes) [])
                             (plist-get result :counts)))))))

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

(provide 'agentls-transcript)
;;; agentls-transcript.el ends here
