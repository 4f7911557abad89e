;;; lsp-client.el --- agentls asking gopls through eglot, in a child Emacs -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by the test agentls-test-references-from-gopls-through-eglot in
;; an Emacs of its own (eglot's packages stay out of the suite's Emacs).
;; gopls serves the Go project ROOT through eglot, as a person's
;; configuration would have it; agentls (AGENTLS_BIN, the package in
;; AGENTLS_EL) is asked for the code graph of a few symbols, and asks gopls
;; back through Emacs.  The outcome is printed as one plist on standard
;; output.

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

(defun agentls-test--calls (result)
  "The calls edges of the agent/codeGraph RESULT: (FROM TO PROVENANCE) each."
  (let (out)
    (cl-loop for e across (plist-get result :edges)
             when (equal (plist-get e :kind) "calls")
             do (push (list (plist-get e :from) (plist-get e :to) (plist-get e :provenance)) out))
    (nreverse out)))

(let* ((root (file-name-as-directory (getenv "ROOT")))
       (default-directory root)
       (use (find-file-noselect (expand-file-name "use/use.go" root))))
  (setq agentls-program (getenv "AGENTLS_BIN"))
  (with-current-buffer use
    (eglot (list 'agentls-test-go-mode) (project-current) 'eglot-lsp-server
           (list (getenv "AGENTLS_GOPLS")) "go")
    ;; gopls has loaded the module once it answers: on a cold cache, a while.
    (let ((server (eglot-current-server)))
      (jsonrpc-request server :textDocument/definition
                       (list :textDocument (list :uri (agentls--path-to-uri buffer-file-name))
                             :position (list :line 11 :character 11))
                       :timeout 120)))
  (let* ((conn (agentls--connection root))
         (graph (lambda (&rest params) (agentls--request conn 'agent/codeGraph params :timeout 60)))
         (outcome
          (list :read-one (agentls-test--calls (funcall graph :symbol "Read" :path "one/reader.go"))
                :read-two (agentls-test--calls (funcall graph :symbol "Read" :path "two/reader.go"))
                :errorf (agentls-test--calls (funcall graph :symbol "errs.Errorf"))
                :method (agentls-test--calls (funcall graph :symbol "T.Errorf"))
                :one-managed (let ((b (find-buffer-visiting (expand-file-name "one/reader.go" root))))
                               (and b (with-current-buffer b (and (eglot-current-server) t)))))))
    (prin1 outcome)
    (terpri)
    ;; Emacs ends next, and its children with it: the servers' goodbyes
    ;; need not be waited for.
    (ignore-errors (jsonrpc-shutdown conn))))

;;; lsp-client.el ends here
