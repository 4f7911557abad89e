;;; agentls-rpc.el --- The connection to agentls and what it asks of Emacs -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The JSON-RPC half of agentls.el, on jsonrpc.el's public API: the
;; connection class (one per project), requests to the server that wait
;; for their result, and the answers to what the server asks of Emacs:
;; agent/readFile, agent/ask, window/showMessageRequest, agent/runCommand,
;; agent/references and agent/definition here, workspace/applyEdit in
;; agentls-edit.el, agent/diagnostics in agentls-diagnostics.el.  Questions to the person, commands and the questions
;; forwarded to a language server are answered later, outside the process
;; filter: see "Replies that come later".

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'seq)
(require 'subr-x)
(require 'url-util)

(defvar agentls-command-output-limit)
(declare-function eglot-current-server "eglot" ())
(declare-function agentls--apply-edit-request "agentls-edit" (conn params))
(declare-function agentls--diagnostics "agentls-diagnostics" (conn params))
(declare-function agentls--task-update "agentls-tasks" (conn params))
(declare-function agentls--progress "agentls-tasks" (conn params))
(declare-function agentls--heat-update "agentls-heat" (conn params))

;;;; The connection

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
    :documentation "The attachments of the next task, in order (`agentls-attach').")
   (trust
    :initform nil :accessor agentls-connection-trust
    :documentation "The workspaceTrust last sent: \"trusted\" or \"untrusted\".")
   (process
    :initform nil :accessor agentls-connection-process
    :documentation "The agentls process, as the :process function made it."))
  :documentation "A connection to one agentls process serving one project.")

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

;;;; Requests to the server

(defun agentls--request (conn method params &rest args)
  "Send the request METHOD with PARAMS on CONN and wait for its result.
ARGS may give :timeout, in seconds, `jsonrpc-default-request-timeout'
when nil or missing.  As `jsonrpc-request' does, return the result, or
signal a `jsonrpc-error' whose data holds the error's code and message.

It is `jsonrpc-async-request' and a wait, not `jsonrpc-request': the
jsonrpc.el of Emacs 28 and 29 delivers messages from inside its process
filter, and the reply of a `jsonrpc-request' leaves that filter by a
throw, so a message read in the same chunk stays unparsed until more
output arrives (the final reply of a run, right behind the reply to
agent/stop, would wait for ever).  Here the continuations only note the
outcome, and the filter goes on to the end of what it read."
  (let ((timeout (or (plist-get args :timeout) jsonrpc-default-request-timeout))
        (outcome nil))
    (jsonrpc-async-request
     conn method params
     :timeout timeout
     :success-fn (lambda (result) (setq outcome (list :result result)))
     :error-fn (jsonrpc-lambda (&key code message data &allow-other-keys)
                 (setq outcome (list :error `((jsonrpc-error-code . ,code)
                                              (jsonrpc-error-message . ,message)
                                              (jsonrpc-error-data . ,data)))))
     :timeout-fn (lambda ()
                   (setq outcome (list :error '((jsonrpc-error-message . "Timed out"))))))
    ;; The jsonrpc.el of Emacs 30 delivers a reply from a timer, which runs
    ;; inside this wait: each wait is short, so the loop sees it soon.
    (while (not outcome)
      (accept-process-output nil 0.05))
    (if (eq (car outcome) :result)
        (cadr outcome)
      (signal 'jsonrpc-error (cons (format "request %s failed:" method) (cadr outcome))))))

;;;; Replies that come later

;; jsonrpc.el answers a request with whatever its :request-dispatcher
;; returns, as soon as it returns: it has no way to answer later, and it
;; does not tell the dispatcher the request's id.  Questions to the person
;; and commands must not make the dispatcher wait: in Emacs 28 and 29 it
;; runs inside the process filter, where a question in the minibuffer
;; would hold every later message behind it ($/cancelRequest that
;; withdraws it included), and a command may run for minutes.  So their
;; dispatchers return an `agentls--reply', and the :around method below,
;; on our connections' `jsonrpc-connection-send', keeps it instead of
;; sending it and learns the request's id there.  The answer goes out,
;; through `jsonrpc-connection-send' again, once the person answered or the
;; command ended.
;;
;; This is the one place that leans on jsonrpc.el's inside: it takes for
;; granted that the reply to a request leaves through
;; `jsonrpc-connection-send' with :id and :result, the dispatcher's value
;; as it was.  That holds from jsonrpc.el 1.0.14 (Emacs 28) to the one of
;; Emacs 30, which adds :method to the call.  The test
;; agentls-test-reply-that-comes-later-goes-out-once sends a question over
;; a real pipe and reads what Emacs wrote back, so a jsonrpc.el that
;; replied another way would fail it.

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

(defvar agentls--stopping nil
  "Non-nil while agentls processes are being shut down.
A question withdrawn then stays in the minibuffer until the shutdown
is over: leaving the minibuffer would unwind the shutdown, and
`kill-emacs' with it when Emacs is quitting.")

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
    ('agent/references (agentls--ask-language-server conn :textDocument/references params))
    ('agent/definition (agentls--ask-language-server conn :textDocument/definition params))
    ('agent/diagnostics (agentls--diagnostics conn params))
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

;;;; The code graph's questions to the language servers

(defvar agentls-language-server-timeout 4
  "Seconds a language server has to answer a question of agentls's.
Under agentls's own bound of one question (5 seconds): past it, agentls
answers from its code graph.")

(defun agentls--eglot-server (file)
  "Return the eglot server that serves FILE's buffer, or nil.
The buffer is visited (without being shown) when none visits FILE yet,
so that its major mode, and an eglot server for it, may take it."
  (when (fboundp 'eglot-current-server)
    (let ((buffer (or (find-buffer-visiting file)
                      (and (file-regular-p file)
                           (let ((inhibit-message t))
                             (ignore-errors (find-file-noselect file t)))))))
      (when buffer
        (with-current-buffer buffer
          (ignore-errors (eglot-current-server)))))))

(defun agentls--ask-language-server (conn method params)
  "Forward agentls's question PARAMS on CONN to the file's language server.
METHOD is :textDocument/references or :textDocument/definition; the
server is the one eglot runs for the file's buffer, and its answer
goes back when it comes (an `agentls--reply').  Without such a server
the answer is null at once: agentls answers from its code graph."
  (let* ((file (agentls--file-of conn (list :uri (plist-get (plist-get params :textDocument) :uri))))
         (server (agentls--eglot-server file)))
    (when (and server (plist-get params :position))
      (let ((reply (agentls--reply-create :connection conn))
            (failed (lambda (why)
                      (list :error (list :code -32603
                                         :message (format "%s: the language server %s" method why))))))
        (jsonrpc-async-request
         server method params
         :timeout agentls-language-server-timeout
         :success-fn (lambda (result) (agentls--reply-resolve reply (list :result result)))
         :error-fn (jsonrpc-lambda (&key message &allow-other-keys)
                     (agentls--reply-resolve reply (funcall failed (format "answered: %s" message))))
         :timeout-fn (lambda ()
                       (agentls--reply-resolve reply (funcall failed "did not answer in time"))))
        reply))))

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

(provide 'agentls-rpc)
;;; agentls-rpc.el ends here
