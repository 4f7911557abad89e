;;; agentls-test.el --- Tests of the agentls package against the real server -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by test/run.sh:
;;
;;   AGENTLS_BIN=/path/to/agentls emacs --batch -Q -L editors/emacs \
;;     -l editors/emacs/test/agentls-test.el -f ert-run-tests-batch-and-exit
;;
;; Every test that talks to agentls starts the real binary in a fresh
;; temporary project, with a scripted model (docs/MODELS.md, scripted model) where a task runs,
;; and waits for what it expects with a deadline, never a fixed sleep.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'agentls)
(require 'lisp-mnt)

(defvar agentls-test--bin (or (getenv "AGENTLS_BIN") "agentls")
  "The agentls binary under test.")

(defconst agentls-test--dir (file-name-directory (or load-file-name buffer-file-name))
  "The directory of the tests.")

(defvar agentls-test--deadline 20
  "Seconds a test waits for something before it fails.")

;;;; Helpers

(defun agentls-test--wait (what predicate)
  "Wait until PREDICATE returns non-nil and return its value.
Fail the test, naming WHAT, after `agentls-test--deadline' seconds."
  (let ((end (+ (float-time) agentls-test--deadline))
        value)
    (while (and (not (setq value (funcall predicate)))
                (< (float-time) end))
      (accept-process-output nil 0.05))
    (or value (ert-fail (list "timed out waiting for" what (agentls-test--recent-traffic))))))

(defun agentls-test--recent-traffic ()
  "Return the end of every agentls events and stderr buffer, for a failure report."
  (mapconcat (lambda (buffer)
               (with-current-buffer buffer
                 (format "==== %s\n%s" (buffer-name)
                         (buffer-substring-no-properties (max (point-min) (- (point-max) 4000))
                                                         (point-max)))))
             (cl-remove-if-not (lambda (b) (string-match-p "\\`[ *]*agentls\\[.*\\(events\\|stderr\\)"
                                                           (buffer-name b)))
                               (buffer-list))
             "\n"))

