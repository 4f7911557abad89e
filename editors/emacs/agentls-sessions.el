;;; agentls-sessions.el --- Sessions, trace, MCP servers and the doctor -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; The views of what agentls keeps and uses beside the running tasks:
;; past conversations (`agentls-sessions'), which task changed a line
;; (`agentls-trace-at-point'), the MCP servers (`agentls-mcp-servers')
;; and a report of whether everything works here (`agentls-doctor':
;; the binary, the server, the model, the MCP servers, the engines).

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'tabulated-list)
(require 'agentls-rpc)
(require 'agentls-tasks)

(defvar agentls-program)
(declare-function agentls--connection "agentls" (&optional root))
(declare-function agentls--project-root "agentls" (&optional dir))
(declare-function agentls--workspace-trust "agentls" (root))
(declare-function agentls--refresh-trust "agentls" (conn))

;;;; Sessions

(defvar-local agentls--sessions-connection nil
  "The connection whose sessions this buffer lists.")

(defvar agentls-sessions-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'agentls-sessions-show)
    (define-key map (kbd "c") #'agentls-sessions-continue)
    (define-key map (kbd "D") #'agentls-sessions-delete)
    map)
  "Keymap of `agentls-sessions-mode'.")

(define-derived-mode agentls-sessions-mode tabulated-list-mode "agentls-sessions"
  "The agent's conversations in this project, newest first.
\\{agentls-sessions-mode-map}"
  (setq tabulated-list-format [("Updated" 20 nil) ("Tasks" 6 nil) ("Tokens" 34 nil) ("Title" 0 nil)])
  (setq tabulated-list-padding 1)
  (add-hook 'tabulated-list-revert-hook #'agentls--sessions-entries nil t)
  (tabulated-list-init-header))

(defun agentls--sessions-entries ()
  "Fill `tabulated-list-entries' with the sessions of this buffer's connection."
  (let ((result (agentls--request agentls--sessions-connection 'agent/sessions (make-hash-table))))
    (setq tabulated-list-entries
          (cl-loop for s across (or (plist-get result :sessions) [])
                   collect (list (plist-get s :sessionId)
                                 (vector (or (plist-get s :updatedAt) "")
                                         (format "%d" (length (plist-get s :tasks)))
                                         (agentls--usage-text (plist-get s :usage))
                                         (or (plist-get s :title) "")))))))

(defun agentls-sessions ()
  "List the agent's conversations in this project."
  (interactive)
  (let ((conn (agentls--connection))
        (buffer (get-buffer-create "*agentls-sessions*")))
    (with-current-buffer buffer
      (unless (derived-mode-p 'agentls-sessions-mode) (agentls-sessions-mode))
      (setq agentls--sessions-connection conn
            default-directory (agentls-connection-root conn))
      (agentls--sessions-entries)
      (tabulated-list-print))
    (pop-to-buffer buffer)))

(defun agentls--session-at-point ()
  "Return the session id on this line."
  (or (tabulated-list-get-id) (user-error "No session on this line")))

(defun agentls-sessions-show ()
  "Show the messages of the session on this line."
  (interactive)
  (let* ((id (agentls--session-at-point))
         (session (agentls--request agentls--sessions-connection 'agent/session
                                   (list :sessionId id)))
         (buffer (get-buffer-create "*agentls-session*")))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "Session %s: %s\n\n" id (or (plist-get session :title) "")))
        (cl-loop for m across (or (plist-get session :messages) [])
                 do (insert (propertize (format "%s %s%s\n" (plist-get m :time) (plist-get m :role)
                                                (if-let ((sub (plist-get m :subtaskId)))
                                                    (format " (subtask %s)" sub) ""))
                                        'face 'bold)
                            (or (plist-get m :text) "") "\n\n"))
        (goto-char (point-min))
        (special-mode)))
    (pop-to-buffer buffer)))

(defun agentls-sessions-continue (prompt)
  "Continue the session on this line with PROMPT."
  (interactive (list (read-string "agentls (continue): " nil 'agentls--prompt-history)))
  (agentls-run prompt nil (agentls--session-at-point)))

(defun agentls-sessions-delete ()
  "Delete the session on this line, after asking."
  (interactive)
  (let ((id (agentls--session-at-point)))
    (when (yes-or-no-p (format "Delete agentls session %s? " id))
      (agentls--request agentls--sessions-connection 'agent/deleteSession (list :sessionId id))
      (revert-buffer))))

;;;; Trace

(defun agentls-trace-at-point ()
  "Show the agent edits that touched the line at point."
  (interactive)
  (unless buffer-file-name (user-error "This buffer visits no file"))
  (let* ((conn (agentls--connection))
         (path (file-relative-name buffer-file-name (agentls-connection-root conn)))
         (line (line-number-at-pos))
         (result (agentls--request conn 'agent/trace (list :path path :line line)))
         (entries (append (plist-get result :entries) nil)))
    (if (null entries)
        (message "agentls: no agent change recorded for %s line %d" path line)
      (with-current-buffer (get-buffer-create "*agentls-trace*")
        (let ((inhibit-read-only t))
          (erase-buffer)
          (insert (format "Agent changes to %s line %d, oldest first:\n\n" path line))
          (dolist (e entries)
            (insert (format "%s  %s by task %s subtask %s (session %s, model %s)%s\n"
                            (plist-get e :time) (plist-get e :operation) (plist-get e :taskId)
                            (plist-get e :subtaskId) (plist-get e :sessionId) (plist-get e :model)
                            (if-let ((intent (plist-get e :intentId))) (format ", intent %s" intent) "")))
            (cl-loop for r across (or (plist-get e :ranges) [])
                     do (insert (format "    lines %d-%d %s\n" (plist-get r :startLine)
                                        (plist-get r :endLine) (plist-get r :contentHash)))))
          (goto-char (point-min))
          (special-mode))
        (display-buffer (current-buffer))))
    entries))

;;;; MCP servers

(defvar-local agentls--mcp-connection nil
  "The connection whose MCP servers this buffer lists.")

(defvar-local agentls--mcp-servers nil
  "The servers of the last agent/mcpServers reply, as plists.")

(defvar agentls-mcp-servers-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'agentls-mcp-servers-tools)
    (define-key map (kbd "s") #'agentls-mcp-servers-start)
    map)
  "Keymap of `agentls-mcp-servers-mode'.")

(define-derived-mode agentls-mcp-servers-mode tabulated-list-mode "agentls-mcp"
  "The MCP servers of `agentls-mcp-servers', with their state.
\\{agentls-mcp-servers-mode-map}"
  (setq tabulated-list-format [("Server" 16 t) ("State" 12 nil) ("Tools" 6 nil) ("Command, URL or error" 0 nil)])
  (setq tabulated-list-padding 1)
  (add-hook 'tabulated-list-revert-hook #'agentls--mcp-servers-refresh nil t)
  (tabulated-list-init-header))

(defun agentls--mcp-server-where (server)
  "Return how SERVER is reached: its command line or its URL."
  (if (equal (plist-get server :transport) "http")
      (or (plist-get server :url) "")
    (string-join (cons (or (plist-get server :command) "")
                       (append (plist-get server :args) nil))
                 " ")))

(defun agentls--mcp-servers-entries (servers)
  "Return the `tabulated-list-entries' of SERVERS (agent/mcpServers)."
  (cl-loop for s across servers
           collect (let ((state (plist-get s :state))
                         (err (plist-get s :error)))
                     (list (plist-get s :name)
                           (vector (plist-get s :name)
                                   (propertize (pcase state
                                                 ("notStarted" "not started")
                                                 (_ state))
                                               'face (pcase state
                                                       ((or "ready" "restarted") 'success)
                                                       ("failed" 'error)
                                                       (_ 'default)))
                                   (format "%d" (or (plist-get s :toolCount) 0))
                                   (if (and err (not (equal err "")))
                                       err
                                     (agentls--mcp-server-where s)))))))

(defun agentls--mcp-servers-refresh (&optional start)
  "Ask this buffer's server for its MCP servers; with START, start them first."
  (let ((result (agentls--request agentls--mcp-connection 'agent/mcpServers
                                  (if start (list :start t) (make-hash-table))
                                  :timeout 90)))
    (setq agentls--mcp-servers (or (plist-get result :servers) []))
    (setq tabulated-list-entries (agentls--mcp-servers-entries agentls--mcp-servers))))

(defun agentls-mcp-servers (&optional start)
  "List the MCP servers agentls gives the agent, with their state and tools.
With a prefix argument START, start the servers not started yet first."
  (interactive "P")
  (let ((conn (agentls--connection))
        (buffer (get-buffer-create "*agentls-mcp-servers*")))
    (with-current-buffer buffer
      (unless (derived-mode-p 'agentls-mcp-servers-mode) (agentls-mcp-servers-mode))
      (setq agentls--mcp-connection conn
            default-directory (agentls-connection-root conn))
      (agentls--mcp-servers-refresh start)
      (tabulated-list-print))
    (pop-to-buffer buffer)
    buffer))

(defun agentls-mcp-servers-start ()
  "Start the MCP servers not started yet, and show their state."
  (interactive)
  (agentls--mcp-servers-refresh t)
  (tabulated-list-print t))

(defun agentls-mcp-servers-tools ()
  "Show the tools of the MCP server on this line."
  (interactive)
  (let* ((name (or (tabulated-list-get-id) (user-error "No server on this line")))
         (server (cl-find name agentls--mcp-servers
                          :key (lambda (s) (plist-get s :name)) :test #'equal)))
    (with-current-buffer (get-buffer-create "*agentls-mcp-tools*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "MCP server %s (%s): %s\n" name (agentls--mcp-server-where server)
                        (plist-get server :state)))
        (when-let ((err (plist-get server :error)))
          (insert err "\n"))
        (insert "\n")
        (cl-loop for tool across (or (plist-get server :tools) [])
                 do (insert (propertize (plist-get tool :tool) 'face 'bold)
                            (format "  (the model calls it %s)%s\n    %s\n"
                                    (plist-get tool :name)
                                    (if (eq (plist-get tool :readOnly) t) ", read-only" "")
                                    (or (plist-get tool :description) ""))))
        (goto-char (point-min))
        (special-mode))
      (display-buffer (current-buffer)))))

;;;; Doctor

(defun agentls--trust-line (conn)
  "Return the line of `agentls-doctor' for the trust of CONN's project.
The trust is worked out again, and a change sent to agentls."
  (let* ((root (agentls-connection-root conn))
         (source (cdr (agentls--workspace-trust root)))
         (trust (agentls--refresh-trust conn)))
    (format "Trust    %s (%s)%s\n" trust
            (pcase source
              ('setting "`agentls-workspace-trust'")
              ('function "the function of `agentls-workspace-trust'")
              ('trusted-content (if (equal trust "trusted")
                                    "`trusted-content' lists this project"
                                  "`trusted-content' does not list this project: add it there to trust it"))
              (_ "nothing says otherwise: see `agentls-workspace-trust'"))
            (if (equal trust "untrusted")
                ": agentls asks before it runs any command, starts an MCP server or runs a subtask on an engine"
              ""))))

(defun agentls--engine-line (engine)
  "Return the line of `agentls-doctor' for ENGINE, a plist of agent/engines."
  (let ((name (concat (plist-get engine :name)
                      (let ((v (plist-get engine :version)))
                        (if (and (stringp v) (not (string-empty-p v))) (concat " " v) "")))))
    (if (eq t (plist-get engine :usable))
        (format "  %-16s %s  usable%s (%s%s)" name (propertize "ok" 'face 'success)
                (if (eq t (plist-get engine :isolated)) ", isolated" "")
                (mapconcat #'identity (plist-get engine :command) " ")
                (let ((src (plist-get engine :source)))
                  (if (and (stringp src) (not (string-empty-p src))) (concat ", from " src) "")))
      (format "  %-16s %s  cannot be used: %s" name (propertize "--" 'face 'shadow)
              (or (plist-get engine :reason) "")))))

(defun agentls-doctor ()
  "Report whether agentls works here: binary, server, model, MCP servers, engines.
The model is tried with agent/checkModel and the MCP servers are
started, so each says whether it works and, if not, why; the engines
\(agent/engines) are listed with their version, or why each cannot be
used.  It says too whether the project is trusted, and why (see
`agentls-workspace-trust')."
  (interactive)
  (let* ((root (agentls--project-root))
         (buffer (get-buffer-create "*agentls-doctor*"))
         (program (executable-find agentls-program))
         (ok (lambda (good) (propertize (if good "ok" "PROBLEM") 'face (if good 'success 'error)))))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (special-mode)
        (setq default-directory root)
        (insert (propertize (format "agentls doctor for %s\n\n" root) 'face 'bold))
        (insert (format "Binary   %s  %s\n" (funcall ok program)
                        (or program (format "%S not found in `exec-path': set `agentls-program'"
                                            agentls-program))))
        (when program
          (insert (format "Version  %s\n"
                          (with-temp-buffer
                            (if (eql 0 (call-process program nil t nil "version"))
                                (string-trim (buffer-string))
                              (format "`%s version' failed: %s" program (string-trim (buffer-string)))))))
          (let ((conn (condition-case err (agentls--connection root)
                        (error (insert (format "Server   %s  does not start: %s\n" (funcall ok nil)
                                               (error-message-string err)))
                               nil))))
            (when conn
              (let ((info (agentls-connection-server-info conn)))
                (insert (format "Server   %s  %s %s, serving %s\n" (funcall ok t)
                                (or (plist-get info :name) "agentls") (or (plist-get info :version) "")
                                (agentls-connection-root conn))))
              (insert (agentls--trust-line conn))
              (let* ((check (agentls-check-model))
                     (good (eq t (plist-get check :ok))))
                (insert (format "Model    %s  %s (from %s): %s%s\n" (funcall ok good)
                                (plist-get check :model) (agentls--words (plist-get check :source))
                                (if good "" (format "[%s] " (plist-get check :problem)))
                                (agentls--words (plist-get check :message)))))
              (when-let ((intent (agentls-connection-intent conn)))
                (insert (format "Intent   the next tasks work under %s\n" intent)))
              (insert "\nMCP servers (started to see whether they work):\n")
              (let ((servers (plist-get (agentls--request conn 'agent/mcpServers (list :start t) :timeout 90)
                                        :servers)))
                (if (seq-empty-p servers)
                  (insert "  none configured (`agentls-mcp-servers')\n")
                  (seq-doseq (server servers)
                    (let ((state (plist-get server :state)))
                      (insert (format "  %-16s %s  %s, %d tools: %s\n" (plist-get server :name)
                                      (funcall ok (member state '("ready" "restarted")))
                                      (pcase state ("notStarted" "not started") (_ state))
                                      (or (plist-get server :toolCount) 0)
                                      (or (plist-get server :error) (agentls--mcp-server-where server))))))))
              (insert "\nEngines (`agentls-run-on-engine'; one not installed is no problem):\n")
              (dolist (engine (agentls-engines conn))
                (insert (agentls--engine-line engine) "\n")))))
        (goto-char (point-min))))
    (pop-to-buffer buffer)
    buffer))

(provide 'agentls-sessions)
;;; agentls-sessions.el ends here
