;;; eglot-client.el --- agentls driven from eglot, in a child Emacs -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by the test agentls-test-eglot-new-and-deleted-files in an Emacs
;; of its own (eglot's packages stay out of the suite's Emacs).  eglot
;; declares no resource operations (1.9 advertises documentChanges alone),
;; so agentls must create and delete files itself.  The environment gives
;; AGENTLS_BIN, the project ROOT (holding old.txt) and the scripted model
;; SCRIPT; the outcome is printed as one plist on standard output.

;;; Code:

(unless (require 'eglot nil t)
  (dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa-src/*"))
    (add-to-list 'load-path dir))
  (require 'eglot))

(setq eglot-confirm-server-initiated-edits nil)
;; eglot asks before editing a file nobody visits: the person says yes.
(fset 'y-or-n-p (lambda (&rest _) t))

(let* ((root (file-name-as-directory (getenv "ROOT")))
       (default-directory root)
       (fresh (expand-file-name "new/dir/fresh.txt" root)))
  (find-file (expand-file-name "main.txt" root))
  (text-mode)
  (eglot (list 'text-mode) (project-current) 'eglot-lsp-server
         (list (getenv "AGENTLS_BIN") "serve"
               :initializationOptions (list :model (concat "script:" (getenv "SCRIPT")) :editMode "apply"))
         "text")
  (let* ((server (eglot-current-server))
         (result (jsonrpc-request server :agent/run (list :prompt "move") :timeout 30))
         (buffer (find-buffer-visiting fresh)))
    (prin1 (list :changes (mapcar (lambda (c) (list (plist-get c :operation) (plist-get c :applied)))
                                  (plist-get result :changes))
                 :fresh (and (file-exists-p fresh)
                             (with-temp-buffer (insert-file-contents fresh) (buffer-string)))
                 :buffer (and buffer (with-current-buffer buffer (buffer-string)))
                 :modified (and buffer (buffer-modified-p buffer))
                 :old (file-exists-p (expand-file-name "old.txt" root))))
    (terpri)
    (eglot-shutdown server)))

;;; eglot-client.el ends here