(defun agentls-test--write (file text)
  "Write TEXT to FILE, making its directory."
  (make-directory (file-name-directory file) t)
  (let ((coding-system-for-write 'utf-8-unix))
    (write-region text nil file nil 'silent)))

(defun agentls-test--read (file)
  "Return the text of FILE."
  (with-temp-buffer
    (let ((coding-system-for-read 'utf-8-unix))
      (insert-file-contents file))
    (buffer-string)))

(defmacro agentls-test--with-project (spec &rest body)
  "Run BODY with a fresh project and agentls serving it.
SPEC is (ROOT CONN &key files script settings): ROOT is bound to the
project directory, CONN to the connection, FILES is an alist of
relative file names and contents, SCRIPT a scripted model (a plist
or alist turned into JSON), SETTINGS further let-bindings of the
customizations as an alist of (SYMBOL . VALUE), TRUST the value of
`agentls-workspace-trust' (`trusted' by default: what this Emacs's
`trusted-content' says is for the tests of the trust to read)."
  (declare (indent 1))
  (let ((root (nth 0 spec)) (conn (nth 1 spec))
        (files (plist-get (nthcdr 2 spec) :files))
        (script (plist-get (nthcdr 2 spec) :script))
        (edit-mode (plist-get (nthcdr 2 spec) :edit-mode))
        (commands (plist-get (nthcdr 2 spec) :commands))
        (trust (if (plist-member (nthcdr 2 spec) :trust) (plist-get (nthcdr 2 spec) :trust) ''trusted)))
    `(let* ((,root (file-name-as-directory (make-temp-file "agentls-project" t)))
            (state (make-temp-file "agentls-state" t))
            (process-environment (append (list (concat "AGENTLS_STATE_DIR=" state)
                                               "AGENTLS_MODEL=" "ANTHROPIC_API_KEY=" "OPENAI_API_KEY="
                             ;; A terminal that speaks UTF-8 whatever the
                             ;; environment's locale (none, under CI):
                             ;; else Emacs draws the marks the test reads as ?.
                             "LANG=C.UTF-8" "LC_ALL=C.UTF-8")
                                         process-environment))
            (agentls-program agentls-test--bin)
            (agentls-edit-mode ,edit-mode)
            (agentls-commands ,commands)
            (agentls-workspace-trust ,trust)
            (agentls-model nil)
            (agentls-task-finished-functions nil)
            (script-file (expand-file-name "script.json" state))
            (,conn nil))
       (unwind-protect
           (progn
             ;; A .git directory makes the root a project for project.el.
             (make-directory (expand-file-name ".git" ,root))
             (dolist (file ,files)
               (agentls-test--write (expand-file-name (car file) ,root) (cdr file)))
             (when ,script
               (agentls-test--write script-file (json-serialize ,script))
               (setq agentls-model (concat "script:" script-file)))
             (let ((default-directory ,root))
               (setq ,conn (agentls--connection ,root))
               ,@body))
         (when (and ,conn (jsonrpc-running-p ,conn))
           (agentls--stop-connection ,conn))
         (dolist (buffer (buffer-list))
           (let ((file (buffer-file-name buffer)))
             (when (and file (string-prefix-p ,root file))
               (with-current-buffer buffer (set-buffer-modified-p nil))
               (kill-buffer buffer))))
         (delete-directory ,root t)
         (delete-directory state t)))))

(defun agentls-test--run (conn prompt)
  "Run PROMPT on CONN; return the task once it ended."
  (let* ((default-directory (agentls-connection-root conn))
         (finished nil)
         (agentls-task-finished-functions
          (list (lambda (task) (setq finished (cons task finished)))))
         (id (agentls-run prompt)))
    (agentls-test--wait (format "task %s to end" id)
                        (lambda () (cl-find id finished :key #'agentls-task-id :test #'equal)))))

(defun agentls-test--run-supported-p (conn)
  "Return non-nil when CONN's server serves agent/run."
  (condition-case err
      (progn (jsonrpc-request conn 'agent/run (list :prompt "") :timeout 5) t)
    (jsonrpc-error (not (eql -32601 (alist-get 'jsonrpc-error-code (cdr err)))))))

(defmacro agentls-test--needs-run (conn)
  "Skip the test when CONN's server does not serve agent/run yet."
  `(unless (agentls-test--run-supported-p ,conn)
     (ert-skip "this agentls does not serve agent/run")))

(defun agentls-test--script (&rest agents)
  "Return a scripted model whose AGENTS are NAME TURNS pairs."
  (let ((table (make-hash-table :test #'equal)))
    (cl-loop for (name turns) on agents by #'cddr
             do (puthash name (vconcat turns) table))
    (list :agents table)))

(defun agentls-test--call (tool &rest arguments)
  "Return a model turn calling TOOL with ARGUMENTS (a plist)."
  (list :toolCalls (vector (list :name tool :arguments (or arguments (make-hash-table))))))

(defun agentls-test--events (task kind)
  "Return TASK's events of KIND, oldest first."
  (reverse (cl-remove-if-not (lambda (e) (equal (plist-get e :kind) kind))
                             (agentls-task-events task))))

;;;; A connection that records what it would send

(defclass agentls-test--recording (agentls-connection)
  ((sent :initform nil :accessor agentls-test--sent))
  :documentation "A connection whose messages are recorded, not sent.")

(cl-defmethod jsonrpc-connection-send ((conn agentls-test--recording) &rest args)
  "Record ARGS instead of sending them on CONN."
  (push args (agentls-test--sent conn)))

(defmacro agentls-test--with-recording (spec &rest body)
  "Run BODY with a recording connection on a fresh directory.
SPEC is (ROOT CONN)."
  (declare (indent 1))
  (let ((root (nth 0 spec)) (conn (nth 1 spec)) (process (make-symbol "process")))
    `(let* ((,root (file-name-as-directory (make-temp-file "agentls-project" t)))
            (,process nil)
            (,conn (make-instance
                    'agentls-test--recording
                    :name "agentls-test" :root ,root
                    :request-dispatcher #'agentls--handle-request
                    :notification-dispatcher #'agentls--handle-notification
                    :process (lambda ()
                               (setq ,process
                                     (make-process :name "agentls-test" :command '("cat")
                                                   :connection-type 'pipe :noquery t))))))
       (setf (agentls-connection-process ,conn) ,process)
       (unwind-protect (progn ,@body)
         (delete-process ,process)
         (kill-buffer (process-buffer ,process))
         (delete-directory ,root t)))))

(defun agentls-test--receive (conn id method params)
  "Deliver the request METHOD with PARAMS and ID to CONN as if it came in."
  (jsonrpc-connection-receive conn (list :jsonrpc "2.0" :id id :method method :params params)))

(defun agentls-test--reply (conn id)
  "Wait for the reply CONN sends to request ID and return it."
  (agentls-test--wait (format "reply to %s" id)
                      (lambda () (cl-find id (agentls-test--sent conn)
                                          ;; A reply has a result or an error (a newer
                                          ;; jsonrpc.el passes the method along too).
                                          :key (lambda (m) (and (or (plist-member m :result)
                                                                    (plist-member m :error))
                                                                (plist-get m :id)))))))

;;;; The package itself

(defun agentls-test--package-files ()
  "Return the files of the package: agentls.el and the agentls-*.el beside it."
  (let ((dir (file-name-directory (locate-library "agentls.el" t))))
    (cons (expand-file-name "agentls.el" dir)
          (directory-files dir t "\\`agentls-.*\\.el\\'"))))

(ert-deftest agentls-test-package-headers ()
  "The package headers are what package.el and MELPA's checks ask for."
  (let ((file (locate-library "agentls.el" t)))
    (with-temp-buffer
      (insert-file-contents file)
      (should (lm-summary))
      (should (string-match-p "\\`[0-9]+\\(\\.[0-9]+\\)*\\'" (lm-header "Version")))
      (should (equal (lm-homepage) "https://github.com/agentls/agentls"))
      (let ((requires (car (read-from-string
                             (mapconcat #'identity (lm-header-multiline "Package-Requires") " ")))))
        (should (equal (assq 'emacs requires) '(emacs "28.1")))
        (should (assq 'jsonrpc requires)))
      (require 'finder)
      (dolist (keyword (split-string (lm-header "Keywords") "[ ,]+" t))
        (should (assq (intern keyword) finder-known-keywords)))
      (should (lm-commentary))
      (goto-char (point-max))
      (should (re-search-backward "^;;; agentls\\.el ends here" nil t)))))

(ert-deftest agentls-test-every-file-is-a-proper-library ()
  "Each file of the package has its header, Code, provide and end, and agentls.el loads it."
  (let ((files (agentls-test--package-files)))
    (should (cdr files))
    (dolist (file files)
      (let ((name (file-name-nondirectory file))
            (feature (file-name-sans-extension (file-name-nondirectory file))))
        (ert-info (name)
          (with-temp-buffer
            (insert-file-contents file)
            (should (lm-summary))
            (goto-char (point-min))
            (should (looking-at-p (concat ";;; " (regexp-quote name) " --- .*-\\*- lexical-binding: t; -\\*-$")))
            (should (lm-commentary))
            (should (re-search-forward "^;;; Code:$" nil t))
            (should (re-search-forward (format "^(provide '%s)$" (regexp-quote feature)) nil t))
            (should (re-search-forward (format "^;;; %s ends here$" (regexp-quote name)) nil t)))
          ;; (require 'agentls) loads every file.
          (should (featurep (intern feature))))))))

(ert-deftest agentls-test-commands-autoload-the-whole-package ()
  "Each command of `agentls-command-map' is autoloaded from agentls.el.
package.el and package-vc make the autoloads of the whole directory;
loading agentls.el loads every file, so a command defined in any file
works from its autoload."
  (let* ((dir (make-temp-file "agentls-autoloads" t))
         (output (expand-file-name "agentls-autoloads.el" dir))
         (commands (list 'agentls-mode 'agentls-start 'agentls-doctor))
         autoloads)
    (unwind-protect
        (progn
          (dolist (file (agentls-test--package-files))
            (copy-file file (expand-file-name (file-name-nondirectory file) dir)))
          (if (fboundp 'loaddefs-generate)
              (funcall 'loaddefs-generate dir output)
            (funcall 'make-directory-autoloads dir output))
          (with-temp-buffer
            (insert-file-contents output)
            (goto-char (point-min))
            (while (re-search-forward "^ *(autoload '\\([^ ]+\\) \"\\([^\"]+\\)\"" nil t)
              (push (cons (intern (match-string 1)) (match-string 2)) autoloads))))
      (delete-directory dir t))
    (map-keymap (lambda (_key command) (when (symbolp command) (push command commands)))
                agentls-command-map)
    (dolist (command commands)
      (ert-info ((symbol-name command))
        (should (commandp command))
        (should (equal (cdr (assq command autoloads)) "agentls"))))))

(ert-deftest agentls-test-every-definition-is-prefixed ()
  "Every function, variable and face the package defines starts with agentls."
  (let (bad)
    (dolist (file (agentls-test--package-files))
      (with-temp-buffer
        (insert-file-contents file)
        (goto-char (point-min))
        (while (re-search-forward
                "^(\\(?:cl-\\)?def\\(?:un\\|var\\|var-local\\|custom\\|face\\|group\\|macro\\|subst\\|const\\|struct\\|class\\|ine-minor-mode\\|ine-derived-mode\\|ine-error\\|alias\\) +(?'?\\([^ ()\n]+\\)"
                nil t)
          (unless (string-prefix-p "agentls" (match-string 1))
            (push (cons (file-name-nondirectory file) (match-string 1)) bad)))))
    (should-not bad)))

;;;; Lifecycle

(ert-deftest agentls-test-initialize-ping-and-shutdown ()
  "Emacs starts agentls, initializes it, pings it and shuts it down cleanly."
  (agentls-test--with-project (root conn)
    (should (equal (plist-get (agentls-connection-server-info conn) :name) "agentls"))
    (should (equal (agentls-connection-root conn) root))
    (should (eq (agentls--connection root) conn))
    (should (equal (jsonrpc-request conn 'agent/ping (list :data (list :n 42 :s "é😀")))
                   (list :data (list :n 42 :s "é😀"))))
    (let ((proc (agentls-connection-process conn)))
      (agentls--stop-connection conn)
      (agentls-test--wait "the process to end" (lambda () (not (process-live-p proc))))
      (should (eql 0 (process-exit-status proc)))
      (should-not (agentls--live-connection root)))))

;;;; jsonrpc.el, through its public API

(defun agentls-test--frame (json)
  "Return the JSON text framed as on the wire."
  (format "Content-Length: %d\r\n\r\n%s" (string-bytes json) json))

(defun agentls-test--frames (text)
  "Return the messages framed in TEXT, parsed, in order; nil for a partial one."
  (let ((messages nil) (start 0) (complete t))
    (while (and complete (string-match "Content-Length: \\([0-9]+\\)\r\n\r\n" text start))
      (let* ((body (match-end 0))
             (bytes (string-to-number (match-string 1 text)))
             (end (+ body bytes)))
        (if (> end (length text))
            (setq complete nil)
          (push (json-parse-string (substring text body end) :object-type 'plist) messages)
          (setq start end))))
    (and complete (nreverse messages))))

(defmacro agentls-test--with-fake-server (spec script &rest body)
  "Run BODY with CONN, an `agentls-connection' to sh running SCRIPT.
SPEC is (CONN . INITARGS): INITARGS go to `make-instance', after the
connection's name, root (a fresh directory) and :process.  The values
of `agentls-test--fake-args' are SCRIPT's positional arguments."
  (declare (indent 2))
  (let ((conn (car spec)) (initargs (cdr spec)) (process (make-symbol "process")))
    `(let* ((root (file-name-as-directory (make-temp-file "agentls-fake" t)))
            (,process nil)
            (,conn (make-instance
                    'agentls-connection :name "agentls-fake" :root root ,@initargs
                    :process (lambda ()
                               (setq ,process
                                     (make-process :name "agentls-fake"
                                                   :command (append (list "sh" "-c" ,script "sh")
                                                                    agentls-test--fake-args)
                                                   :connection-type 'pipe :noquery t))))))
       (unwind-protect (progn ,@body)
         (let ((events (jsonrpc-events-buffer ,conn)))
           (delete-process ,process)
           (jsonrpc-shutdown ,conn t)
           (kill-buffer events))
         (delete-directory root t)))))

(defvar agentls-test--fake-args nil
  "The positional arguments of the fake server's script.")

(ert-deftest agentls-test-a-reply-read-with-another-message-lets-it-through ()
  "A message read in the same chunk as the reply to `agentls--request' is handled.
The fake server answers the request and sends a notification in one
write, so Emacs reads both at once.  Were the reply to leave the
process filter by a throw, as `jsonrpc-request' does in Emacs 28, the
notification would wait for output that never comes."
  (let ((seen nil)
        (agentls-test--fake-args nil)
        (script (mapconcat
                 #'identity
                 '(;; The request: its Content-Length, the blank line, its body.
                   "IFS= read -r header; n=${header#Content-Length: }; n=${n%?}"
                   "IFS= read -r blank; body=$(head -c \"$n\")"
                   "id=$(printf '%s' \"$body\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')"
                   ;; Its reply and a notification, in one write.
                   "reply=\"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":$id,\\\"result\\\":{\\\"pong\\\":true}}\""
                   "note='{\"jsonrpc\":\"2.0\",\"method\":\"agent/later\",\"params\":{}}'"
                   "printf 'Content-Length: %d\\r\\n\\r\\n%sContent-Length: %d\\r\\n\\r\\n%s' ${#reply} \"$reply\" ${#note} \"$note\""
                   "exec cat >/dev/null")
                 "\n")))
    (agentls-test--with-fake-server
        (conn :notification-dispatcher (lambda (_conn method _params) (push method seen)))
        script
      (should (equal (agentls--request conn 'agent/ping (make-hash-table)) '(:pong t)))
      (agentls-test--wait "the notification read with the reply"
                          (lambda () (memq 'agent/later seen))))))

(ert-deftest agentls-test-reply-that-comes-later-goes-out-once ()
  "A question's answer goes out once, with the request's id, over a real pipe.
jsonrpc.el would send the dispatcher's value at once; the connection
holds it back and sends the answer when the person gave it.  The fake
server sends agent/ask and writes what Emacs sends back to a file."
  (let* ((out (make-temp-file "agentls-sent"))
         (agentls-test--fake-args
          (list (agentls-test--frame
                 "{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"agent/ask\",\"params\":{\"question\":\"Which colour?\"}}")
                out))
         (sent (lambda () (agentls-test--frames (agentls-test--read out)))))
    (unwind-protect
        (cl-letf (((symbol-function 'read-string) (lambda (&rest _) "blue")))
          (agentls-test--with-fake-server
              (conn :request-dispatcher #'agentls--handle-request
                    :notification-dispatcher #'agentls--handle-notification)
              "printf '%s' \"$1\"; exec cat > \"$2\""
            (agentls-test--wait "the answer" (lambda () (funcall sent)))
            ;; Emacs writes in order: what it sent before this came first.
            (jsonrpc-notify conn 'agent/done (make-hash-table))
            (agentls-test--wait "agent/done" (lambda () (= 2 (length (funcall sent)))))
            (should (equal (funcall sent)
                           '((:jsonrpc "2.0" :id 41 :result (:answer "blue"))
                             (:jsonrpc "2.0" :method "agent/done" :params nil))))
            (should (= 0 (hash-table-count (agentls-connection-pending conn))))))
      (delete-file out))))

(ert-deftest agentls-test-events-buffer-is-bounded-without-a-warning ()
  "`agentls-events-buffer-size' reaches jsonrpc.el the way it takes it, with no warning.
At 0 the events buffer keeps no message."
  (let ((agentls-events-buffer-size 0)
        (warnings nil))
    (cl-letf (((symbol-function 'display-warning)
               (lambda (&rest args) (push args warnings))))
      (agentls-test--with-project (_root conn)
        (should (equal (agentls--request conn 'agent/ping (list :data 1)) '(:data 1)))
        (with-current-buffer (jsonrpc-events-buffer conn)
          (should-not (string-search "agent/ping" (buffer-string))))))
    (should-not warnings)))

(ert-deftest agentls-test-initialization-options ()
  "The customizations become initializationOptions; unset ones are left out."
  (let ((agentls-model "script:/tmp/s.json") (agentls-edit-mode 'apply)
        (agentls-max-workers 2) (agentls-commands 'deny)
        (agentls-allow-commands '("go test")) (agentls-zones '(:deny ("secrets/**")))
        (agentls-timeouts '(:humanMs 1000)) (agentls-initialization-options '(:trace t)))
    (should (equal (json-parse-string (json-serialize (agentls--initialization-options))
                                      :object-type 'alist)
                   '((trace . t) (model . "script:/tmp/s.json") (editMode . "apply")
                     (maxWorkers . 2) (commands . "deny") (allowCommands . ["go test"])
                     (zones (deny . ["secrets/**"])) (timeouts (humanMs . 1000))))))
  (let ((agentls-model nil) (agentls-edit-mode nil) (agentls-max-workers nil)
        (agentls-commands nil) (agentls-allow-commands nil) (agentls-zones nil)
        (agentls-timeouts nil) (agentls-initialization-options nil))
    (should (equal (json-serialize (agentls--initialization-options)) "{}"))))

(ert-deftest agentls-test-diagnostics-options ()
  "The diagnostics customizations go out as the diagnostics setting."
  (let ((agentls-model nil) (agentls-edit-mode nil) (agentls-max-workers nil)
        (agentls-commands nil) (agentls-allow-commands nil) (agentls-zones nil)
        (agentls-timeouts nil) (agentls-initialization-options nil)
        (agentls-diagnostics-wait 500)
        (agentls-diagnostics-commands '(("go" . "go vet ./..."))))
    (should (equal (json-parse-string (json-serialize (agentls--initialization-options))
                                      :object-type 'alist)
                   '((diagnostics (waitMs . 500) (commands (go . "go vet ./..."))))))))

(require 'flymake)

;; agent/diagnostics: what an eglot server published, as it published it,
;; and the reports of Flymake's other backends, in LSP's terms.
(ert-deftest agentls-test-diagnostics-answer ()
  "Emacs answers agent/diagnostics with eglot's and Flymake's diagnostics."
  (agentls-test--with-project (root conn :files '(("a.go" . "package a\n") ("b.txt" . "\U0001F600 x\n")))
    (let* ((a (expand-file-name "a.go" root))
           (b (expand-file-name "b.txt" root))
           (uri-a (agentls--path-to-uri a))
           (uri-b (agentls--path-to-uri b))
           (agentls--published (make-hash-table :test #'equal))
           (agentls--diagnostics-changed nil)
           (bad '(:range (:start (:line 0 :character 8) :end (:line 0 :character 9))
                         :message "bad" :severity 1 :code "X" :source "compiler")))
      ;; The server's publish is kept, and agentls will hear of it.
      (agentls--eglot-published conn 'textDocument/publishDiagnostics :uri uri-a
                                :diagnostics (vector (append bad '(:relatedInformation [] :tags [1]))))
      (should (member (file-truename a) agentls--diagnostics-changed))
      ;; A Flymake backend of b.txt reports a warning after an emoji: two
      ;; UTF-16 code units, as LSP counts them.
      (with-current-buffer (find-file-noselect b)
        (setq-local flymake-diagnostic-functions
                    (list (lambda (report &rest _)
                            (funcall report (list (flymake-make-diagnostic (current-buffer) 3 4 :warning "odd"))))))
        (flymake-mode 1)
        (flymake-start))
      (should (member (file-truename b) agentls--diagnostics-changed))
      (let ((odd '(:range (:start (:line 0 :character 3) :end (:line 0 :character 4)) :severity 2 :message "odd")))
        (should (equal (agentls--diagnostics conn (list :uris (vector uri-a uri-b)))
                       (list :items (vector (list :uri uri-a :diagnostics (vector bad))
                                            (list :uri uri-b :diagnostics (vector odd))))))
        ;; None named: every file of the project that has some.
        (should (equal (agentls--diagnostics conn nil)
                       (list :items (vector (list :uri uri-a :diagnostics (vector bad))
                                            (list :uri uri-b :diagnostics (vector odd))))))
        ;; A publish of none forgets the file; one outside the project is not told.
        (agentls--eglot-published conn 'textDocument/publishDiagnostics :uri uri-a :diagnostics [])
        (should (equal (agentls--diagnostics conn (list :uris (vector uri-a "file:///elsewhere/c.go")))
                       (list :items [])))
        ;; The word goes to agentls as one agent/didChangeDiagnostics.
        (agentls--diagnostics-flush)
        (should-not agentls--diagnostics-changed)))))

(ert-deftest agentls-test-mcp-servers-options ()
  "The MCP servers go out as JSON objects, args as arrays, env and headers as objects."
  (let ((agentls-model nil) (agentls-edit-mode nil) (agentls-max-workers nil)
        (agentls-commands nil) (agentls-allow-commands nil) (agentls-zones nil)
        (agentls-timeouts nil) (agentls-initialization-options nil)
        (agentls-mcp-servers '(("everything" :command "npx" :args ("-y" "pkg") :env (("A" . "1")))
                               ("docs" :url "https://h/mcp" :headers (("Authorization" . "Bearer x")))))
        (agentls-allow-mcp-tools '("mcp__docs")))
    (should (equal (json-parse-string (json-serialize (agentls--initialization-options))
                                      :object-type 'alist)
                   '((mcpServers (everything (command . "npx") (args . ["-y" "pkg"]) (env (A . "1")))
                                 (docs (url . "https://h/mcp") (headers (Authorization . "Bearer x"))))
                     (allowMcpTools . ["mcp__docs"]))))))

(ert-deftest agentls-test-mcp-servers-command ()
  "`agentls-mcp-servers' lists each server's state; `s' starts them and shows why one failed."
  (agentls-test--with-project (root conn)
    (ignore conn)
    (let ((agentls-mcp-servers `(("missing" :command ,(expand-file-name "no-such-mcp-server" root)))))
      ;; The customization is read when the connection starts: start anew.
      (agentls--stop-connection conn)
      (let ((default-directory root))
        (setq conn (agentls--connection root)))
      (with-current-buffer (agentls-mcp-servers)
        (should (eq agentls--mcp-connection conn))
        (let ((row (cadr (assoc "missing" tabulated-list-entries))))
          (should (equal (aref row 1) "not started"))
          (should (equal (aref row 3) (expand-file-name "no-such-mcp-server" root))))
        (agentls-mcp-servers-start)
        (let ((row (cadr (assoc "missing" tabulated-list-entries))))
          (should (equal (aref row 1) "failed"))
          (should (string-match-p "failed to start: cannot run" (aref row 3))))
        (goto-char (point-min))
        (agentls-mcp-servers-tools)
        (with-current-buffer "*agentls-mcp-tools*"
          (should (string-match-p "MCP server missing" (buffer-string))))))))

;;;; Workspace trust

(ert-deftest agentls-test-workspace-trust-from-the-setting-a-function-or-trusted-content ()
  "The trust of a project: the option's value, its function's yes, `trusted-content'."
  (let* ((root (file-name-as-directory (make-temp-file "agentls-project" t)))
         (parent (file-name-directory (directory-file-name root)))
         (home (file-name-as-directory (make-temp-file (expand-file-name "agentls-home" "~/") t))))
    (unwind-protect
        (progn
          (let ((agentls-workspace-trust 'untrusted))
            (should (equal (agentls--workspace-trust root) '("untrusted" . setting)))
            ;; A repository's directory-local value counts for nothing.
            (with-temp-buffer
              (setq-local agentls-workspace-trust 'trusted)
              (should (equal (agentls--workspace-trust root) '("untrusted" . setting)))))
          (let ((agentls-workspace-trust 'trusted))
            (should (equal (agentls--workspace-trust root) '("trusted" . setting))))
          (let* ((asked nil)
                 (agentls-workspace-trust (lambda (r) (setq asked r) t)))
            (should (equal (agentls--workspace-trust root) '("trusted" . function)))
            (should (equal asked root)))
          (dolist (answer '(nil untrusted "untrusted"))
            (let ((agentls-workspace-trust (lambda (_) answer)))
              (should (equal (agentls--workspace-trust root) '("untrusted" . function)))))
          (let ((agentls-workspace-trust (lambda (_) (error "Boom")))
                (inhibit-message t))
            (should (equal (agentls--workspace-trust root) '("untrusted" . function))))
          (let ((agentls-workspace-trust nil)
                (bound (boundp 'trusted-content))
                (value (and (boundp 'trusted-content) (default-value 'trusted-content))))
            ;; An Emacs without trusted-content (28 and 29, but those with
            ;; its backport): nothing says otherwise.
            (unwind-protect
                (progn (makunbound 'trusted-content)
                       (should (equal (agentls--workspace-trust root) '("trusted" . default))))
              (when bound (set-default 'trusted-content value)))
            ;; Emacs 30's trusted-content: :all, the root or a directory above it.
            (pcase-dolist (`(,value ,want)
                           `((:all "trusted")
                             ((,parent) "trusted")
                             ((,root) "trusted")
                             ((,(directory-file-name root)) "trusted")
                             ((,(directory-file-name parent)) "untrusted")
                             ((,(concat (directory-file-name root) "-other/")) "untrusted")
                             ((,(expand-file-name "file.el" root)) "untrusted")
                             (nil "untrusted")))
              (cl-progv '(trusted-content) (list value)
                (should (equal (cons value (agentls--workspace-trust root))
                               (cons value (cons want 'trusted-content)))))))
          ;; An abbreviated name, as trusted-content is written.
          (let ((agentls-workspace-trust nil))
            (cl-progv '(trusted-content) (list (list (concat "~/" (file-relative-name home "~/"))))
              (should (equal (car (agentls--workspace-trust home)) "trusted"))))
          (let ((agentls-workspace-trust 'untrusted))
            (should (equal (plist-get (agentls--initialization-options root) :workspaceTrust) "untrusted"))))
      (delete-directory root t)
      (delete-directory home t))))

(ert-deftest agentls-test-untrusted-project-asks-before-a-command-until-trusted ()
  "Untrusted, a command under `allow' is asked for, saying why; trusted, it runs."
  (let ((trusted nil))
    (agentls-test--with-project
        (root conn :commands 'allow :trust (lambda (_root) trusted)
              :script (agentls-test--script
                       "coordinator" (list (list :text "One step."))
                       "1" (list (agentls-test--call "run_command" :command "echo first > first.txt")
                                 (agentls-test--call "finish" :summary "first"))
                       "2:coordinator" (list (list :text "One step."))
                       "2:1" (list (agentls-test--call "run_command" :command "echo second > second.txt")
                                   (agentls-test--call "finish" :summary "second"))))
      (agentls-test--needs-run conn)
      (should (equal (agentls-connection-trust conn) "untrusted"))
      (let (prompts)
        (cl-letf (((symbol-function 'completing-read)
                   (lambda (prompt &rest _) (push prompt prompts) "Run")))
          (should (equal (agentls-task-state (agentls-test--run conn "First")) "done"))
          (should (equal (length prompts) 1))
          (should (string-match-p (regexp-quote "This workspace is not trusted. agentls wants to run `echo first > first.txt`")
                                  (car prompts)))
          (should (equal (agentls-test--read (expand-file-name "first.txt" root)) "first\n"))
          ;; Trusted now: the next task tells agentls first, and nothing is asked.
          (setq trusted t)
          (should (equal (agentls-task-state (agentls-test--run conn "Second")) "done"))
          (should (equal (length prompts) 1))
          (should (equal (agentls-connection-trust conn) "trusted"))
          (should (equal (agentls-test--read (expand-file-name "second.txt" root)) "second\n")))))))

(ert-deftest agentls-test-setting-the-trust-reaches-a-running-agentls ()
  "Setting `agentls-workspace-trust' sends the change at once; the doctor says it."
  (agentls-test--with-project
      (_root conn :trust 'trusted :script (agentls-test--script "coordinator" (list (list :text "One step."))))
    (should (equal (agentls-connection-trust conn) "trusted"))
    (cl-flet ((sent () (with-current-buffer (jsonrpc-events-buffer conn)
                         (string-match-p "didChangeConfiguration" (buffer-string)))))
      ;; The binding of the option set it as the connection started:
      ;; initialize took it, and nothing else was sent.
      (agentls-test--wait "the watcher's timer to run" (lambda () (null agentls--trust-timer)))
      (should-not (sent))
      (setq agentls-workspace-trust 'untrusted)
      (agentls-test--wait "the change to be sent"
                          (lambda () (equal (agentls-connection-trust conn) "untrusted")))
      (should (sent)))
    (with-current-buffer (agentls-doctor)
      (should (string-match-p (regexp-quote "Trust    untrusted (`agentls-workspace-trust'): agentls asks before it runs any command")
                              (buffer-string))))))

(ert-deftest agentls-test-capabilities ()
  "Emacs advertises the reverse calls it serves, runCommand included."
  (let ((caps (json-parse-string (json-serialize (agentls--client-capabilities) :false-object :json-false)
                                 :object-type 'plist :false-object nil)))
    (should (eq t (plist-get (plist-get caps :workspace) :applyEdit)))
    (should (eq t (plist-get (plist-get (plist-get caps :workspace) :workspaceEdit) :documentChanges)))
    (should (plist-get (plist-get (plist-get caps :workspace) :workspaceEdit) :changeAnnotationSupport))
    (should (equal (plist-get (plist-get caps :experimental) :agent)
                   '(:readFile t :runCommand t :ask t :references t :definition t :diagnostics t)))))

(ert-deftest agentls-test-sessions-heat-and-trace-on-a-fresh-project ()
  "A fresh project has no sessions, no heat and no trace, and the views say so."
  (agentls-test--with-project (root conn :files '(("a.txt" . "one\n")))
    (should (equal (append (plist-get (jsonrpc-request conn 'agent/sessions (make-hash-table))
                                      :sessions)
                           nil)
                   nil))
    (agentls-heat)
    (with-current-buffer "*agentls-heat*"
      (should (eq agentls--heat-connection conn))
      (should (null tabulated-list-entries)))
    (agentls-sessions)
    (with-current-buffer "*agentls-sessions*"
      (should (null tabulated-list-entries)))
    (with-current-buffer (find-file-noselect (expand-file-name "a.txt" root))
      (should (null (agentls-trace-at-point))))))

(ert-deftest agentls-test-region-goes-along-as-context ()
  "The active region, or the buffer with a prefix argument, becomes context."
  (let ((root (file-name-as-directory (make-temp-file "agentls-project" t))))
    (unwind-protect
        (with-current-buffer (find-file-noselect (expand-file-name "f.txt" root))
          (insert "one\ntwo\nthree\n")
          (let ((default-directory root) (transient-mark-mode t))
            (goto-char (point-min)) (forward-line 1)
            (push-mark (point) t t) (forward-line 1)
            (should (equal (agentls--region-context)
                           "\n\nContext from f.txt, lines 2-2:\n```\ntwo\n```"))
            (deactivate-mark)
            (should-not (agentls--region-context))
            (let ((current-prefix-arg '(4)))
              (should (string-match-p "lines 1-3:\n```\none\ntwo\nthree\n```\\'"
                                      (agentls--region-context)))))
          (set-buffer-modified-p nil)
          (kill-buffer))
      (delete-directory root t))))

;;;; Reverse calls, each on its own

(ert-deftest agentls-test-read-file-sees-unsaved-text ()
  "agent/readFile answers a modified buffer's text, else the file's."
  (agentls-test--with-recording (root conn)
    (agentls-test--write (expand-file-name "open.txt" root) "on disk\n")
    (agentls-test--write (expand-file-name "closed.txt" root) "closed ✓\n")
    (with-current-buffer (find-file-noselect (expand-file-name "open.txt" root))
      (unwind-protect
          (progn
            (insert "unsaved ")
            (narrow-to-region 1 3)
            (should (equal (agentls--read-file conn (list :path "open.txt"))
                           '(:content "unsaved on disk\n")))
            (should (equal (agentls--read-file
                            conn (list :uri (agentls--path-to-uri (expand-file-name "closed.txt" root))))
                           '(:content "closed ✓\n")))
            (should (equal (cdr (should-error (agentls--read-file conn (list :path "missing.txt"))
                                              :type 'jsonrpc-error))
                           '("[jsonrpc] error " (jsonrpc-error-code . -32602)
                             (jsonrpc-error-message . "cannot read missing.txt: no such file")
                             (jsonrpc-error-data))))
            (should-error (agentls--read-file conn (list :path "../outside.txt"))
                          :type 'jsonrpc-error))
        (set-buffer-modified-p nil)
        (kill-buffer)))))

(ert-deftest agentls-test-unknown-request-answers-method-not-found ()
  "A request Emacs does not serve gets -32601, not -32603."
  (agentls-test--with-recording (_root conn)
    (agentls-test--receive conn 7 "agent/unknown" nil)
    (should (equal (plist-get (agentls-test--reply conn 7) :error)
                   '(:code -32601 :message "method not found: agent/unknown")))))

(ert-deftest agentls-test-ask-through-the-minibuffer ()
  "agent/ask is answered outside the process filter through the minibuffer."
  (agentls-test--with-recording (_root conn)
    (let (asked)
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (prompt options &rest _) (push (cons prompt options) asked) "blue"))
                ((symbol-function 'read-string)
                 (lambda (prompt &rest _) (push prompt asked) (signal 'quit nil))))
        (agentls-test--receive conn 1 "agent/ask" '(:question "Which colour?" :options ["red" "blue"]))
        ;; Nothing is answered from inside the filter.
        (should-not (agentls-test--sent conn))
        (should (equal (plist-get (agentls-test--reply conn 1) :result) '(:answer "blue")))
        (agentls-test--receive conn 2 "agent/ask" '(:question "Anything else?"))
        (should (equal (agentls-test--reply conn 2) '(:id 2 :result (:answer nil)))))
      (should (equal (reverse asked)
                     '(("agentls: Which colour? " "red" "blue") "agentls: Anything else? "))))))

(ert-deftest agentls-test-show-message-request-picks-an-action ()
  "window/showMessageRequest answers the chosen action, or null when dismissed."
  (agentls-test--with-recording (_root conn)
    (let ((choices '("Always allow" quit)))
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (&rest _) (let ((c (pop choices))) (if (eq c 'quit) (signal 'quit nil) c)))))
        (agentls-test--receive conn 3 "window/showMessageRequest"
                               '(:type 3 :message "Run `make`?"
                                       :actions [(:title "Run") (:title "Always allow") (:title "Deny")]))
        (should (equal (plist-get (agentls-test--reply conn 3) :result) '(:title "Always allow")))
        (agentls-test--receive conn 4 "window/showMessageRequest"
                               '(:type 3 :message "Apply?" :actions [(:title "Apply") (:title "Reject")]))
        (should (equal (agentls-test--reply conn 4) '(:id 4 :result nil)))))))

(ert-deftest agentls-test-questions-are-asked-one-at-a-time ()
  "Two questions that arrive together use the minibuffer one after the other."
  (agentls-test--with-recording (_root conn)
    (let ((depth 0) (max-depth 0) (n 0))
      (cl-letf (((symbol-function 'read-string)
                 (lambda (&rest _)
                   (cl-incf depth) (setq max-depth (max depth max-depth))
                   ;; While this question waits, the other one must not start.
                   (accept-process-output nil 0.05)
                   (cl-decf depth)
                   (format "answer %d" (cl-incf n)))))
        (agentls-test--receive conn 1 "agent/ask" '(:question "first"))
        (agentls-test--receive conn 2 "agent/ask" '(:question "second"))
        (agentls-test--reply conn 2)
        (should (equal (plist-get (agentls-test--reply conn 1) :result) '(:answer "answer 1")))
        (should (equal (plist-get (agentls-test--reply conn 2) :result) '(:answer "answer 2")))
        (should (= max-depth 1))))))

(ert-deftest agentls-test-cancelled-question-is-withdrawn ()
  "$/cancelRequest for a queued question answers -32800 and never asks it."
  (agentls-test--with-recording (_root conn)
    (let (asked)
      (cl-letf (((symbol-function 'read-string) (lambda (p &rest _) (push p asked) "x")))
        (agentls-test--receive conn 5 "agent/ask" '(:question "never"))
        (jsonrpc-connection-receive conn '(:jsonrpc "2.0" :method "$/cancelRequest" :params (:id 5)))
        (should (equal (plist-get (agentls-test--reply conn 5) :error)
                       '(:code -32800 :message "cancelled")))
        (agentls-test--wait "the watcher's timer to run" (lambda () (null agentls--trust-timer)))
        (should-not asked)
        (should (= 1 (length (agentls-test--sent conn))))))))

(ert-deftest agentls-test-run-command-does-not-block-emacs ()
  "agent/runCommand runs in a subprocess and answers when it ends."
  (agentls-test--with-recording (root conn)
    (agentls-test--receive conn 1 "agent/runCommand"
                           (list :command "printf 'out\\n'; printf 'err\\n' >&2; pwd; exit 3"
                                 :cwd root :timeoutMs 10000))
    (should-not (agentls-test--sent conn))
    (let ((result (plist-get (agentls-test--reply conn 1) :result)))
      (should (equal (plist-get result :exitCode) 3))
      (should (string-match-p "out\n" (plist-get result :output)))
      (should (string-match-p "err\n" (plist-get result :output)))
      (should (string-match-p (regexp-quote (directory-file-name (file-truename root)))
                              (plist-get result :output)))
      (should-not (plist-get result :timedOut)))))

(ert-deftest agentls-test-run-command-unsets-the-secrets ()
  "agent/runCommand runs the command without the variables of unsetEnv."
  (agentls-test--with-recording (root conn)
    (let ((process-environment (append '("AGENTLS_TEST_API_KEY=sk-emacs-0123456789"
                                         "AGENTLS_TEST_PLAIN=inherited")
                                       process-environment)))
      (agentls-test--receive conn 1 "agent/runCommand"
                             (list :command "echo \"key=$AGENTLS_TEST_API_KEY plain=$AGENTLS_TEST_PLAIN\""
                                   :cwd root :timeoutMs 10000 :unsetEnv ["AGENTLS_TEST_API_KEY"]))
      (let ((result (plist-get (agentls-test--reply conn 1) :result)))
        (should (equal (plist-get result :output) "key= plain=inherited\n"))))))

(ert-deftest agentls-test-run-command-timeout-kills-the-group ()
  "A command past its timeout is killed with everything it started."
  (agentls-test--with-recording (root conn)
    (agentls-test--receive conn 1 "agent/runCommand"
                           (list :command "sleep 30 & echo $! > child.pid; wait" :cwd root :timeoutMs 300))
    (let ((result (plist-get (agentls-test--reply conn 1) :result)))
      (should (eq t (plist-get result :timedOut)))
      (should (/= 0 (plist-get result :exitCode))))
    (let ((pid (string-to-number (agentls-test--read (expand-file-name "child.pid" root)))))
      (agentls-test--wait "the background child to die"
                          (lambda () (not (file-exists-p (format "/proc/%d/stat" pid))))))))

(ert-deftest agentls-test-run-command-cancel ()
  "$/cancelRequest kills a running command and answers -32800."
  (agentls-test--with-recording (root conn)
    (agentls-test--receive conn 9 "agent/runCommand" (list :command "sleep 30" :cwd root :timeoutMs 60000))
    (jsonrpc-connection-receive conn '(:jsonrpc "2.0" :method "$/cancelRequest" :params (:id 9)))
    (should (equal (plist-get (agentls-test--reply conn 9) :error) '(:code -32800 :message "cancelled")))
    (agentls-test--wait "the command to end"
                        (lambda () (not (cl-some (lambda (p) (equal (process-name p) "agentls-command"))
                                                 (process-list)))))))

;;;; Applying workspace edits

(defun agentls-test--range (l1 c1 l2 c2)
  "Return the LSP range from line L1 column C1 to line L2 column C2."
  (list :start (list :line l1 :character c1) :end (list :line l2 :character c2)))

(defun agentls-test--text-edit (root file &rest edits)
  "Return a TextDocumentEdit of FILE under ROOT with EDITS (range text ...)."
  (list :textDocument (list :uri (agentls--path-to-uri (expand-file-name file root)) :version nil)
        :edits (vconcat (cl-loop for (range text) on edits by #'cddr
                                 collect (list :range range :newText text)))))

(ert-deftest agentls-test-edit-to-a-modified-buffer-is-one-undo-step ()
  "An edit to a modified buffer changes the buffer, not the disk, in one undo step."
  (agentls-test--with-recording (root conn)
    (let ((file (expand-file-name "a.txt" root)))
      (agentls-test--write file "alpha\nbeta\n")
      (with-current-buffer (find-file-noselect file)
        (unwind-protect
            (progn
              (buffer-enable-undo)
              (goto-char (point-max))
              (insert "gamma\n")
              (undo-boundary)
              (should (equal (agentls--apply-edit
                              conn (list :label "rename"
                                         :edit (list :documentChanges
                                                     (vector (agentls-test--text-edit
                                                              root "a.txt"
                                                              (agentls-test--range 0 0 0 5) "ALPHA"
                                                              (agentls-test--range 2 0 2 5) "GAMMA")))))
                             '(:applied t)))
              (should (equal (buffer-string) "ALPHA\nbeta\nGAMMA\n"))
              (should (equal (agentls-test--read file) "alpha\nbeta\n"))
              (should (buffer-modified-p))
              ;; One undo reverts the agent's whole edit and nothing of the person's.
              (let ((last-command nil)) (undo))
              (should (equal (buffer-string) "alpha\nbeta\ngamma\n")))
          (set-buffer-modified-p nil)
          (kill-buffer))))))

(ert-deftest agentls-test-edit-columns-are-utf-16 ()
  "Columns count UTF-16 code units: an emoji takes two."
  (agentls-test--with-recording (root conn)
    (let ((file (expand-file-name "u.txt" root)))
      (agentls-test--write file "a😀b é\n")
      (should (equal (agentls--apply-edit
                      conn (list :edit (list :changes
                                             (list (intern (concat ":" (agentls--path-to-uri file)))
                                                   (vector (list :range (agentls-test--range 0 3 0 4)
                                                                 :newText "B")
                                                           (list :range (agentls-test--range 0 5 0 6)
                                                                 :newText "E"))))))
                     '(:applied t)))
      (should (equal (agentls-test--read file) "a😀B E\n")))))

(ert-deftest agentls-test-edit-to-a-file-nobody-visits-is-atomic ()
  "A file not visited is replaced whole, keeping its mode, with no buffer left behind."
  (agentls-test--with-recording (root conn)
    (let ((file (expand-file-name "tool.sh" root)))
      (agentls-test--write file "echo one\n")
      (set-file-modes file #o755)
      (should (equal (agentls--apply-edit
                      conn (list :edit (list :documentChanges
                                             (vector (agentls-test--text-edit
                                                      root "tool.sh" (agentls-test--range 0 5 0 8) "two")))))
                     '(:applied t)))
      (should (equal (agentls-test--read file) "echo two\n"))
      (should (= (file-modes file) #o755))
      (should-not (find-buffer-visiting file))
      (should (equal (directory-files root nil "agentls") nil)))))

(ert-deftest agentls-test-temporary-files-are-named-for-the-server-sweep ()
  "An edit's temporary file is .NAME.agentls-RANDOM.tmp, the name agentls sweeps after a crash."
  (let* ((dir (make-temp-file "agentls-temp" t))
         (temp (agentls--write-temp (agentls--file-create :name (expand-file-name "sub/tool.sh" dir)
                                                         :text "x"))))
    (unwind-protect
        (progn
          (should (equal (file-name-directory temp) (file-name-as-directory (expand-file-name "sub" dir))))
          (should (string-match-p "\\`\\.tool\\.sh\\.agentls-[0-9A-Za-z]+\\.tmp\\'"
                                  (file-name-nondirectory temp))))
      (delete-directory dir t))))

(ert-deftest agentls-test-create-and-delete-files ()
  "CreateFile and DeleteFile operations, with text written into a new file."
  (agentls-test--with-recording (root conn)
    (agentls-test--write (expand-file-name "old.txt" root) "bye\n")
    (let ((new-uri (agentls--path-to-uri (expand-file-name "dir/new file.txt" root))))
      (should (equal (agentls--apply-edit
                      conn (list :edit (list :documentChanges
                                             (vector (list :kind "create" :uri new-uri)
                                                     (agentls-test--text-edit
                                                      root "dir/new file.txt"
                                                      (agentls-test--range 0 0 0 0) "hello\n")
                                                     (list :kind "delete"
                                                           :uri (agentls--path-to-uri
                                                                 (expand-file-name "old.txt" root)))))))
                     '(:applied t)))
      (should (equal (agentls-test--read (expand-file-name "dir/new file.txt" root)) "hello\n"))
      (should-not (file-exists-p (expand-file-name "old.txt" root))))))

(ert-deftest agentls-test-failed-edit-changes-nothing ()
  "An edit that fails part-way applies none of its changes and says which failed."
  (agentls-test--with-recording (root conn)
    (agentls-test--write (expand-file-name "a.txt" root) "a\n")
    (agentls-test--write (expand-file-name "b.txt" root) "b\n")
    (let ((result (agentls--apply-edit
                   conn (list :edit (list :documentChanges
                                          (vector (agentls-test--text-edit
                                                   root "a.txt" (agentls-test--range 0 0 0 1) "A")
                                                  (list :kind "create"
                                                        :uri (agentls--path-to-uri
                                                              (expand-file-name "b.txt" root)))))))))
      (should (eq (plist-get result :applied) :json-false))
      (should (eql (plist-get result :failedChange) 1))
      (should (string-match-p "already exists" (plist-get result :failureReason))))
    (should (equal (agentls-test--read (expand-file-name "a.txt" root)) "a\n"))
    (let ((result (agentls--apply-edit
                   conn (list :edit (list :documentChanges
                                          (vector (agentls-test--text-edit
                                                   root "a.txt"
                                                   (agentls-test--range 0 0 0 1) "X"
                                                   (agentls-test--range 0 0 1 0) "Y")))))))
      (should (string-match-p "overlap" (plist-get result :failureReason))))
    (let ((result (agentls--apply-edit
                   conn (list :edit (list :changes
                                          (list (intern ":file:///etc/passwd")
                                                (vector (list :range (agentls-test--range 0 0 0 0)
                                                              :newText "x"))))))))
      (should (string-match-p "outside the project" (plist-get result :failureReason))))
    (should (equal (agentls-test--read (expand-file-name "a.txt" root)) "a\n"))))

(ert-deftest agentls-test-deleting-a-modified-buffer-is-refused ()
  "The agent cannot delete a file whose buffer holds unsaved changes."
  (agentls-test--with-recording (root conn)
    (let ((file (expand-file-name "keep.txt" root)))
      (agentls-test--write file "keep\n")
      (with-current-buffer (find-file-noselect file)
        (unwind-protect
            (progn
              (insert "mine ")
              (let ((result (agentls--apply-edit
                             conn (list :edit (list :documentChanges
                                                    (vector (list :kind "delete"
                                                                  :uri (agentls--path-to-uri file))))))))
                (should (eq (plist-get result :applied) :json-false))
                (should (string-match-p "unsaved changes" (plist-get result :failureReason))))
              (should (file-exists-p file))
              (should (equal (buffer-string) "mine keep\n")))
          (set-buffer-modified-p nil)
          (kill-buffer))))))

(ert-deftest agentls-test-edit-needing-confirmation-asks-first ()
  "An annotated edit waits for the person, and a rejection is reported as one."
  (agentls-test--with-recording (root conn)
    (agentls-test--write (expand-file-name "a.txt" root) "a\n")
    (let* ((answers '(nil t)) shown
           (agentls-confirm-edit-function
            (lambda (label files diff)
              (push (list label files (with-current-buffer diff (buffer-string))) shown)
              (pop answers)))
           (params (list :label "agent edit"
                         :edit (list :documentChanges
                                     (vector (list :textDocument
                                                   (list :uri (agentls--path-to-uri
                                                               (expand-file-name "a.txt" root))
                                                         :version nil)
                                                   :edits (vector (list :range (agentls-test--range 0 0 0 1)
                                                                        :newText "A"
                                                                        :annotationId "c1"))))
                                     :changeAnnotations
                                     (list :c1 (list :label "agent edit" :needsConfirmation t))))))
      (agentls-test--receive conn 1 "workspace/applyEdit" params)
      (should-not (agentls-test--sent conn))
      (should (equal (plist-get (agentls-test--reply conn 1) :result)
                     '(:applied :json-false :failureReason "the user rejected the change")))
      (should (equal (agentls-test--read (expand-file-name "a.txt" root)) "a\n"))
      (agentls-test--receive conn 2 "workspace/applyEdit" params)
      (should (equal (plist-get (agentls-test--reply conn 2) :result) '(:applied t)))
      (should (equal (agentls-test--read (expand-file-name "a.txt" root)) "A\n"))
      (should (equal (car (car shown)) "agent edit"))
      (should (string-match-p "^-a$" (nth 2 (car shown))))
      (should (string-match-p "^\\+A$" (nth 2 (car shown)))))))

(ert-deftest agentls-test-quitting-an-edit-confirmation-rejects-it ()
  "C-g at an edit confirmation answers that the change was rejected."
  (agentls-test--with-recording (root conn)
    (agentls-test--write (expand-file-name "a.txt" root) "a\n")
    (let ((agentls-confirm-edit-function (lambda (&rest _) (signal 'quit nil))))
      (agentls-test--receive conn 1 "workspace/applyEdit"
                             (list :edit (list :documentChanges
                                               (vector (list :textDocument
                                                             (list :uri (agentls--path-to-uri
                                                                         (expand-file-name "a.txt" root)))
                                                             :edits (vector (list :range (agentls-test--range 0 0 0 1)
                                                                                  :newText "A"
                                                                                  :annotationId "c1"))))
                                               :changeAnnotations (list :c1 (list :needsConfirmation t)))))
      (should (equal (plist-get (condition-case nil (agentls-test--reply conn 1)
                                  ;; ERT counts a quit as neither pass nor failure.
                                  (quit (ert-fail "C-g escaped the prompt: the server would wait for ever")))
                                :result)
                     '(:applied :json-false :failureReason "the user rejected the change")))
      (should (equal (agentls-test--read (expand-file-name "a.txt" root)) "a\n"))
      (should-not agentls--prompt-active))))

;;;; End to end: the real agentls, a scripted model, agent/run

(ert-deftest agentls-test-run-edits-the-unsaved-buffer-the-model-read ()
  "The model reads a modified buffer's unsaved text and its edit lands in that buffer."
  (agentls-test--with-project
      (root conn :files '(("main.txt" . "hello\n"))
            :edit-mode 'apply
            :script (agentls-test--script
                     "coordinator" (list (list :text "One step."))
                     "1" (list (agentls-test--call "read_file" :path "main.txt")
                               (agentls-test--call "edit_file" :path "main.txt"
                                                   :old_string "hello unsaved" :new_string "hello edited")
                               (agentls-test--call "finish" :summary "edited"))))
    (agentls-test--needs-run conn)
    (let ((buffer (find-file-noselect (expand-file-name "main.txt" root))))
      (with-current-buffer buffer
        (goto-char (point-max)) (backward-char) (insert " unsaved"))
      (let ((task (agentls-test--run conn "Edit main.txt")))
        (should (equal (agentls-task-state task) "done"))
        (should (equal (with-current-buffer buffer (buffer-string)) "hello edited\n"))
        (should (buffer-modified-p buffer))
        (should (equal (agentls-test--read (expand-file-name "main.txt" root)) "hello\n"))
        (let ((change (aref (plist-get (agentls-task-result task) :changes) 0)))
          (should (equal (plist-get change :path) "main.txt"))
          (should (eq (plist-get change :applied) t)))))))

(ert-deftest agentls-test-run-edits-files-nobody-visits ()
  "The agent's edits to files that are not open are written to disk."
  (agentls-test--with-project
      (root conn :files '(("lib/util.txt" . "old line\n") (".orchestration/.keep" . ""))
            :edit-mode 'apply
            :script (agentls-test--script
                     "coordinator" (list (list :text "One step."))
                     "1" (list (agentls-test--call "edit_file" :path "lib/util.txt"
                                                   :old_string "old" :new_string "new")
                               (agentls-test--call "write_file" :path "lib/fresh.txt" :content "fresh\n")
                               (agentls-test--call "finish" :summary "written"))))
    (agentls-test--needs-run conn)
    (let ((task (agentls-test--run conn "Update util")))
      (should (equal (agentls-task-state task) "done"))
      (should (equal (agentls-test--read (expand-file-name "lib/util.txt" root)) "new line\n"))
      (should (equal (agentls-test--read (expand-file-name "lib/fresh.txt" root)) "fresh\n"))
      (should-not (find-buffer-visiting (expand-file-name "lib/util.txt" root)))
      ;; The heat buffer lists the file (from the snapshot, or from the
      ;; agent/heatUpdate that follows the run); RET visits it.
      (agentls-heat)
      (with-current-buffer "*agentls-heat*"
        (agentls-test--wait "lib/util.txt in the heat buffer"
                            (lambda () (assoc "lib/util.txt" tabulated-list-entries)))
        (goto-char (point-min))
        (should (re-search-forward "lib/util\\.txt" nil t))
        (agentls-heat-visit)
        (should (equal buffer-file-name (expand-file-name "lib/util.txt" root))))
      ;; The trace names the task that changed line 1.
      (with-current-buffer (find-buffer-visiting (expand-file-name "lib/util.txt" root))
        (goto-char (point-min))
        (let ((entries (agentls-trace-at-point)))
          (should (equal (mapcar (lambda (e) (plist-get e :taskId)) entries)
                         (list (agentls-task-id task))))))
      ;; The session of the run is listed and shows its messages.
      (agentls-sessions)
      (with-current-buffer "*agentls-sessions*"
        (should (equal (mapcar #'car tabulated-list-entries) (list (agentls-task-session task))))
        (goto-char (point-min))
        (agentls-sessions-show))
      (with-current-buffer "*agentls-session*"
        (should (string-match-p "Update util" (buffer-string)))))))

;;;; A file's neighbours in the code graph

(defconst agentls-test--go-files
  '(("go.mod" . "module example.com/hello\n\ngo 1.21\n")
    ("main.go" . "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(greet(\"a\"))\n\tfmt.Println(greet(\"b\"))\n}\n")
    ("greet.go" . "package main\n\nfunc greet(name string) string {\n\treturn prefix + name\n}\n")
    ("prefix.go" . "package main\n\nconst prefix = \"hello, \"\n")
    ("notes.txt" . "not code\n"))
  "Go files that reference each other: main.go calls greet (greet.go)
twice, greet.go uses prefix (prefix.go).")

(defun agentls-test--goto-text (text &optional after)
  "Move to the start of the line holding TEXT, searching from line AFTER on."
  (goto-char (point-min))
  (forward-line (or after 0))
  (should (search-forward text nil t))
  (beginning-of-line))

(ert-deftest agentls-test-neighbour-lists-count-file-to-file-references ()
  "The neighbours come from the references edges from and to the file alone."
  (let ((result (list :nodes []
                      :edges (vector (list :from "greet.go" :to "greet.go#greet" :kind "defines")
                                     (list :from "greet.go" :to "prefix.go" :kind "references" :count 1
                                           :provenance "name")
                                     (list :from "greet.go" :to "util.go" :kind "references" :count 4
                                           :provenance "resolved")
                                     (list :from "main.go" :to "greet.go" :kind "references" :count 2
                                           :provenance "lsp")
                                     (list :from "main.go" :to "greet.go#greet" :kind "references")
                                     (list :from "greet.go" :to "util.go" :kind "imports")
                                     (list :from "far.go" :to "main.go" :kind "references" :count 7)))))
    (should (equal (agentls--neighbour-lists "greet.go" result)
                   '((("util.go" 4 "resolved") ("prefix.go" 1 "name")) . (("main.go" 2 "lsp")))))
    (should (equal (agentls--neighbour-lists "lone.go" (list :edges [])) '(nil . nil)))))

(ert-deftest agentls-test-heat-shows-a-files-neighbours ()
  "From the heat buffer, n shows a file's neighbours; they visit, and a
file outside the graph says so."
  (agentls-test--with-project
      (root conn :files agentls-test--go-files
            :script (agentls-test--script
                     "coordinator" (list (list :text "One step."))
                     "1" (list (agentls-test--call "read_file" :path "greet.go")
                               (agentls-test--call "read_file" :path "notes.txt")
                               (agentls-test--call "finish" :summary "read"))))
    (agentls-test--needs-run conn)
    (should (equal (agentls-task-state (agentls-test--run conn "Read greet.go and the notes")) "done"))
    (agentls-heat)
    (with-current-buffer "*agentls-heat*"
      (agentls-test--wait "greet.go and notes.txt in the heat buffer"
                          (lambda () (and (assoc "greet.go" tabulated-list-entries)
                                          (assoc "notes.txt" tabulated-list-entries))))
      (agentls-test--goto-text "greet.go")
      (agentls-heat-neighbours))
    (with-current-buffer "*agentls-neighbours*"
      (should (derived-mode-p 'agentls-neighbours-mode))
      (agentls-test--wait "the neighbours of greet.go"
                          (lambda () (string-search "Referenced by" (buffer-string))))
      (should (string-search "uses, references each):\n     1  prefix.go  (resolved by the graph)\n" (buffer-string)))
      (should (string-search "that use greet.go, references each):\n     2  main.go  (resolved by the graph)\n"
                             (buffer-string)))
      ;; n on main.go: its own neighbours, one file away only.
      (agentls-test--goto-text "main.go" 2)
      (agentls-neighbours (get-text-property (point) 'agentls-path) agentls--neighbours-connection)
      (agentls-test--wait "the neighbours of main.go"
                          (lambda () (and (string-search "Neighbours of main.go" (buffer-string))
                                          (string-search "Referenced by" (buffer-string)))))
      (should (string-search "uses, references each):\n     2  greet.go  (resolved by the graph)\n" (buffer-string)))
      (should-not (string-search "prefix.go" (buffer-string)))
      ;; RET visits the neighbour.
      (agentls-test--goto-text "greet.go" 2)
      (agentls-neighbours-visit)
      (should (equal buffer-file-name (expand-file-name "greet.go" root))))
    ;; A file the graph does not hold.
    (with-current-buffer "*agentls-heat*"
      (agentls-test--goto-text "notes.txt")
      (agentls-heat-neighbours))
    (with-current-buffer "*agentls-neighbours*"
      (agentls-test--wait "the neighbours buffer to say notes.txt is not in the graph"
                          (lambda () (string-search "notes.txt is not a file of the code graph"
                                                    (buffer-string))))
      (should (string-search "not a file of a language the graph reads" (buffer-string))))))

;; Emacs declares create and delete (resourceOperations), so agentls sends
;; CreateFile and DeleteFile and Emacs carries them out on disk.
(ert-deftest agentls-test-run-creates-in-a-new-directory-and-deletes ()
  "The agent creates a file in a directory that does not exist yet and deletes a visited file."
  (agentls-test--with-project
      (root conn :files '(("old.txt" . "bye\n"))
            :edit-mode 'apply
            :script (agentls-test--script
                     "coordinator" (list (list :text "One step."))
                     "1" (list (agentls-test--call "write_file" :path "new/dir/fresh.txt" :content "fresh\n")
                               (agentls-test--call "read_file" :path "old.txt")
                               (agentls-test--call "delete_file" :path "old.txt")
                               (agentls-test--call "finish" :summary "moved"))))
    (agentls-test--needs-run conn)
    (let ((old (find-file-noselect (expand-file-name "old.txt" root)))
          (task (agentls-test--run conn "Move old.txt")))
      (should (equal (agentls-task-state task) "done"))
      (should (equal (agentls-test--read (expand-file-name "new/dir/fresh.txt" root)) "fresh\n"))
      (should-not (file-exists-p (expand-file-name "old.txt" root)))
      (should-not (buffer-live-p old))
      (should (equal (mapcar (lambda (c) (list (plist-get c :operation) (plist-get c :applied)))
                             (plist-get (agentls-task-result task) :changes))
                     '(("create" t) ("delete" t))))
      (should-not (directory-files-recursively root "agentls")))))

(defun agentls-test--skip-unless-eglot ()
  "Skip the test unless a child Emacs finds eglot (Debian's elpa-eglot on 28)."
  (unless (eql 0 (call-process (expand-file-name invocation-name invocation-directory) nil nil nil
                               "--batch" "-Q" "--eval"
                               (concat "(unless (require 'eglot nil t)"
                                       " (dolist (d (file-expand-wildcards \"/usr/share/emacs/site-lisp/elpa-src/*\"))"
                                       " (add-to-list 'load-path d)) (require 'eglot))")))
    (ert-skip "eglot is not installed (Debian's elpa-eglot for Emacs 28)")))

(defun agentls-test--gopls-or-skip ()
  "Return the gopls of AGENTLS_GOPLS, or skip the test when there is none."
  (let ((gopls (getenv "AGENTLS_GOPLS")))
    (unless (and gopls (file-executable-p gopls))
      (ert-skip "AGENTLS_GOPLS is not set (scripts/gopls.sh installs gopls)"))
    gopls))

;; eglot (1.9 in Emacs 28 from elpa-eglot, built in from Emacs 29) declares
;; no resource operations and answers applied: true to a CreateFile or
;; DeleteFile it ignores: agentls creates and deletes the files itself.
(ert-deftest agentls-test-eglot-new-and-deleted-files ()
  "Through eglot, a new file in a new directory and a deletion reach the disk."
  (agentls-test--skip-unless-eglot)
  (let* ((root (file-name-as-directory (make-temp-file "agentls-eglot" t)))
         (state (make-temp-file "agentls-state" t))
         (script (expand-file-name "script.json" state))
         (process-environment (append (list (concat "AGENTLS_STATE_DIR=" state)
                                            (concat "AGENTLS_BIN=" agentls-test--bin)
                                            (concat "ROOT=" root) (concat "SCRIPT=" script)
                                            "AGENTLS_MODEL=" "ANTHROPIC_API_KEY=" "OPENAI_API_KEY="
                             ;; A terminal that speaks UTF-8 whatever the
                             ;; environment's locale (none, under CI):
                             ;; else Emacs draws the marks the test reads as ?.
                             "LANG=C.UTF-8" "LC_ALL=C.UTF-8")
                                      process-environment)))
    (unwind-protect
        (progn
          (make-directory (expand-file-name ".git" root))
          (agentls-test--write (expand-file-name "main.txt" root) "main\n")
          (agentls-test--write (expand-file-name "old.txt" root) "bye\n")
          (agentls-test--write
           script (json-serialize
                   (agentls-test--script
                    "coordinator" (list (list :text "One step."))
                    "1" (list (agentls-test--call "write_file" :path "new/dir/fresh.txt" :content "fresh\n")
                              (agentls-test--call "read_file" :path "old.txt")
                              (agentls-test--call "delete_file" :path "old.txt")
                              (agentls-test--call "finish" :summary "moved")))))
          (with-temp-buffer
            (let ((status (call-process (expand-file-name invocation-name invocation-directory) nil t nil
                                        "--batch" "-Q" "-l"
                                        (expand-file-name "eglot-client.el" agentls-test--dir))))
              (unless (eql status 0)
                (ert-fail (list "the eglot client failed" status (buffer-string))))
              (goto-char (point-min))
              (re-search-forward "^(:changes" nil t)
              (goto-char (match-beginning 0))
              (let ((outcome (read (current-buffer))))
                (should (equal (plist-get outcome :changes) '(("create" t) ("delete" t))))
                (should (equal (plist-get outcome :fresh) "fresh\n"))
                ;; eglot visited the new file: its buffer shows it, unmodified.
                (should (equal (plist-get outcome :buffer) "fresh\n"))
                (should-not (plist-get outcome :modified))
                (should-not (plist-get outcome :old))))))
      (delete-directory root t)
      (delete-directory state t))))

(defconst agentls-test--gopls-files
  '(("go.mod" . "module example.com/w\n\ngo 1.21\n")
    ("one/reader.go" . "package one\n\ntype Reader struct{}\n\nfunc New() *Reader { return &Reader{} }\n\nfunc (*Reader) Read() {}\n")
    ("two/reader.go" . "package two\n\ntype Reader struct{}\n\nfunc (Reader) Read() {}\n")
    ("errs/errs.go" . "package errs\n\nfunc Errorf(f string) error { return nil }\n\ntype T struct{}\n\nfunc (T) Errorf(f string) {}\n")
    ("use/use.go" . "package use\n\nimport (\n\t\"testing\"\n\n\t\"example.com/w/errs\"\n\t\"example.com/w/one\"\n\t\"example.com/w/two\"\n)\n\nfunc Use(t *testing.T) error {\n\tone.New().Read()\n\t_ = two.Reader{}\n\tt.Errorf(\"testing's\")\n\treturn errs.Errorf(\"errs's\")\n}\n"))
  "A Go module where a guess by name would be wrong: two packages with a
Reader and its Read, called on a value whose type only gopls sees;
t.Errorf beside errs.Errorf, errs having an Errorf method too.")

;; The code graph asks the language servers eglot runs: gopls, in a child
;; Emacs (eglot's packages stay out of the suite's Emacs), answers
;; agent/references for agentls in a project where a guess by name would
;; be wrong.
(ert-deftest agentls-test-references-from-gopls-through-eglot ()
  "agentls's questions go to gopls through eglot; its answers are the edges."
  (let ((gopls (agentls-test--gopls-or-skip)))
    (agentls-test--skip-unless-eglot)
    (let* ((root (file-name-as-directory (file-truename (make-temp-file "agentls-gopls" t))))
           (state (make-temp-file "agentls-state" t))
           (process-environment (append (list (concat "AGENTLS_STATE_DIR=" state)
                                              (concat "AGENTLS_BIN=" agentls-test--bin)
                                              (concat "AGENTLS_EL=" (file-name-directory (locate-library "agentls")))
                                              (concat "ROOT=" root)
                                              "AGENTLS_MODEL=" "ANTHROPIC_API_KEY=" "OPENAI_API_KEY="
                             ;; A terminal that speaks UTF-8 whatever the
                             ;; environment's locale (none, under CI):
                             ;; else Emacs draws the marks the test reads as ?.
                             "LANG=C.UTF-8" "LC_ALL=C.UTF-8")
                                        process-environment)))
      (unwind-protect
          (progn
            (make-directory (expand-file-name ".git" root))
            (pcase-dolist (`(,name . ,text) agentls-test--gopls-files)
              (make-directory (file-name-directory (expand-file-name name root)) t)
              (agentls-test--write (expand-file-name name root) text))
            (with-temp-buffer
              (let ((status (call-process (expand-file-name invocation-name invocation-directory) nil t nil
                                          "--batch" "-Q" "-l"
                                          (expand-file-name "lsp-client.el" agentls-test--dir))))
                (unless (eql status 0)
                  (ert-fail (list "the eglot client failed" status (buffer-string))))
                (goto-char (point-min))
                (unless (re-search-forward "^(:read-one" nil t)
                  (ert-fail (list "no outcome" (buffer-string))))
                (goto-char (match-beginning 0))
                (let ((outcome (read (current-buffer))))
                  ;; one.New().Read() is one's Read, as gopls says, not two's
                  ;; as a guess by name would have it
                  (should (equal (plist-get outcome :read-one)
                                 '(("use/use.go#Use" "one/reader.go#Reader.Read" "lsp"))))
                  (should (equal (plist-get outcome :read-two) nil))
                  ;; errs.Errorf is called from Use; t.Errorf is testing's
                  (should (equal (plist-get outcome :errorf)
                                 '(("use/use.go#Use" "errs/errs.go#Errorf" "lsp"))))
                  (should (equal (plist-get outcome :method) nil))
                  ;; the files asked about were visited, and eglot serves them
                  (should (eq (plist-get outcome :one-managed) t))))))
        (delete-directory root t)
        (delete-directory state t)))))

;; A worker's edit that does not compile is told gopls's error, through
;; eglot in a child Emacs; the next turn fixes it, and the task ends with
;; no diagnostics.
(ert-deftest agentls-test-diagnostics-from-gopls-through-eglot ()
  "gopls's error in an agent's edit reaches the worker through eglot."
  (let ((gopls (agentls-test--gopls-or-skip)))
    (agentls-test--skip-unless-eglot)
    (let* ((root (file-name-as-directory (file-truename (make-temp-file "agentls-diag" t))))
           (state (make-temp-file "agentls-state" t))
           (script (expand-file-name "script.json" state))
           (process-environment (append (list (concat "AGENTLS_STATE_DIR=" state)
                                              (concat "AGENTLS_BIN=" agentls-test--bin)
                                              (concat "AGENTLS_EL=" (file-name-directory (locate-library "agentls")))
                                              (concat "ROOT=" root)
                                              (concat "SCRIPT=" script)
                                              "AGENTLS_MODEL=" "ANTHROPIC_API_KEY=" "OPENAI_API_KEY="
                             ;; A terminal that speaks UTF-8 whatever the
                             ;; environment's locale (none, under CI):
                             ;; else Emacs draws the marks the test reads as ?.
                             "LANG=C.UTF-8" "LC_ALL=C.UTF-8")
                                        process-environment)))
      (unwind-protect
          (progn
            (make-directory (expand-file-name ".git" root))
            (agentls-test--write (expand-file-name "go.mod" root) "module example.com/greet\n\ngo 1.21\n")
            (agentls-test--write (expand-file-name "main.go" root)
                                 "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"Hello\")\n}\n")
            (agentls-test--write (expand-file-name "other.go" root)
                                 "package main\n\nfunc other() string { return \"other\" }\n")
            (agentls-test--write
             script
             (json-serialize
              (agentls-test--script
               "coordinator" (list (list :text "One step."))
               "1" (list (agentls-test--call "read_file" :path "main.go")
                         (agentls-test--call "edit_file" :path "main.go"
                                             :old_string "fmt.Println(\"Hello\")"
                                             :new_string "fmt.Println(\"Hello, \" + name)")
                         (agentls-test--call "edit_file" :path "main.go"
                                             :old_string "\tfmt.Println(\"Hello, \" + name)"
                                             :new_string "\tname := \"world\"\n\tfmt.Println(\"Hello, \" + name)")
                         (agentls-test--call "get_diagnostics")
                         (agentls-test--call "finish" :summary "greets by name")))))
            (with-temp-buffer
              (let ((status (call-process (expand-file-name invocation-name invocation-directory) nil t nil
                                          "--batch" "-Q" "-l"
                                          (expand-file-name "diagnostics-client.el" agentls-test--dir))))
                (unless (eql status 0)
                  (ert-fail (list "the eglot client failed" status (buffer-string))))
                (goto-char (point-min))
                (unless (re-search-forward "^(:state" nil t)
                  (ert-fail (list "no outcome" (buffer-string))))
                (goto-char (match-beginning 0))
                (let* ((outcome (read (current-buffer)))
                       (results (plist-get outcome :results))
                       (has (lambda (prefix)
                              (cl-some (lambda (r) (string-prefix-p prefix r)) results))))
                  (should (equal (plist-get outcome :state) "done"))
                  ;; gopls's error, in the result of the edit that made it
                  (should (funcall has (concat "edit_file: Updated main.go (+1 -1 lines). Diagnostics after this change, "
                                               "from the editor's language server: 1 error new. "
                                               "main.go:6:26: error: undefined: name (compiler")))
                  ;; the fix leaves none, and none are left at the end
                  (should (member (concat "edit_file: Updated main.go (+1 -0 lines). Diagnostics: the editor's "
                                          "language server finds no new error or warning after this change.")
                                  results))
                  (should (member "get_diagnostics: No diagnostics in the workspace, from the editor's language servers."
                                  results))
                  (should (equal (plist-get outcome :left) nil))
                  ;; the edits went to main.go's buffer, which eglot serves
                  (should (string-match-p "name := \"world\"" (plist-get outcome :text)))))))
        (delete-directory root t)
        (delete-directory state t)))))

(ert-deftest agentls-test-run-asks-and-gets-approval-in-the-minibuffer ()
  "A question, a command approval and an edit confirmation go through the minibuffer."
  (agentls-test--with-project
      (root conn :edit-mode 'propose :commands 'ask
            :script (agentls-test--script
                     "coordinator" (list (list :text "One step."))
                     "1" (list (agentls-test--call "ask_human" :question "Which greeting?"
                                                   :options ["hi" "hello"])
                               (agentls-test--call "run_command" :command "echo ran > ran.txt")
                               (agentls-test--call "write_file" :path "greeting.txt" :content "hi\n")
                               (agentls-test--call "finish" :summary "greeted"))))
    (agentls-test--needs-run conn)
    (let (prompts confirmed)
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (prompt options &rest _)
                   (push prompt prompts)
                   (let ((titles (mapcar (lambda (o) (if (consp o) (car o) o)) options)))
                     (cond ((member "hi" titles) "hi")
                           ((member "Run" titles) "Run")
                           ((member "Apply" titles) "Apply")
                           (t (car titles))))))
                ((symbol-function 'y-or-n-p) (lambda (prompt) (push prompt prompts) t))
                (agentls-confirm-edit-function
                 (lambda (_label files _diff) (push files confirmed) t)))
        (let ((task (agentls-test--run conn "Greet")))
          (should (equal (agentls-task-state task) "done"))
          (should (cl-some (lambda (p) (string-match-p "Which greeting" p)) prompts))
          (should (equal (agentls-test--read (expand-file-name "ran.txt" root)) "ran\n"))
          (should (equal (agentls-test--read (expand-file-name "greeting.txt" root)) "hi\n"))
          ;; Emacs advertises changeAnnotationSupport: the edit comes
          ;; annotated and Emacs itself asks, showing the diff.
          (should (equal confirmed (list (list (expand-file-name "greeting.txt" root)))))
          (should (cl-some (lambda (p) (string-match-p "echo ran" p)) prompts))
          (let ((answered (agentls-test--events task "answered")))
            (should (equal (plist-get (car answered) :answer) "hi"))))))))

(ert-deftest agentls-test-tasks-buffer-shows-final-states ()
  "The tasks buffer follows agent/taskUpdate to every subtask's final state."
  (agentls-test--with-project
      (_root conn :edit-mode 'apply
             :script (agentls-test--script
                      "coordinator" (list (agentls-test--call
                                           "plan" :subtasks
                                           (vector (list :id "1" :content "first")
                                                   (list :id "2" :content "second" :dependsOn ["1"])
                                                   (list :id "3" :content "breaks")
                                                   (list :id "4" :content "after the break"
                                                         :dependsOn ["3"]))))
                      "1" (list (agentls-test--call "finish" :summary "first done"))
                      "2" (list (agentls-test--call "finish" :summary "second done"))
                      "3" (list (list :error "model down"))
                      "4" (list (agentls-test--call "finish" :summary "never"))))
    (agentls-test--needs-run conn)
    (agentls-tasks)
    (let* ((task (agentls-test--run conn "Plan it"))
           (id (agentls-task-id task)))
      (agentls--redraw-views)
      (with-current-buffer "*agentls-tasks*"
        (let ((rows (mapcar (lambda (e) (cons (car e) (aref (cadr e) 2))) tabulated-list-entries)))
          (should (equal (cdr (assoc id rows)) (agentls-task-state task)))
          (should (equal (cdr (assoc (cons id "1") rows)) "done"))
          (should (equal (cdr (assoc (cons id "2") rows)) "done"))
          (should (equal (cdr (assoc (cons id "3") rows)) "failed"))
          (should (equal (cdr (assoc (cons id "4") rows)) "blocked")))
        (should (string-match-p "first done\\|first" (buffer-string)))))))

(ert-deftest agentls-test-stop-ends-a-running-task ()
  "agentls-stop stops a task that waits on its model; the run ends stopped."
  (agentls-test--with-project
      (_root conn :edit-mode 'apply
             :script (agentls-test--script
                      "coordinator" (list (list :text "One step."))
                      "1" (list (list :delayMs 60000 :text "slow"))))
    (agentls-test--needs-run conn)
    (let* ((default-directory (agentls-connection-root conn))
           finished
           (agentls-task-finished-functions (list (lambda (task) (setq finished task))))
           (id (agentls-run "Take your time"))
           (task (gethash id (agentls-connection-tasks conn))))
      (agentls-test--wait "the subtask to start"
                          (lambda () (agentls-test--events task "subtaskStarted")))
      (should agentls--mode-line-string)
      (should (agentls-stop task))
      (agentls-test--wait "the run to end" (lambda () finished))
      (should (equal (agentls-task-state task) "stopped"))
      (should-not agentls--mode-line-string))))

;;;; Steering, intents, models, the transcript

(defun agentls-test--goto-entry (id)
  "Move point to the tasks buffer line of ID, a task id or (TASK . SUBTASK)."
  (agentls--redraw-views)
  (goto-char (point-min))
  (while (and (not (eobp)) (not (equal (tabulated-list-get-id) id)))
    (forward-line 1))
  (should (equal (tabulated-list-get-id) id)))

(defun agentls-test--states (task)
  "Return TASK's subtasks as an alist of id to state."
  (mapcar (lambda (s) (cons (plist-get s :id) (plist-get s :state))) (agentls-task-subtasks task)))

(defmacro agentls-test--messages (var &rest body)
  "Run BODY with every `message' recorded in VAR, newest first."
  (declare (indent 1))
  `(cl-letf* ((orig (symbol-function 'message))
              ((symbol-function 'message)
               (lambda (format-string &rest args)
                 (when format-string (push (apply #'format-message format-string args) ,var))
                 (apply orig format-string args))))
     ,@body))

(ert-deftest agentls-test-server-settings-are-named-as-emacs-names-them ()
  "What the server says of its settings names the customization the person set."
  (should (equal (agentls--words "no model configured: set initializationOptions.model (editor setting \"model\", e.g. \"anthropic:x\"), or AGENTLS_MODEL")
                 "no model configured: set agentls-model (e.g. \"anthropic:x\"), or AGENTLS_MODEL"))
  (should (equal (agentls--words "invalid params: initializationOptions.maxWorkers: must be a number")
                 "invalid params: agentls-max-workers: must be a number"))
  (should (equal (agentls--words "initializationOptions.prices: bad") "prices in agentls-initialization-options: bad"))
  (should (equal (agentls--words "model \"x:y\" (from agent/run model) is unknown")
                 "model \"x:y\" (from the model of agentls-select-model) is unknown")))

(ert-deftest agentls-test-subtask-counts-in-words ()
  "How a task's subtasks ended, from the server's counts, the removed ones too."
  (should (equal (agentls--subtask-counts-text '(:done 1 :skipped 1 :removed 1 :failed 0 :blocked 0 :notRun 0))
                 "1 of 3 subtasks done, 1 skipped, 1 removed"))
  (should (equal (agentls--subtask-counts-text '(:done 0 :skipped 0 :removed 0 :failed 1 :blocked 0 :notRun 1))
                 "0 of 2 subtasks done, 1 failed, 1 not run"))
  (should (equal (agentls--subtask-counts-text '(:done 1 :skipped 0 :removed 0 :failed 0 :blocked 0 :notRun 0))
                 "1 of 1 subtask done"))
  (should-not (agentls--subtask-counts-text nil))
  (should-not (agentls--subtask-counts-text '(:done 0 :skipped 0 :removed 0 :failed 0 :blocked 0 :notRun 0))))

(ert-deftest agentls-test-counts-say-applied-and-rejected ()
  "The end of a run says how many changes were applied and how many rejected."
  (should (equal (agentls--counts '(:applied 2 :rejected 1 :changes [])) '(2 . 1)))
  (should (equal (agentls--counts '(:changes [(:applied t) (:applied :json-false) (:applied :json-false)]))
                 '(1 . 2)))
  (should (equal (agentls--counts-text '(0 . 1)) "0 applied, 1 rejected"))
  (should (equal (agentls--counts-text '(0 . 0)) "no change"))
  (agentls-test--with-project
      (root conn :edit-mode 'propose
            :files '(("notes.txt" . "draft\n"))
            :script (agentls-test--script
                     "coordinator" (list (list :text "One step."))
                     "1" (list (agentls-test--call "edit_file" :path "notes.txt"
                                                   :old_string "draft" :new_string "final")
                               (agentls-test--call "finish" :summary "tried"))))
    (agentls-test--needs-run conn)
    (let (said)
      (agentls-test--messages said
        (let* ((agentls-confirm-edit-function (lambda (&rest _) nil))
               (task (agentls-test--run conn "Edit but get rejected")))
          (should (equal (agentls-task-counts task) '(0 . 1)))
          (should (cl-some (lambda (m) (string-match-p "done: tried (1 of 1 subtask done; 0 applied, 1 rejected)" m)) said))
          (should-not (cl-some (lambda (m) (string-match-p "1 change" m)) said))
          (should (equal (agentls-test--read (expand-file-name "notes.txt" root)) "draft\n")))))))

(ert-deftest agentls-test-steer-subtasks-from-the-tasks-buffer ()
  "In the tasks buffer, keys on the subtask at point add, remove and skip subtasks."
  (should (eq (lookup-key agentls-tasks-mode-map "x") #'agentls-skip-subtask))
  (should (eq (lookup-key agentls-tasks-mode-map "D") #'agentls-remove-subtask))
  (should (eq (lookup-key agentls-tasks-mode-map "a") #'agentls-add-subtask))
  (should (eq (lookup-key agentls-tasks-mode-map "f") #'agentls-follow-up))
  (let ((help (documentation 'agentls-tasks-mode)))
    (should (string-match-p "x  skip the subtask" help))
    (should (string-match-p "f  follow up on the task" help)))
  (agentls-test--with-project
      (_root conn :edit-mode 'apply
             :script (agentls-test--script
                      "coordinator" (list (agentls-test--call
                                           "plan" :subtasks
                                           (vector (list :id "1" :content "Think for a long time")
                                                   (list :id "2" :content "Write it down" :dependsOn ["1"]))))
                      "1" (list (list :delayMs 60000 :text "thinking"))
                      "2" (list (agentls-test--call "finish" :summary "written"))))
    (agentls-test--needs-run conn)
    (let* ((default-directory (agentls-connection-root conn))
           finished
           (agentls-task-finished-functions (list (lambda (task) (setq finished task))))
           (id (agentls-run "Think then write"))
           (task (gethash id (agentls-connection-tasks conn)))
           asked)
      (agentls-test--wait "subtask 1 to run"
                          (lambda () (equal (cdr (assoc "1" (agentls-test--states task))) "running")))
      (agentls-tasks)
      (with-current-buffer "*agentls-tasks*"
        ;; a on subtask 1: the new subtask waits for it by default.
        (agentls-test--goto-entry (cons id "1"))
        (cl-letf (((symbol-function 'read-string) (lambda (&rest _) "Update the README"))
                  ((symbol-function 'completing-read-multiple)
                   (lambda (_prompt _table &optional _pred _req initial &rest _)
                     (setq asked initial)
                     (list initial))))
          (should (equal (call-interactively #'agentls-add-subtask) "3")))
        (should (equal asked "1"))
        (agentls-test--wait "subtask 3 in the plan"
                            (lambda () (equal (cdr (assoc "3" (agentls-test--states task))) "pending")))
        (should (equal (plist-get (cl-find "3" (agentls-task-subtasks task)
                                           :key (lambda (s) (plist-get s :id)) :test #'equal)
                                  :dependsOn)
                       ["1"]))
        ;; A running subtask cannot be removed: the server says why.
        (agentls-test--goto-entry (cons id "1"))
        (should (string-match-p "only a pending subtask can be removed"
                                (cadr (should-error (call-interactively #'agentls-remove-subtask)
                                                    :type 'user-error))))
        (agentls-test--goto-entry (cons id "3"))
        (call-interactively #'agentls-remove-subtask)
        (agentls-test--wait "subtask 3 removed" (lambda () (not (assoc "3" (agentls-test--states task)))))
        (agentls-test--goto-entry (cons id "1"))
        (call-interactively #'agentls-skip-subtask))
      (agentls-test--wait "the task to end" (lambda () finished))
      (should (equal (agentls-task-state task) "done"))
      (should (equal (agentls-test--states task) '(("1" . "skipped") ("2" . "done"))))
      ;; One of three subtasks was done, one skipped, one removed: never
      ;; "all done", in the end's message, the tasks buffer and the transcript.
      (should (equal (agentls-task-subtask-counts task) '(:done 1 :skipped 1 :removed 1 :failed 0 :blocked 0 :notRun 0)))
      (should (equal (agentls--end-message task)
                     (format "agentls: task %s done: 1 of 3 subtasks done, 1 skipped, 1 removed; no change" id)))
      (agentls--redraw-views)
      (with-current-buffer "*agentls-tasks*"
        (should (string-prefix-p "1 of 3 subtasks done, 1 skipped, 1 removed"
                                 (aref (cadr (assoc id tabulated-list-entries)) 4))))
      (with-current-buffer (agentls-transcript task)
        (should (string-match-p (regexp-quote "── task done: 1 of 3 subtasks done, 1 skipped, 1 removed · no change ──")
                                (buffer-string))))
      (dolist (kind '("subtaskAdded" "subtaskRemoved" "subtaskSkipped"))
        (should (agentls-test--events task kind)))
      ;; Any control on a task that ended is refused.
      (should-error (agentls-skip-subtask task "2") :type 'user-error))))

(ert-deftest agentls-test-follow-up-continues-the-session ()
  "`agentls-follow-up' on a finished task runs the follow-up in its session."
  (agentls-test--with-project
      (_root conn :edit-mode 'apply
             :script (agentls-test--script
                      "coordinator" (list (list :text "One step."))
                      "1" (list (agentls-test--call "finish" :summary "first"))
                      "2:coordinator" (list (list :text "One more."))
                      "2:1" (list (agentls-test--call "finish" :summary "second"))))
    (agentls-test--needs-run conn)
    (let* ((first (agentls-test--run conn "First prompt"))
           finished
           (agentls-task-finished-functions (list (lambda (task) (setq finished task)))))
      (agentls-tasks)
      (with-current-buffer "*agentls-tasks*"
        (agentls-test--goto-entry (agentls-task-id first))
        (cl-letf (((symbol-function 'read-string) (lambda (&rest _) "And a follow-up")))
          (call-interactively #'agentls-follow-up)))
      (agentls-test--wait "the follow-up to end" (lambda () finished))
      (should (equal (agentls-task-prompt finished) "And a follow-up"))
      (should (equal (agentls-task-state finished) "done"))
      (should (equal (agentls-task-summary finished) "second"))
      (should (equal (agentls-task-session finished) (agentls-task-session first)))
      (should (equal (plist-get (car (agentls-test--events finished "sessionContinued")) :text)
                     (agentls-task-session first))))))

(ert-deftest agentls-test-intent-of-the-next-tasks ()
  "`agentls-select-intent' offers the intents not completed; the next task works under it."
  (agentls-test--with-project
      (root conn :edit-mode 'apply
            :files '(("notes.txt" . "draft\n")
                     (".orchestration/active_intents.yaml"
                      . "active_intents:\n  - id: INT-001\n    name: Notes\n    status: IN_PROGRESS\n    owned_scope: [\"notes.txt\"]\n  - id: INT-000\n    name: Setup\n    status: COMPLETED\n    owned_scope: [\"go.mod\"]\n"))
            :script (agentls-test--script
                     "coordinator" (list (list :text "One step."))
                     "1" (list (agentls-test--call "edit_file" :path "notes.txt"
                                                   :old_string "draft" :new_string "final")
                               (agentls-test--call "finish" :summary "noted"))))
    (agentls-test--needs-run conn)
    (let (offered annotation)
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (_prompt collection &rest _)
                   (setq offered collection
                         annotation (funcall (plist-get completion-extra-properties :annotation-function)
                                             "INT-001"))
                   "INT-001")))
        (call-interactively #'agentls-select-intent))
      (should (equal offered '("none" "INT-001")))
      (should (string-match-p "Notes (IN_PROGRESS; notes.txt)" annotation))
      (should (equal (agentls-connection-intent conn) "INT-001"))
      (should (equal (agentls-task-state (agentls-test--run conn "Finish the notes")) "done"))
      (should (string-match-p "\"intentId\":\"INT-001\""
                              (agentls-test--read (expand-file-name ".orchestration/agent_trace.jsonl" root))))
      (should (string-match-p "a completed intent cannot be selected"
                              (cadr (should-error (agentls-select-intent "INT-000") :type 'user-error))))
      (should (equal (agentls-connection-intent conn) "INT-001"))
      (agentls-select-intent nil)
      (should-not (agentls-connection-intent conn)))))

(ert-deftest agentls-test-model-of-the-next-tasks ()
  "`agentls-select-model' lists the models, marks the next tasks' one, checks the choice."
  (agentls-test--with-project
      (root conn :edit-mode 'apply
            :script (agentls-test--script
                     "coordinator" (list (list :text "One step."))
                     "1" (list (agentls-test--call "finish" :summary "by the setting"))))
    (agentls-test--needs-run conn)
    (let ((setting agentls-model)
          (other (expand-file-name "other.json" root))
          offered annotations said)
      (agentls-test--write other (json-serialize (agentls-test--script
                                                  "coordinator" (list (list :text "One step."))
                                                  "1" (list (agentls-test--call "finish" :summary "by the other model")))))
      (agentls-test--messages said
        (cl-letf (((symbol-function 'completing-read)
                   (lambda (_prompt collection &rest _)
                     (setq offered collection
                           annotations (mapcar (plist-get completion-extra-properties :annotation-function)
                                               collection))
                     setting)))
          (call-interactively #'agentls-select-model)))
      (should (equal (car offered) "default"))
      (should (member setting offered))
      (should (string-match-p "← the next tasks" (car annotations)))
      (should (string-match-p "(the setting)" (nth (cl-position setting offered :test #'equal) annotations)))
      (should (equal (agentls-connection-model conn) setting))
      (should (cl-some (lambda (m) (string-match-p "the script loads" m)) said))
      (agentls-select-model (concat "script:" other))
      (should (equal (agentls-task-summary (agentls-test--run conn "Use the other model")) "by the other model"))
      (let ((check (agentls-check-model (concat "script:" (expand-file-name "missing.json" root)))))
        (should (eq :json-false (plist-get check :ok)))
        (should (string-match-p "missing.json" (plist-get check :message))))
      (agentls-select-model nil)
      (should-not (agentls-connection-model conn)))))

(ert-deftest agentls-test-doctor-reports-binary-server-model-and-mcp ()
  "`agentls-doctor' reports the binary, its version, the model check and the MCP servers."
  (agentls-test--with-project
      (root conn :script (agentls-test--script "coordinator" (list (list :text "One step."))))
    (let ((agentls-mcp-servers `(("missing" :command ,(expand-file-name "no-such-mcp-server" root)))))
      ;; The customization is read when the connection starts: start anew.
      (agentls--stop-connection conn)
      (let ((default-directory root))
        (setq conn (agentls--connection root))
        (with-current-buffer (agentls-doctor)
          (let ((text (buffer-string))
                (version (with-temp-buffer
                           (call-process agentls-test--bin nil t nil "version")
                           (string-trim (buffer-string)))))
            (should (string-match-p (regexp-quote (concat "Binary   ok  " (executable-find agentls-program))) text))
            (should (string-match-p (regexp-quote (concat "Version  " version)) text))
            (should (string-match-p "Server   ok  agentls " text))
            (should (string-match-p "Model    ok  script:.*the script loads" text))
            (should (string-match-p "missing +PROBLEM  failed, 0 tools: .*cannot run" text))))))))

(ert-deftest agentls-test-attachments-todos-thinking-and-usage ()
  "Attach lines and an image; the tasks show todos and usage with its cost, the transcript folds thinking."
  (agentls-test--with-project
      (root conn :edit-mode 'apply
            :files '(("main.txt" . "one\ntwo\nthree\n"))
            :script (agentls-test--script
                     "coordinator" (list (list :thinking "One step will do." :text "One step."))
                     "1" (list (list :thinking "First a checklist,\nthen the work."
                                     :toolCalls (vector (list :name "todo" :arguments
                                                              (list :todos (vector (list :content "Read the selection" :status "in_progress")
                                                                                   (list :content "Finish" :status "pending")))))
                                     :usage (list :inputTokens 1000 :outputTokens 100))
                               (list :toolCalls (vector (list :name "todo" :arguments
                                                              (list :todos (vector (list :content "Read the selection" :status "done")
                                                                                   (list :content "Finish" :status "in_progress"))))))
                               (agentls-test--call "finish" :summary "read it"))))
    (agentls-test--needs-run conn)
    ;; Thinking and the price of the scripted model: a fresh connection.
    (agentls--stop-connection conn)
    (let* ((agentls-thinking t)
           (agentls-initialization-options
            (list :prices (list (intern (concat ":" agentls-model))
                                (list :input 3 :output 15 :contextWindow 200000))))
           (conn (agentls--connection root))
           (default-directory root)
           (pixel (base64-decode-string "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")))
      (let ((coding-system-for-write 'binary))
        (write-region pixel nil (expand-file-name "shot.png" root) nil 'silent))
      (with-current-buffer (find-file-noselect (expand-file-name "main.txt" root))
        (goto-char (point-min))
        (forward-line 1)
        (set-mark (point))
        (forward-line 2)
        (activate-mark)
        (call-interactively #'agentls-attach)
        (deactivate-mark)
        (cl-letf (((symbol-function 'read-file-name) (lambda (&rest _) (expand-file-name "shot.png" root))))
          (let ((current-prefix-arg '(4)))
            (call-interactively #'agentls-attach))))
      (should (equal (mapcar (lambda (a) (agentls--describe-attachment a root))
                             (agentls-connection-attachments conn))
                     '("main.txt:2-3" "shot.png (image)")))
      (let* ((task (agentls-test--run conn "Read what I attached"))
             (result (agentls-task-result task)))
        (should (null (agentls-connection-attachments conn)))
        (should (equal (plist-get result :state) "done"))
        (let ((session (jsonrpc-request conn 'agent/session (list :sessionId (plist-get result :sessionId)))))
          (should (equal (plist-get (aref (plist-get session :messages) 0) :text)
                         "Read what I attached\n\nAttached: main.txt (lines 2-3), shot.png (image/png, 70 bytes)")))
        (should (agentls-test--events task "thinking"))
        (should (= 2 (length (agentls-test--events task "todos"))))
        (agentls-tasks)
        (with-current-buffer "*agentls-tasks*"
          (let ((text (buffer-substring-no-properties (point-min) (point-max))))
            (dolist (want '("tokens 1000 in / 100 out, $0.0045"
                            "tokens 1000 in / 100 out, $0.0045, context 1000 of 200000 (0%)"
                            "    [x] Read the selection" "    [>] Finish"))
              (should (string-match-p (regexp-quote want) text)))))
        (let ((buffer (agentls-transcript task)))
          (agentls-test--wait "the transcript's end"
                              (lambda () (with-current-buffer buffer
                                           (string-match-p "── task done" (buffer-string)))))
          (with-current-buffer buffer
            (let ((text (buffer-substring-no-properties (point-min) (point-max))))
              (dolist (want '("  ∴ thought (17 characters): One step will do."
                              "  ∴ thought (33 characters): First a checklist, then the work."
                              "  ☐ todos: 0 of 2 done" "  ☐ todos: 1 of 2 done"))
                (should (string-match-p (regexp-quote want) text))))
            ;; The thinking is hidden under its line.
            (goto-char (point-min))
            (search-forward "∴ thought (33 characters)")
            (let ((hidden (save-excursion (search-forward "      then the work.") (match-beginning 0))))
              (should (invisible-p hidden)))))
        (agentls-sessions)
        (with-current-buffer (get-buffer "*agentls-sessions*")
          (should (string-match-p (regexp-quote "1000 in / 100 out, $0.0045")
                                  (buffer-substring-no-properties (point-min) (point-max))))))
      (agentls--stop-connection conn))))

;;;; Instructions, compaction, cache reads

(ert-deftest agentls-test-instructions-compaction-and-cache-reads ()
  "The tasks buffer and the transcript show the instruction files, each compaction and what the cache read."
  (agentls-test--with-project
      (root conn :edit-mode 'apply
            :files '(("AGENTS.md" . "Run go test ./... before you finish.\n") ("a.txt" . "alpha\n"))
            :script (agentls-test--script
                     "coordinator" (list (list :toolCalls (vector (list :name "plan" :arguments
                                                                        (list :subtasks (vector (list :id "1" :content "Read a.txt")))))))
                     "1" (list (list :toolCalls (vector (list :name "read_file" :arguments (list :path "a.txt")))
                                     :usage (list :inputTokens 1000 :outputTokens 10 :cacheReadTokens 800))
                               (list :toolCalls (vector (list :name "read_file" :arguments (list :path "a.txt")))
                                     :usage (list :inputTokens 1100 :outputTokens 10 :cacheReadTokens 900))
                               (agentls-test--call "finish" :summary "read it"))))
    (agentls-test--needs-run conn)
    ;; A window of 100 tokens for the scripted model: its worker's
    ;; conversation is compacted before its third call. A fresh connection.
    (agentls--stop-connection conn)
    (let* ((agentls-initialization-options
            (list :prices (list (intern (concat ":" agentls-model)) (list :contextWindow 100))))
           (conn (agentls--connection root))
           (default-directory root))
      (let ((task (agentls-test--run conn "Read a.txt")))
        (should (equal (plist-get (agentls-task-result task) :state) "done"))
        (should (= 1 (length (agentls-test--events task "instructions"))))
        (should (agentls-test--events task "compacted"))
        (agentls-tasks)
        (with-current-buffer "*agentls-tasks*"
          (let ((text (buffer-substring-no-properties (point-min) (point-max))))
            (dolist (want '("instructions: AGENTS.md (9 tokens)" "tokens 2100 in (1700 cached) / 20 out"))
              (should (string-match-p (regexp-quote want) text)))))
        (let ((buffer (agentls-transcript task)))
          (agentls-test--wait "the transcript's end"
                              (lambda () (with-current-buffer buffer
                                           (string-match-p "── task done" (buffer-string)))))
          (with-current-buffer buffer
            (let ((text (buffer-substring-no-properties (point-min) (point-max))))
              (dolist (want '("  ⓘ instructions: AGENTS.md (9 tokens)" "  ⇣ context compacted: "))
                (should (string-match-p (regexp-quote want) text)))))))
      (agentls--stop-connection conn))))

;;;; Engines

(defvar agentls-test--fake-agent (getenv "AGENTLS_FAKE_AGENT_BIN")
  "The fake ACP agent of engines/enginestest, built by test/run.sh.")

(defun agentls-test--fake-engines (&rest steps)
  "Return `agentls-engines' with the fake agent playing STEPS as \"fake\"."
  (unless (and agentls-test--fake-agent (file-executable-p agentls-test--fake-agent))
    (ert-fail "AGENTLS_FAKE_AGENT_BIN is not set (test/run.sh builds the fake agent)"))
  `(("fake" :command (,agentls-test--fake-agent)
     :env (("AGENTLS_FAKE_AGENT" . ,(json-serialize (vconcat steps))))
     :isolate :json-false)))

(ert-deftest agentls-test-engines-in-the-tasks-transcript-and-doctor ()
  "A run forced onto an engine shows it in the tasks, the transcript and the doctor."
  (agentls-test--with-project
      (root conn :edit-mode 'apply
            :files '(("main.txt" . "main\n"))
            :script (agentls-test--script
                     "coordinator" (list (agentls-test--call "plan" :subtasks (vector (list :id "1" :content "Work on main.txt"))))))
    (agentls-test--needs-run conn)
    ;; The engines are read when the connection starts: start anew.
    (agentls--stop-connection conn)
    (let* ((agentls-engines (agentls-test--fake-engines
                             (list :plan ["read main.txt" "write out.txt"])
                             (list :read "main.txt")
                             (list :write "out.txt" :content "from the engine\n")
                             (list :say "The engine is done.")))
           (conn (agentls--connection root))
           (default-directory root)
           offered)
      (with-current-buffer (find-file-noselect (expand-file-name "main.txt" root))
        (erase-buffer)
        (insert "unsaved in the editor\n"))
      ;; agentls-run-on-engine completes from agent/engines.
      (let* ((finished nil)
             (agentls-task-finished-functions (list (lambda (task) (push task finished))))
             (id (cl-letf (((symbol-function 'completing-read)
                            (lambda (_prompt collection &rest _) (setq offered collection) "fake"))
                           ((symbol-function 'read-string) (lambda (&rest _) "Work on main.txt")))
                   (call-interactively #'agentls-run-on-engine)))
             (task (agentls-test--wait "the task on the engine to end"
                                       (lambda () (cl-find id finished :key #'agentls-task-id :test #'equal))))
             (result (agentls-task-result task)))
        (should (equal (car offered) "plan decides"))
        (should (member "agentls" offered))
        (should (member "fake" offered))
        (should (equal (plist-get result :state) "done"))
        (should (equal (plist-get (aref (plist-get result :subtasks) 0) :engine) "fake"))
        (should (equal (with-temp-buffer (insert-file-contents (expand-file-name "out.txt" root)) (buffer-string))
                       "from the engine\n"))
        (should (= 1 (length (agentls-test--events task "engineStarted"))))
        (agentls-tasks)
        (with-current-buffer "*agentls-tasks*"
          (let ((text (buffer-substring-no-properties (point-min) (point-max))))
            (dolist (want '("  [fake]" "    [>] read main.txt" "    [ ] write out.txt"))
              (should (string-match-p (regexp-quote want) text)))))
        (let ((buffer (agentls-transcript task)))
          (agentls-test--wait "the transcript's end"
                              (lambda () (with-current-buffer buffer
                                           (string-match-p "── task done" (buffer-string)))))
          (with-current-buffer buffer
            (let ((text (buffer-substring-no-properties (point-min) (point-max))))
              (dolist (want '("  ▶ on fake: started in " "  ☰ steps: 0 of 2 done" "      [>] read main.txt"
                              "read: unsaved in the editor"))
                (should (string-match-p (regexp-quote want) text)))))))
      ;; The doctor of the project's file (the views above are shared by
      ;; every project).
      (with-current-buffer (with-current-buffer (find-file-noselect (expand-file-name "main.txt" root))
                             (agentls-doctor))
        (let ((text (buffer-substring-no-properties (point-min) (point-max))))
          (should (string-match-p (concat "^  fake +ok  usable (" (regexp-quote agentls-test--fake-agent) ", from settings)$") text))
          ;; The built-in engines are listed too, usable or not.
          (should (string-match-p "^  claude " text))))
      (with-current-buffer (find-file-noselect (expand-file-name "main.txt" root))
        (set-buffer-modified-p nil))
      (agentls--stop-connection conn))))

(ert-deftest agentls-test-engine-that-cannot-be-used-fails-the-run ()
  "A run forced onto an engine that cannot be used fails with the server's reason."
  (agentls-test--with-project
      (root conn :script (agentls-test--script "coordinator" (list (list :text "One step."))))
    (agentls-test--needs-run conn)
    (agentls--stop-connection conn)
    (let* ((agentls-engines '(("broken" :command ("/no/such/agent"))))
           (conn (agentls--connection root))
           (default-directory root)
           (finished nil)
           (agentls-task-finished-functions (list (lambda (task) (push task finished))))
           (id (agentls-run "Work" nil nil nil nil "broken"))
           (task (agentls-test--wait "the run to be refused"
                                     (lambda () (cl-find id finished :key #'agentls-task-id :test #'equal)))))
      (should (equal (agentls-task-state task) "failed"))
      (should (string-match-p "engine \"broken\" cannot be used" (agentls-task-summary task)))
      (agentls--stop-connection conn))))

(ert-deftest agentls-test-engines-go-out-as-json-objects ()
  "`agentls-engines' becomes the engines setting: command an array, env an object."
  (let ((agentls-engines '(("goose" :command ("goose" "acp") :env (("GOOSE_KEY" . "${GOOSE_KEY}")) :isolate t)
                           ("codex" :disabled t))))
    (let* ((sent (json-parse-string (json-serialize (agentls--initialization-options)) :object-type 'plist))
           (engines (plist-get sent :engines)))
      (should (equal (plist-get engines :goose)
                     '(:command ["goose" "acp"] :env (:GOOSE_KEY "${GOOSE_KEY}") :isolate t)))
      (should (equal (plist-get engines :codex) '(:disabled t))))))

(ert-deftest agentls-test-transcript-follows-a-task ()
  "`agentls-transcript' shows the streamed text per subtask, tool calls folded, changes at the end."
  (agentls-test--with-project
      (_root conn :edit-mode 'apply
             :files '(("a.txt" . "alpha\n"))
             :script (agentls-test--script
                      "coordinator" (list (list :text "Two steps."
                                                :toolCalls (vector (list :name "plan" :arguments
                                                                         (list :subtasks (vector (list :id "1" :content "Read a")
                                                                                                 (list :id "2" :content "Write b" :dependsOn ["1"])))))))
                      "1" (list (list :text "Reading a.txt first."
                                      :toolCalls (vector (list :name "read_file" :arguments (list :path "a.txt"))))
                                (agentls-test--call "finish" :summary "a read"))
                      "2" (list (list :delayMs 300 :text "Now writing\nb.txt."
                                      :toolCalls (vector (list :name "write_file" :arguments (list :path "b.txt" :content "beta\n"))))
                                (agentls-test--call "finish" :summary "b written"))))
    (agentls-test--needs-run conn)
    (let* ((default-directory (agentls-connection-root conn))
           finished
           (agentls-task-finished-functions (list (lambda (task) (setq finished task))))
           (id (agentls-run "Read a then write b"))
           (task (gethash id (agentls-connection-tasks conn)))
           (buffer (agentls-transcript task)))
      (should (equal (buffer-name buffer) (format "*agentls-transcript: %s*" id)))
      (agentls-test--wait "the first subtask's text"
                          (lambda () (with-current-buffer buffer
                                       (string-match-p "Reading a.txt first." (buffer-string)))))
      (agentls-test--wait "the task to end" (lambda () finished))
      (agentls-test--wait "the changes at the end"
                          (lambda () (with-current-buffer buffer
                                       (string-match-p "  ✓ create b.txt" (buffer-string)))))
      (with-current-buffer buffer
        (should (derived-mode-p 'agentls-transcript-mode))
        (let ((text (buffer-substring-no-properties (point-min) (point-max))))
          (dolist (want '("── task ──" "Two steps." "── 1 · Read a ──" "Reading a.txt first."
                          "  ✓ read_file a.txt  → alpha" "── 2 · Write b ──" "Now writing\nb.txt."
                          "  ✓ write_file b.txt" "  ✎ changed b.txt"
                          "── task done: 2 of 2 subtasks done · 1 applied, 0 rejected ──" "changes:"))
            (should (string-match-p (regexp-quote want) text))))
        ;; The call's arguments are hidden under its line; TAB shows them.
        (goto-char (point-min))
        (search-forward "write_file b.txt")
        (let ((content (save-excursion (search-forward "        beta") (match-beginning 0))))
          (should (invisible-p content))
          (agentls-transcript-toggle)
          (should-not (invisible-p content))
          (agentls-transcript-toggle)
          (should (invisible-p content)))))))

(ert-deftest agentls-test-transcript-keeps-up-with-a-fast-stream ()
  "Thousands of streamed deltas reach the transcript buffer in one write; point at the end follows."
  (agentls-test--with-recording (root conn)
    (puthash root conn agentls--connections)
    (unwind-protect
        (let* ((task (agentls--make-task :id "t1" :connection conn :prompt "Stream"))
               (subtasks (vector (list :id "1" :content "Talk" :state "running")))
               (seq 0)
               (update (lambda (event)
                         (agentls--task-update conn (list :taskId "t1" :seq (cl-incf seq) :state "running"
                                                          :subtasks subtasks :event event))))
               buffer writes)
          (puthash "t1" task (agentls-connection-tasks conn))
          (setq buffer (agentls-transcript task))
          (with-current-buffer buffer
            (setq writes agentls-transcript-writes)
            (goto-char (point-max)))
          (dotimes (i 5000)
            (funcall update (list :kind "messageDelta" :subtaskId "1"
                                  :text (format "w%d%s" (1+ i) (if (zerop (% (1+ i) 100)) "\n" " ")))))
          (agentls-test--wait "the transcript to be written"
                              (lambda () (> (buffer-local-value 'agentls-transcript-writes buffer) writes)))
          (with-current-buffer buffer
            (should (= agentls-transcript-writes (1+ writes)))
            (should (string-match-p "^w4901 w4902 " (buffer-string)))
            (should (string-suffix-p "w5000\n" (buffer-string)))
            (should (= (point) (point-max)))
            ;; The person moves up to read: point stays there.
            (goto-char (point-min))
            (funcall update (list :kind "toolCall" :subtaskId "1" :tool "read_file" :arguments (list :path "a.txt")))
            (agentls-test--wait "the tool call" (lambda () (string-match-p "⚙ read_file a.txt" (buffer-string))))
            (should (= (point) (point-min)))
            ;; Back at the end, it follows again.
            (goto-char (point-max))
            (funcall update (list :kind "toolResult" :subtaskId "1" :tool "read_file" :ok t :summary "1 line"))
            (funcall update (list :kind "messageDelta" :subtaskId "1" :text "after the read"))
            (agentls-test--wait "the text after the call"
                                (lambda () (string-suffix-p "after the read" (buffer-string))))
            (should (string-match-p "  ✓ read_file a.txt  → 1 line" (buffer-string)))
            (should (= (point) (point-max)))))
      (remhash root agentls--connections)
      (when-let ((buffer (get-buffer "*agentls-transcript: t1*"))) (kill-buffer buffer)))))

(ert-deftest agentls-test-undo-a-task-and-a-subtask ()
  "`agentls-undo' refuses a file changed since, undoes what it can with a prefix, and a subtask alone."
  (should (eq (lookup-key agentls-tasks-mode-map "u") #'agentls-undo))
  (agentls-test--with-project
      (root conn :edit-mode 'apply
            :files '(("a.txt" . "one\n") ("b.txt" . "two\n"))
            :script (agentls-test--script
                     "coordinator" (list (agentls-test--call
                                          "plan" :subtasks
                                          (vector (list :id "1" :content "Shout a")
                                                  (list :id "2" :content "Shout b and add c" :dependsOn ["1"]))))
                     "1" (list (agentls-test--call "edit_file" :path "a.txt" :old_string "one" :new_string "ONE")
                               (agentls-test--call "finish" :summary "a shouted"))
                     "2" (list (agentls-test--call "edit_file" :path "b.txt" :old_string "two" :new_string "TWO")
                               (agentls-test--call "write_file" :path "c.txt" :content "three\n")
                               (agentls-test--call "finish" :summary "b shouted, c added"))))
    (agentls-test--needs-run conn)
    (let* ((task (agentls-test--run conn "Shout"))
           (id (agentls-task-id task))
           (file (lambda (name) (expand-file-name name root)))
           said)
      (should (equal (agentls-task-state task) "done"))
      ;; The person changes the line the task wrote in a.txt.
      (with-current-buffer (find-file-noselect (funcall file "a.txt"))
        (erase-buffer)
        (insert "ONE, mine\n")
        (save-buffer))
      (agentls-test--messages said
        (agentls-tasks)
        (with-current-buffer "*agentls-tasks*"
          (agentls-test--goto-entry id)
          (cl-letf (((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
            (should (eq :json-false (plist-get (call-interactively #'agentls-undo) :undone))))))
      (should (string-match-p (regexp-quote (format "task %s not undone: a.txt: line 1 changed since the task wrote it;" id))
                              (car said)))
      (should (string-match-p "undoes the files that can be)" (car said)))
      (should (equal (agentls-test--read (funcall file "b.txt")) "TWO\n"))
      (should (file-exists-p (funcall file "c.txt")))
      ;; With a prefix argument, the files that can be are undone.
      (agentls-test--messages said
        (with-current-buffer "*agentls-tasks*"
          (agentls-test--goto-entry id)
          (let ((current-prefix-arg '(4)))
            (cl-letf (((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
              (call-interactively #'agentls-undo)))))
      (should (string-match-p "; restored b.txt, deleted c.txt\\'" (car said)))
      (should (equal (agentls-test--read (funcall file "a.txt")) "ONE, mine\n"))
      (should (equal (agentls-test--read (funcall file "b.txt")) "two\n"))
      (should-not (file-exists-p (funcall file "c.txt")))
      ;; The person takes their line back: subtask 1 alone can be undone,
      ;; in the buffer that visits a.txt.
      (with-current-buffer (find-file-noselect (funcall file "a.txt"))
        (erase-buffer)
        (insert "ONE\n")
        (save-buffer))
      (agentls-test--messages said
        (with-current-buffer "*agentls-tasks*"
          (agentls-test--goto-entry (cons id "1"))
          (cl-letf (((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
            (should (eq t (plist-get (call-interactively #'agentls-undo) :undone))))))
      (should (equal (car said) (format "agentls: undid subtask 1 of task %s: restored a.txt" id)))
      (with-current-buffer (find-file-noselect (funcall file "a.txt"))
        (should (equal (buffer-string) "one\n"))))))

;;;; In a terminal: the real command loop, under tmux

;; An interactive `emacs -nw -Q' runs test/tty-driver.el in a terminal that
;; tmux provides; the test types keys with send-keys and reads the screen
;; with capture-pane.  What C-g and C-x C-c do depends on the command loop,
;; the minibuffer and timers, which batch Emacs does not have.

(defun agentls-test--tmux (sock &rest args)
  "Run tmux on the server at SOCK with ARGS; return (STATUS . OUTPUT)."
  (with-temp-buffer
    (let ((status (apply #'call-process "tmux" nil t nil "-S" sock args)))
      (cons status (buffer-string)))))

(defun agentls-test--screen (sock)
  "Return the text on the screen of the tmux server at SOCK."
  (cdr (agentls-test--tmux sock "capture-pane" "-p" "-t" "agentls")))

(defun agentls-test--wait-screen (sock text)
  "Wait until the screen of the tmux server at SOCK shows TEXT; return it."
  (let (screen)
    (condition-case nil
        (agentls-test--wait (format "%S on the screen" text)
                            (lambda () (string-match-p (regexp-quote text)
                                                       (setq screen (agentls-test--screen sock)))))
      (ert-test-failed (ert-fail (list "timed out waiting for" text "on the screen" screen))))
    screen))

(defun agentls-test--process-gone-p (pid)
  "Return non-nil when no process PID runs (a zombie counts as gone)."
  (let ((stat (format "/proc/%d/stat" pid)))
    (or (not (file-exists-p stat))
        (string-match-p "\\`[0-9]+ ([^)]*) Z" (agentls-test--read stat)))))

(defmacro agentls-test--with-tty (spec &rest body)
  "Run BODY with agentls in an interactive Emacs in a terminal under tmux.
SPEC is (SOCK ROOT OUT SCRIPT &optional EDIT-MODE): SCRIPT is the
scripted model, EDIT-MODE a string (propose by default); SOCK is
bound to the tmux server's socket, ROOT to the project (with notes.txt
holding \"draft\"), OUT to where the driver writes pid and result."
  (declare (indent 1))
  (let ((sock (nth 0 spec)) (root (nth 1 spec)) (out (nth 2 spec)) (script (nth 3 spec))
        (edit-mode (or (nth 4 spec) "propose")))
    `(progn
       (unless (executable-find "tmux")
         (ert-skip "tmux is not installed (test/run.sh installs Debian's tmux where it can)"))
       (let* ((dir (make-temp-file "agentls-tty" t))
              (,sock (expand-file-name "tmux.sock" dir))
              (,root (file-name-as-directory (expand-file-name "project" dir)))
              (,out (expand-file-name "out" dir))
              (state (expand-file-name "state" dir))
              (script-file (expand-file-name "script.json" dir))
              (process-environment
               (append (list (concat "AGENTLS_STATE_DIR=" state)
                             (concat "AGENTLS_BIN=" agentls-test--bin)
                             (concat "AGENTLS_TTY_SCRIPT=" script-file)
                             (concat "AGENTLS_TTY_OUT=" ,out)
                             (concat "AGENTLS_TTY_EDIT_MODE=" ,edit-mode)
                             "AGENTLS_MODEL=" "ANTHROPIC_API_KEY=" "OPENAI_API_KEY="
                             ;; A terminal that speaks UTF-8 whatever the
                             ;; environment's locale (none, under CI):
                             ;; else Emacs draws the marks the test reads as ?.
                             "LANG=C.UTF-8" "LC_ALL=C.UTF-8")
                       process-environment)))
         (unwind-protect
             (progn
               (make-directory (expand-file-name ".git" ,root) t)
               (make-directory ,out t)
               (agentls-test--write (expand-file-name "notes.txt" ,root) "draft\n")
               (agentls-test--write script-file (json-serialize ,script))
               (let ((started (agentls-test--tmux
                               ,sock "new-session" "-d" "-s" "agentls" "-x" "120" "-y" "30" "-c" ,root
                               (mapconcat #'shell-quote-argument
                                          (list (expand-file-name invocation-name invocation-directory)
                                                "-nw" "-Q" "-L" (file-name-directory (locate-library "agentls"))
                                                "-l" (expand-file-name "tty-driver.el" agentls-test--dir))
                                          " "))))
                 (unless (eql 0 (car started))
                   (ert-fail (list "tmux new-session failed" started))))
               ,@body)
           (agentls-test--tmux ,sock "kill-server")
           ;; Whatever the test left running goes: Emacs (which the hangup
           ;; from tmux asks to quit) then agentls, each given a few
           ;; seconds to end by itself.
           (dolist (name '("emacs-pid" "pid"))
             (let ((pid-file (expand-file-name name ,out)))
               (when (file-exists-p pid-file)
                 (let ((pid (read (agentls-test--read pid-file)))
                       (end (+ (float-time) 5)))
                   (while (and (not (agentls-test--process-gone-p pid)) (< (float-time) end))
                     (accept-process-output nil 0.05))
                   (unless (agentls-test--process-gone-p pid)
                     (signal-process pid 'kill))))))
           (delete-directory dir t))))))

(defun agentls-test--tty-result (out)
  "Wait for the driver's result in OUT and return it."
  (let ((file (expand-file-name "result" out)))
    (agentls-test--wait "the task to end" (lambda () (file-exists-p file)))
    (read (agentls-test--read file))))

(defun agentls-test--tool-result (events tool)
  "Return the toolResult event of TOOL among EVENTS."
  (cl-find-if (lambda (e) (and (equal (plist-get e :kind) "toolResult") (equal (plist-get e :tool) tool)))
              events))

(ert-deftest agentls-test-tty-c-g-dismisses-every-prompt ()
  "In a terminal, C-g at a question, a command approval and an edit confirmation answers no."
  (agentls-test--with-tty
      (sock root out (agentls-test--script
                      "coordinator" (list (list :text "One step."))
                      "1" (list (agentls-test--call "ask_human" :question "Which greeting?"
                                                    :options ["hi" "hello"])
                                (agentls-test--call "run_command" :command "echo ran > ran.txt")
                                (agentls-test--call "edit_file" :path "notes.txt"
                                                    :old_string "draft" :new_string "final")
                                (agentls-test--call "finish" :summary "tried"))))
    (agentls-test--wait-screen sock "Which greeting?")
    (agentls-test--tmux sock "send-keys" "-t" "agentls" "C-g")
    (agentls-test--wait-screen sock "echo ran > ran.txt")
    (agentls-test--tmux sock "send-keys" "-t" "agentls" "C-g")
    (agentls-test--wait-screen sock "(y or n)")
    (agentls-test--tmux sock "send-keys" "-t" "agentls" "C-g")
    (let* ((outcome (agentls-test--tty-result out))
           (events (plist-get outcome :events))
           (answered (cl-find "answered" events :key (lambda (e) (plist-get e :kind)) :test #'equal))
           (changes (plist-get (plist-get outcome :result) :changes)))
      (should (equal (plist-get outcome :state) "done"))
      ;; The question: dismissed (no answer).
      (should answered)
      (should-not (plist-get answered :answer))
      ;; The command: refused, not run.
      (should (eq :json-false (plist-get (agentls-test--tool-result events "run_command") :ok)))
      (should-not (file-exists-p (expand-file-name "ran.txt" root)))
      ;; The edit: the server heard the rejection and applied nothing.
      (should (equal (mapcar (lambda (c) (list (plist-get c :path) (plist-get c :applied))) changes)
                     '(("notes.txt" :json-false))))
      (let ((edit (agentls-test--tool-result events "edit_file")))
        (should (eq :json-false (plist-get edit :ok)))
        (should (string-match-p "rejected" (plist-get edit :summary))))
      (should (equal (agentls-test--read (expand-file-name "notes.txt" root)) "draft\n"))
      ;; Nothing is left waiting: Emacs quits at once.
      (agentls-test--tmux sock "send-keys" "-t" "agentls" "C-x" "C-c")
      (agentls-test--wait "Emacs to quit"
                          (lambda () (not (eql 0 (car (agentls-test--tmux sock "has-session" "-t" "agentls")))))))))

(ert-deftest agentls-test-tty-quitting-emacs-during-a-question ()
  "In a terminal, one C-x C-c while an agent question waits quits Emacs and agentls."
  (agentls-test--with-tty
      (sock _root out (agentls-test--script
                       "coordinator" (list (list :text "One step."))
                       "1" (list (agentls-test--call "ask_human" :question "Which greeting?"
                                                     :options ["hi" "hello"])
                                 (agentls-test--call "finish" :summary "asked"))))
    (agentls-test--wait-screen sock "Which greeting?")
    (let* ((pid-file (expand-file-name "pid" out))
           (pid (progn (agentls-test--wait "the agentls pid" (lambda () (file-exists-p pid-file)))
                       (read (agentls-test--read pid-file)))))
      (should (not (agentls-test--process-gone-p pid)))
      (agentls-test--tmux sock "send-keys" "-t" "agentls" "C-x" "C-c")
      (condition-case nil
          (agentls-test--wait "Emacs to quit"
                              (lambda () (not (eql 0 (car (agentls-test--tmux sock "has-session" "-t" "agentls"))))))
        (ert-test-failed (ert-fail (list "Emacs did not quit after one C-x C-c; the screen:"
                                         (agentls-test--screen sock)))))
      (agentls-test--wait "the agentls process to end" (lambda () (agentls-test--process-gone-p pid))))))

(ert-deftest agentls-test-tty-untrusted-project-asks-before-a-command ()
  "In a terminal, an untrusted project's command under `allow' waits for the answer typed."
  (let ((process-environment (append '("AGENTLS_TTY_TRUST=untrusted" "AGENTLS_TTY_COMMANDS=allow")
                                     process-environment)))
    (agentls-test--with-tty
        (sock root out (agentls-test--script
                        "coordinator" (list (list :text "One step."))
                        "1" (list (agentls-test--call "run_command" :command "echo ran > ran.txt")
                                  (agentls-test--call "finish" :summary "ran"))))
      (agentls-test--wait-screen sock "agentls: This workspace is not trusted. agentls wants to run `echo ran > ran.txt`")
      (should-not (file-exists-p (expand-file-name "ran.txt" root)))
      (agentls-test--tmux sock "send-keys" "-t" "agentls" "Run" "Enter")
      (should (equal (plist-get (agentls-test--tty-result out) :state) "done"))
      (should (equal (agentls-test--read (expand-file-name "ran.txt" root)) "ran\n")))))

(ert-deftest agentls-test-tty-transcript-and-skip ()
  "In a terminal, the transcript follows a running task and `x' in the tasks buffer skips a subtask."
  (agentls-test--with-tty
      (sock root out (agentls-test--script
                      "coordinator" (list (list :text "Two steps: think, then write."
                                                :toolCalls (vector (list :name "plan" :arguments
                                                                         (list :subtasks (vector (list :id "1" :content "Think about the notes")
                                                                                                 (list :id "2" :content "Write it down" :dependsOn ["1"])))))))
                      "1" (list (list :text "Reading the notes first.\nThey are short."
                                      :toolCalls (vector (list :name "read_file" :arguments (list :path "notes.txt"))))
                                (list :delayMs 120000 :text "still thinking"))
                      "2" (list (list :text "Writing it down."
                                      :toolCalls (vector (list :name "write_file" :arguments (list :path "out.txt" :content "written\n"))))
                                (agentls-test--call "finish" :summary "written down")))
            "apply")
    (let ((pid-file (expand-file-name "pid" out)))
      (agentls-test--wait "the task to start" (lambda () (file-exists-p pid-file))))
    (agentls-test--tmux sock "send-keys" "-t" "agentls" "M-x" "agentls-tasks" "Enter")
    (agentls-test--wait-screen sock "pending")
    (agentls-test--tmux sock "send-keys" "-t" "agentls" "M-x" "agentls-transcript" "Enter")
    (agentls-test--wait-screen sock "✓ read_file notes.txt  → draft")
    (let ((screen (agentls-test--wait-screen sock "They are short.")))
      (dolist (want '("── task ──" "Two steps: think, then write." "── 1 · Think about the notes ──"
                      "Reading the notes first."))
        (should (string-match-p (regexp-quote want) screen)))
      ;; The call's arguments are hidden under its line.
      (should-not (string-match-p "path: \"notes.txt\"" screen)))
    ;; In the tasks buffer, the line after the task's is subtask 1.
    (agentls-test--tmux sock "send-keys" "-t" "agentls" "n" "x")
    (let* ((outcome (agentls-test--tty-result out))
           (subtasks (plist-get (plist-get outcome :result) :subtasks)))
      (should (equal (plist-get outcome :state) "done"))
      (should (equal (mapcar (lambda (s) (cons (plist-get s :id) (plist-get s :state))) subtasks)
                     '(("1" . "skipped") ("2" . "done"))))
      (should (equal (agentls-test--read (expand-file-name "out.txt" root)) "written\n")))
    ;; The transcript's window shows its end: the counts, the summary and,
    ;; last (from the run's result), the changes.
    (let ((screen (agentls-test--wait-screen sock "✓ create out.txt")))
      (dolist (want '("── task done: 1 of 2 subtasks done, 1 skipped · 1 applied, 0 rejected ──" "- 1 (Think about the notes): skipped"
                      "- 2 (Write it down): written down" "changes:"))
        (should (string-match-p (regexp-quote want) screen)))
      (message "the screen:\n%s" screen))
    ;; The task ran and ended without moving the person's point: they are
    ;; still in the tasks buffer, where they pressed x.
    (agentls-test--tmux sock "send-keys" "-t" "agentls" "M-:" "(format \"selected: %s\" (buffer-name))" "Enter")
    (agentls-test--wait-screen sock "selected: *agentls-tasks*")))

(provide 'agentls-test)
;;; agentls-test.el ends here
