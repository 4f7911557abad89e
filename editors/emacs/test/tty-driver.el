;;; tty-driver.el --- agentls in an interactive Emacs, for the terminal tests -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by an `emacs -nw -Q' that agentls-test.el runs in a terminal
;; under tmux, where keys are typed with tmux send-keys: the real command
;; loop, minibuffer and C-g.  It starts a task (AGENTLS_TTY_PROMPT, in
;; the edit mode AGENTLS_TTY_EDIT_MODE, propose by default; the commands
;; setting AGENTLS_TTY_COMMANDS, ask by default; the workspace trust
;; AGENTLS_TTY_TRUST, trusted by default) on the project
;; in the current directory with the scripted model AGENTLS_TTY_SCRIPT, writes its
;; own process id to AGENTLS_TTY_OUT/emacs-pid, the agentls process id to
;; AGENTLS_TTY_OUT/pid once it runs, and the task's state, result and
;; events to AGENTLS_TTY_OUT/result when it ends.

;;; Code:

(require 'agentls)

(defvar agentls-tty--out (getenv "AGENTLS_TTY_OUT")
  "Where the driver writes what the test reads.")

(defun agentls-tty--write (name value)
  "Write VALUE, printed, to NAME in `agentls-tty--out', whole or not at all."
  (let ((file (expand-file-name name agentls-tty--out))
        (print-length nil) (print-level nil))
    (with-temp-buffer
      (prin1 value (current-buffer))
      (write-region nil nil (concat file ".tmp") nil 'silent))
    (rename-file (concat file ".tmp") file t)))

(agentls-tty--write "emacs-pid" (emacs-pid))

(setq agentls-program (getenv "AGENTLS_BIN")
      agentls-model (concat "script:" (getenv "AGENTLS_TTY_SCRIPT"))
      agentls-edit-mode (intern (or (getenv "AGENTLS_TTY_EDIT_MODE") "propose"))
      agentls-commands (intern (or (getenv "AGENTLS_TTY_COMMANDS") "ask"))
      agentls-workspace-trust (intern (or (getenv "AGENTLS_TTY_TRUST") "trusted"))
      agentls-timeouts '(:humanMs 0))

(add-hook 'agentls-task-finished-functions
          (lambda (task)
            (agentls-tty--write "result" (list :state (agentls-task-state task)
                                               :result (agentls-task-result task)
                                               :events (reverse (agentls-task-events task))))))

(find-file (expand-file-name "notes.txt"))
(run-at-time 0.2 nil
             (lambda ()
               (agentls-run (or (getenv "AGENTLS_TTY_PROMPT") "Work on the notes"))
               (agentls-tty--write "pid" (process-id (agentls-connection-process (agentls--connection))))))

(provide 'tty-driver)
;;; tty-driver.el ends here
