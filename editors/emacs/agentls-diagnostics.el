;;; agentls-diagnostics.el --- The diagnostics Emacs gives agentls -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; agentls tells a worker the errors its edit introduced, as Emacs shows
;; them (docs/PROTOCOL.md §4, agent/diagnostics).  It asks Emacs for a
;; file's diagnostics before the edit and after it, and waits between the
;; two for Emacs's word that a language server checked the file again
;; (agent/didChangeDiagnostics): the waiting is agentls's, bounded by its
;; diagnostics setting, and Emacs answers at once with what it has.
;;
;; What Emacs has are eglot's servers' diagnostics, as each last
;; published them (textDocument/publishDiagnostics, kept here as LSP
;; gives them: their ranges, codes and sources as the server said), and
;; the diagnostics of Flymake's other backends in the file's buffer.
;; Emacs tells agentls of each publish of an eglot server and of each
;; report of another Flymake backend.  eglot's own Flymake backend is
;; not listened to: it hands Flymake what the server published before,
;; at the start of each check, which says nothing of a change.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'seq)
(require 'subr-x)
(require 'agentls-rpc)

(defvar agentls--connections)
(declare-function flymake-diagnostics "flymake" (&optional beg end))
(declare-function flymake-diagnostic-backend "flymake" (diag))
(declare-function flymake-diagnostic-beg "flymake" (diag))
(declare-function flymake-diagnostic-end "flymake" (diag))
(declare-function flymake-diagnostic-type "flymake" (diag))
(declare-function flymake-diagnostic-text "flymake" (diag))

(defvar agentls--published (make-hash-table :test #'equal)
  "The diagnostics eglot's servers last published, by file.
A file's true name maps to an alist of (SERVER . DIAGNOSTICS), the
DIAGNOSTICS a list of LSP Diagnostic plists.  A file a server
published none for is left out.")

(defvar agentls--diagnostics-changed nil
  "The true names of the files whose diagnostics changed since the last flush.")

(defvar agentls--diagnostics-timer nil
  "The timer that tells agentls of `agentls--diagnostics-changed', or nil.")

;;;; What Emacs tells agentls

(defun agentls--diagnostics-listening-p ()
  "Return non-nil when some agentls is there to be told."
  (and (boundp 'agentls--connections) (> (hash-table-count agentls--connections) 0)))

(defun agentls--diagnostics-note (file)
  "Note that the diagnostics of FILE changed; agentls hears of it soon.
Every file noted before the next turn of the command loop goes in one
agent/didChangeDiagnostics per project."
  (when (and (stringp file) (agentls--diagnostics-listening-p))
    (cl-pushnew (file-truename file) agentls--diagnostics-changed :test #'equal)
    (unless agentls--diagnostics-timer
      (setq agentls--diagnostics-timer (run-at-time 0 nil #'agentls--diagnostics-flush)))))

(defun agentls--diagnostics-flush ()
  "Send agent/didChangeDiagnostics for the files noted to their projects' agentls."
  (let ((files agentls--diagnostics-changed))
    (setq agentls--diagnostics-changed nil
          agentls--diagnostics-timer nil)
    (maphash
     (lambda (root conn)
       (when (jsonrpc-running-p conn)
         (let* ((dir (file-name-as-directory (file-truename root)))
                (uris (mapcar #'agentls--path-to-uri
                              (sort (seq-filter (lambda (f) (string-prefix-p dir f)) files)
                                    #'string<))))
           (when uris
             (ignore-errors
               (jsonrpc-notify conn 'agent/didChangeDiagnostics (list :uris (vconcat uris))))))))
     agentls--connections)))

(defun agentls--eglot-published (server method &rest args)
  "Keep what SERVER published, when METHOD is textDocument/publishDiagnostics.
ARGS are the notification's parameters, as eglot's handler gets them.
An :after advice of `eglot-handle-notification': an error here is
shown, never eglot's."
  (when (eq method 'textDocument/publishDiagnostics)
    (with-demoted-errors "agentls: the diagnostics eglot's server published: %S"
      (let ((file (agentls--uri-to-path (plist-get args :uri))))
        (when file
          (let* ((key (file-truename file))
                 (diags (cl-loop for d being the elements of (or (plist-get args :diagnostics) [])
                                 when (and (listp d) (plist-get d :range))
                                 collect (agentls--lsp-diagnostic d)))
                 ;; What other servers published stays; a server that
                 ;; ended takes its diagnostics with it.
                 (others (cl-remove-if (lambda (e) (or (eq (car e) server)
                                                       (not (jsonrpc-running-p (car e)))))
                                       (gethash key agentls--published))))
            (if (or diags others)
                (puthash key (if diags (cons (cons server diags) others) others) agentls--published)
              (remhash key agentls--published))
            (agentls--diagnostics-note file)))))))

(defun agentls--flymake-reported (backend _token &rest _)
  "Note the report of Flymake's BACKEND in this buffer, unless it is eglot's.
An :after advice of Flymake's report handler."
  (unless (eq backend 'eglot-flymake-backend)
    (agentls--diagnostics-note buffer-file-name)))

(with-eval-after-load 'eglot
  (advice-add 'eglot-handle-notification :after #'agentls--eglot-published))
(with-eval-after-load 'flymake
  (when (fboundp 'flymake--handle-report)
    (advice-add 'flymake--handle-report :after #'agentls--flymake-reported)))

;;;; What agentls asks

(defun agentls--lsp-diagnostic (d)
  "Return the range, severity, code, source and message of the LSP Diagnostic D."
  (let ((out (list :range (plist-get d :range)
                   :message (let ((m (plist-get d :message))) (if (stringp m) m "")))))
    (let ((severity (plist-get d :severity)))
      (when (integerp severity) (setq out (plist-put out :severity severity))))
    (let ((code (plist-get d :code)))
      (when (or (stringp code) (integerp code)) (setq out (plist-put out :code code))))
    (let ((source (plist-get d :source)))
      (when (stringp source) (setq out (plist-put out :source source))))
    out))

(defun agentls--utf16-column (pos)
  "Return the column of POS in UTF-16 code units, as LSP counts them."
  (save-excursion
    (goto-char pos)
    (/ (length (encode-coding-string
                (buffer-substring-no-properties (line-beginning-position) pos) 'utf-16le))
       2)))

(defun agentls--point-to-lsp (pos)
  "Return the LSP position of POS in the current buffer."
  (save-restriction
    (widen)
    (list :line (1- (line-number-at-pos pos t)) :character (agentls--utf16-column pos))))

(defun agentls--flymake-severity (type)
  "Return the LSP severity of the Flymake diagnostic TYPE."
  (let ((category (if (memq type '(:error :warning :note)) type (get type 'flymake-category))))
    (pcase category
      ((or :warning 'flymake-warning) 2)
      ((or :note 'flymake-note) 3)
      (_ 1))))

(defun agentls--flymake-diagnostics (buffer)
  "Return the LSP Diagnostics of BUFFER's Flymake backends but eglot's."
  (with-current-buffer buffer
    (when (bound-and-true-p flymake-mode)
      (cl-loop for d in (save-restriction (widen) (flymake-diagnostics))
               for backend = (flymake-diagnostic-backend d)
               unless (eq backend 'eglot-flymake-backend)
               collect (append
                        (list :range (list :start (agentls--point-to-lsp (flymake-diagnostic-beg d))
                                           :end (agentls--point-to-lsp (flymake-diagnostic-end d)))
                              :severity (agentls--flymake-severity (flymake-diagnostic-type d))
                              :message (flymake-diagnostic-text d))
                        (and backend (symbolp backend) (list :source (symbol-name backend))))))))

(defun agentls--file-diagnostics (file)
  "Return the diagnostics Emacs has for FILE, LSP Diagnostic plists."
  (let ((buffer (find-buffer-visiting file)))
    (append
     (cl-loop for (server . diags) in (gethash (file-truename file) agentls--published)
              when (jsonrpc-running-p server) append diags)
     (and buffer (agentls--flymake-diagnostics buffer)))))

(defun agentls--diagnosed-files (root)
  "Return the files under ROOT that Emacs has diagnostics for."
  (let ((dir (file-name-as-directory (file-truename root)))
        files)
    (maphash (lambda (file entries)
               (when (and (string-prefix-p dir file)
                          (cl-some (lambda (e) (jsonrpc-running-p (car e))) entries))
                 (push file files)))
             agentls--published)
    (dolist (buffer (buffer-list))
      (let ((file (buffer-file-name buffer)))
        (when (and file (boundp 'flymake-mode) (buffer-local-value 'flymake-mode buffer))
          (let ((true (file-truename file)))
            (when (string-prefix-p dir true)
              (cl-pushnew true files :test #'equal))))))
    (sort files #'string<)))

(defun agentls--diagnostics (conn params)
  "Answer agent/diagnostics PARAMS on CONN: the diagnostics Emacs has.
Of the files PARAMS's :uris name, else of every file of the project
that has some.  A file without any is left out."
  (let ((root (agentls-connection-root conn))
        (uris (plist-get params :uris))
        items)
    (unless (or (null uris) (vectorp uris) (listp uris))
      (jsonrpc-error :code -32602 :message "invalid params: uris must be a list of URIs"))
    (if (> (length uris) 0)
        (seq-doseq (uri uris)
          (let ((file (and (stringp uri) (agentls--uri-to-path uri))))
            (when (and file (agentls--inside-p file root))
              (when-let ((diags (agentls--file-diagnostics file)))
                (push (list :uri uri :diagnostics (vconcat diags)) items)))))
      (dolist (file (agentls--diagnosed-files root))
        (when-let ((diags (agentls--file-diagnostics file)))
          (push (list :uri (agentls--path-to-uri file) :diagnostics (vconcat diags)) items))))
    (list :items (vconcat (nreverse items)))))

(provide 'agentls-diagnostics)
;;; agentls-diagnostics.el ends here
