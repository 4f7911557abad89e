;;; agentls-heat.el --- The heat and neighbours views of agentls -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; `agentls-heat' lists the files the agent works with, hottest first,
;; kept live from agent/heatUpdate; `agentls-neighbours' shows the files
;; a file references and those that reference it, asked of the code
;; graph (agent/codeGraph) when the view opens.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'subr-x)
(require 'tabulated-list)
(require 'agentls-rpc)

(declare-function agentls--connection "agentls" (&optional root))
(declare-function agentls--refresh-views "agentls-tasks" ())

;;;; The heat buffer

(defvar-local agentls--heat-connection nil
  "The connection whose heat this buffer shows.")

(defun agentls--heat-update (conn params)
  "Apply the agent/heatUpdate PARAMS of CONN to its heat map."
  (unless (plist-get params :taskId)
    (let ((heat (agentls-connection-heat conn)))
      (cl-loop for node across (or (plist-get params :updates) [])
               do (puthash (plist-get node :path) node heat))
      (cl-loop for path across (or (plist-get params :removed) [])
               do (remhash path heat))
      (setf (agentls-connection-heat-seq conn) (or (plist-get params :seq) 0))
      (agentls--refresh-views))))

(defvar agentls-heat-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'agentls-heat-visit)
    (define-key map (kbd "n") #'agentls-heat-neighbours)
    map)
  "Keymap of `agentls-heat-mode'.")

(define-derived-mode agentls-heat-mode tabulated-list-mode "agentls-heat"
  "The files the agent works with, hottest first.
\\{agentls-heat-mode-map}"
  (setq tabulated-list-format [("Heat" 16 nil) ("Last" 12 nil) ("Ctx" 4 nil)
                               ("Turn" 5 nil) ("File" 0 nil)])
  (setq tabulated-list-padding 1)
  (add-hook 'tabulated-list-revert-hook #'agentls--heat-refetch nil t)
  (tabulated-list-init-header))

(defun agentls--heat-refetch ()
  "Fetch a fresh heat snapshot for this buffer's connection."
  (let ((conn agentls--heat-connection))
    (when (and conn (jsonrpc-running-p conn))
      (let ((snapshot (agentls--request conn 'agent/heatSnapshot (make-hash-table)))
            (heat (agentls-connection-heat conn)))
        (clrhash heat)
        (cl-loop for node across (or (plist-get snapshot :nodes) [])
                 do (puthash (plist-get node :path) node heat))
        (setf (agentls-connection-heat-seq conn) (or (plist-get snapshot :seq) 0))))
    (agentls--heat-entries)))

(defun agentls--heat-entries ()
  "Fill `tabulated-list-entries' from this buffer's heat map."
  (let ((conn agentls--heat-connection) nodes)
    (when conn
      (maphash (lambda (_ node) (push node nodes)) (agentls-connection-heat conn)))
    (setq nodes (sort nodes (lambda (a b) (> (or (plist-get a :heat) 0) (or (plist-get b :heat) 0)))))
    (setq tabulated-list-entries
          (mapcar (lambda (node)
                    (let ((heat (or (plist-get node :heat) 0)))
                      (list (plist-get node :path)
                            (vector (format "%-10s %.2f" (make-string (round (* 10 heat)) ?█) heat)
                                    (or (plist-get node :lastAction) "")
                                    (if (eq t (plist-get node :inContext)) "yes" "")
                                    (format "%s" (or (plist-get node :turn) ""))
                                    (plist-get node :path)))))
                  nodes))))

(defun agentls--heat-redraw ()
  "Redraw the heat buffer from the heat map in memory."
  (agentls--heat-entries)
  (tabulated-list-print t))

(defun agentls-heat ()
  "Show the files the agent of this project works with, hottest first."
  (interactive)
  (let ((conn (agentls--connection))
        (buffer (get-buffer-create "*agentls-heat*")))
    (with-current-buffer buffer
      (unless (derived-mode-p 'agentls-heat-mode) (agentls-heat-mode))
      (setq agentls--heat-connection conn
            default-directory (agentls-connection-root conn))
      (setq header-line-format (format " Heat of %s" (agentls-connection-root conn)))
      (agentls--heat-refetch)
      (tabulated-list-print t))
    (pop-to-buffer buffer)))

(defun agentls-heat-visit ()
  "Visit the file on this line."
  (interactive)
  (let ((path (tabulated-list-get-id)))
    (unless path (user-error "No file on this line"))
    (find-file (expand-file-name path (agentls-connection-root agentls--heat-connection)))))

(defun agentls-heat-neighbours ()
  "Show the neighbours of the file on this line in the code graph."
  (interactive)
  (let ((path (tabulated-list-get-id)))
    (unless path (user-error "No file on this line"))
    (agentls-neighbours path agentls--heat-connection)))

;;;; A file's neighbours in the code graph

(defvar-local agentls--neighbours-connection nil
  "The connection whose code graph this buffer shows.")

(defvar-local agentls--neighbours-path nil
  "The project-relative path whose neighbours this buffer shows.")

(defvar-local agentls--neighbours-asked nil
  "A token of the last agent/codeGraph request; older answers are dropped.")

(defvar agentls-neighbours-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'agentls-neighbours-visit)
    (define-key map (kbd "n") #'agentls-neighbours)
    map)
  "Keymap of `agentls-neighbours-mode'.")

(define-derived-mode agentls-neighbours-mode special-mode "agentls-neighbours"
  "The files a file references and the files that reference it.
\{agentls-neighbours-mode-map}"
  (setq-local revert-buffer-function
              (lambda (&rest _) (agentls-neighbours agentls--neighbours-path
                                                     agentls--neighbours-connection))))

(defun agentls--neighbour-lists (path result)
  "Return the neighbours of PATH in the agent/codeGraph RESULT.
The value is (USES . USED-BY): the files PATH references and the
files that reference PATH, each a list of (FILE COUNT PROVENANCE),
most references first; PROVENANCE says how the references were found
\(\"lsp\", \"resolved\", \"name\"), nil when the server did not say."
  (let (uses used-by)
    (cl-loop for edge across (or (plist-get result :edges) [])
             for from = (plist-get edge :from)
             for to = (plist-get edge :to)
             for count = (or (plist-get edge :count) 1)
             for how = (plist-get edge :provenance)
             ;; File-to-file edges: a definition's id holds "#".
             when (and (equal (plist-get edge :kind) "references")
                       (not (string-search "#" from)) (not (string-search "#" to)))
             do (cond ((and (equal from path) (not (equal to path))) (push (list to count how) uses))
                      ((and (equal to path) (not (equal from path))) (push (list from count how) used-by))))
    (let ((order (lambda (a b) (if (= (cadr a) (cadr b)) (string< (car a) (car b)) (> (cadr a) (cadr b))))))
      (cons (sort uses order) (sort used-by order)))))

(defconst agentls--provenance-words
  '(("lsp" . "language server") ("resolved" . "resolved by the graph") ("name" . "by name: a guess"))
  "How the references of an edge were found, in words.")

(defun agentls--neighbours-insert (path what)
  "Fill this buffer with the neighbours of PATH.
WHAT is `asking' while agent/codeGraph has not answered, (result .
RESULT) with its answer, or (error CODE MESSAGE)."
  (let ((inhibit-read-only t))
    (erase-buffer)
    (insert (propertize (format "Neighbours of %s" path) 'face 'bold)
            "    (RET visits the file, n its neighbours, g asks again, q quits)\n\n")
    (pcase what
      ('asking
       (insert "Asking the code graph... (it answers once it is built: on a large project, after a while)\n"))
      (`(error ,code ,message)
       (if (eql code -32602)
           (insert (format "%s is not a file of the code graph of %s:\n  %s\n"
                           path (agentls-connection-root agentls--neighbours-connection) message))
         (insert (format "The code graph could not answer: %s\n" message))))
      (`(result . ,result)
       (let ((lists (agentls--neighbour-lists path result)))
         (dolist (section (list (cons (format "References (the files %s uses, references each):" path)
                                      (car lists))
                                (cons (format "Referenced by (the files that use %s, references each):" path)
                                      (cdr lists))))
           (insert (car section) "\n")
           (unless (cdr section) (insert "  none\n"))
           (dolist (n (cdr section))
             (let ((how (cdr (assoc (nth 2 n) agentls--provenance-words))))
               (insert (propertize (concat (format "  %4d  %s" (nth 1 n) (car n))
                                           (if how (format "  (%s)" how) ""))
                                   'agentls-path (car n))
                       "\n")))
           (insert "\n"))
         (when (eq t (plist-get result :truncated))
           (insert "(the graph cut its answer short: not every neighbour is listed)\n")))))
    (goto-char (point-min))
    (forward-line 2)))

(defun agentls-neighbours (path &optional conn)
  "Show the neighbours of PATH in the code graph of CONN's project.
The files PATH references and those that reference it, with the number
of references, asked of agent/codeGraph now.  Interactively, the file on
this line of a neighbours buffer, else the file of this buffer."
  (interactive
   (list (or (get-text-property (line-beginning-position) 'agentls-path)
             (and buffer-file-name
                  (file-relative-name buffer-file-name (agentls-connection-root (agentls--connection))))
             (user-error "No file on this line"))
         (or agentls--neighbours-connection (agentls--connection))))
  (let* ((conn (or conn (agentls--connection)))
         (buffer (get-buffer-create "*agentls-neighbours*"))
         (token (list path)))
    (with-current-buffer buffer
      (unless (derived-mode-p 'agentls-neighbours-mode) (agentls-neighbours-mode))
      (setq agentls--neighbours-connection conn
            agentls--neighbours-path path
            agentls--neighbours-asked token
            default-directory (agentls-connection-root conn))
      (agentls--neighbours-insert path 'asking))
    (let ((answer (lambda (what)
                    (when (buffer-live-p buffer)
                      (with-current-buffer buffer
                        (when (eq agentls--neighbours-asked token)
                          (agentls--neighbours-insert path what)))))))
      (jsonrpc-async-request
       conn 'agent/codeGraph (list :path path)
       ;; The graph answers once it is built: no deadline.
       :timeout nil
       :success-fn (lambda (result) (funcall answer (cons 'result result)))
       :error-fn (jsonrpc-lambda (&key code message &allow-other-keys)
                   (funcall answer (list 'error code message)))))
    (pop-to-buffer buffer)))

(defun agentls-neighbours-visit ()
  "Visit the file on this line."
  (interactive)
  (let ((path (get-text-property (line-beginning-position) 'agentls-path)))
    (unless path (user-error "No file on this line"))
    (find-file-other-window (expand-file-name path (agentls-connection-root agentls--neighbours-connection)))))

(provide 'agentls-heat)
;;; agentls-heat.el ends here
