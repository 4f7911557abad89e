;;; diagnostics-client.el --- gopls's diagnostics of an agent's edit, through eglot, in a child Emacs -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by the test agentls-test-diagnostics-from-gopls-through-eglot in
;; an Emacs of its own (eglot's packages stay out of the suite's Emacs).
;; gopls serves the Go module ROOT through eglot, main.go open, as a
;; person's configuration would have it; agentls (AGENTLS_BIN, the package
;; in AGENTLS_EL) runs a task of the scripted model SCRIPT whose worker
;; edits main.go.  The outcome is printed as one plist on standard output:
;; the state of the task, its tool results, and the diagnostics Emacs
;; still has of main.go.

;;; Code:

(unless (require 'eglot nil t)
  (dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa-src/*"))
    (add-to-list 'load-path dir))
  (require 'eglot))
(add-to-list 'load-path (getenv "AGENTLS_EL"))
(require 'agentls)

;; Emacs 28 has no Go mode: a mode of the test's own, which eglot serves.
(define-derived-mode agentls-test-go-mode prog-mode "Go"
  "Go, as far as the test needs it.")
(add-to-list 'auto-mode-alist '("\\.go\\'" . agentls-test-go-mode))

;; A batch Emacs is never idle, so its idle timers never run: eglot's
;; sending a change to the server and Flymake's checks wait for an idle
;; Emacs.  Here they run as plain timers, as in an Emacs the person
;; leaves alone while the agent works.
(advice-add 'run-with-idle-timer :override
            (lambda (secs repeat function &rest args)
              (apply #'run-at-time (if (numberp secs) secs 0)
                     (and repeat (max 0.5 (if (numberp secs) secs 0)))
                     function args)))

(let* ((root (file-name-as-directory (getenv "ROOT")))
       (default-directory root)
       (main (expand-file-name "main.go" root))
       (buffer (find-file-noselect main)))
  (setq agentls-program (getenv "AGENTLS_BIN")
        agentls-model (concat "script:" (getenv "SCRIPT"))
        agentls-edit-mode 'apply
        ;; The edit's wait ends when gopls reports: the bound only guards
        ;; a gopls that never does.
        agentls-diagnostics-wait 300000)
  (with-current-buffer buffer
    (eglot (list 'agentls-test-go-mode) (project-current) 'eglot-lsp-server
           (list (getenv "AGENTLS_GOPLS")) "go")
    ;; gopls has loaded the module once it answers: on a cold cache, a while.
    (jsonrpc-request (eglot-current-server) :textDocument/hover
                     (list :textDocument (list :uri (agentls--path-to-uri main))
                           :position (list :line 5 :character 2))
                     :timeout 120))
  (let* ((finished nil)
         (agentls-task-finished-functions (list (lambda (task) (setq finished task))))
         (deadline (+ (float-time) 240)))
    (agentls-run "Greet by name")
    (while (and (not finished) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (prin1 (list :state (and finished (agentls-task-state finished))
                 :results (and finished
                               (cl-loop for e in (reverse (agentls-task-events finished))
                                        when (equal (plist-get e :kind) "toolResult")
                                        collect (format "%s: %s" (plist-get e :tool) (plist-get e :summary))))
                 :left (agentls--file-diagnostics main)
                 :text (with-current-buffer buffer (buffer-string))))
    (terpri)
    (ignore-errors (jsonrpc-shutdown (agentls--connection root)))
    (ignore-errors (eglot-shutdown (with-current-buffer buffer (eglot-current-server))))))

;;; diagnostics-client.el ends here
