;;; agentls-edit.el --- Apply the agent's edits to buffers and files -*- lexical-binding: t; -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; workspace/applyEdit, as Emacs answers it.  Every change of an edit is
;; checked first, against the buffers as they are (unsaved text
;; included) and the files nobody visits, without touching anything;
;; then, after the person confirmed it when the server asks for that,
;; the edit lands whole: each buffer in one undo step, each file nobody
;; visits replaced atomically.  An edit that cannot apply changes
;; nothing and says why.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'agentls-rpc)

(defvar agentls-confirm-edit-function)

;;;; Applying edits

(define-error 'agentls-edit-refused "The edit cannot be applied")

(cl-defstruct (agentls--file (:constructor agentls--file-create)
                             (:copier nil))
  "A file while a workspace edit is being checked."
  (name nil :documentation "Absolute file name.")
  (buffer nil :documentation "The buffer visiting it, if any.")
  (tick nil :documentation "The buffer's modification tick when checked.")
  (existed nil :documentation "Whether it existed before the edit.")
  (exists nil :documentation "Whether it exists after the edit so far.")
  (original nil :documentation "Its text before the edit.")
  (text nil :documentation "Its text after the edit so far.")
  (coding nil :documentation "Coding system to write it with.")
  (batches nil :documentation "Lists of text edits applied to it, in order.")
  (replaced nil :documentation "Non-nil when it was deleted or created anew.")
  (touched nil :documentation "Non-nil when the edit changes it."))

(defun agentls--refuse (index format-string &rest args)
  "Refuse the edit at change INDEX with a reason made of FORMAT-STRING and ARGS."
  (signal 'agentls-edit-refused (list index (apply #'format-message format-string args))))

(defun agentls--lsp-position (pos)
  "Return the point of LSP position POS in the current buffer, or nil.
Columns count UTF-16 code units.  As editors do, a column past the
end of its line means the end of the line, and a line past the end
of the text means the end of the text.  nil means POS is malformed."
  (let ((line (plist-get pos :line))
        (col (plist-get pos :character)))
    (when (and (natnump line) (natnump col))
      (save-excursion
        (goto-char (point-min))
        (if (not (and (zerop (forward-line line)) (or (< line 1) (bolp))))
            (point-max)
          (while (and (> col 0) (not (eolp))
                      (<= (if (> (char-after) #xFFFF) 2 1) col))
            (setq col (- col (if (> (char-after) #xFFFF) 2 1)))
            (forward-char))
          (point))))))

(cl-defun agentls--apply-text-edits (edits)
  "Apply the LSP text EDITS (a sequence) to the current buffer.
Return nil, or a string saying why they cannot be applied; in that
case the buffer is left as it was."
  (let (spans)
    (cl-loop for edit across (vconcat edits)
             for i from 0
             for range = (plist-get edit :range)
             for beg = (agentls--lsp-position (plist-get range :start))
             for end = (agentls--lsp-position (plist-get range :end))
             do (cond
                 ((not (and beg end))
                  (cl-return-from agentls--apply-text-edits
                    (format "text edit %d: range %S is outside the text" i range)))
                 ((> beg end)
                  (cl-return-from agentls--apply-text-edits
                    (format "text edit %d: range ends before it starts" i)))
                 (t (push (list beg end (or (plist-get edit :newText) "") i) spans))))
    (setq spans (sort (nreverse spans)
                      (lambda (a b) (or (< (car a) (car b))
                                        (and (= (car a) (car b)) (< (nth 3 a) (nth 3 b)))))))
    (cl-loop for (a b) on spans while b
             when (> (nth 1 a) (car b))
             do (cl-return-from agentls--apply-text-edits
                  (format "text edits %d and %d overlap" (nth 3 a) (nth 3 b))))
    (save-excursion
      (dolist (span (reverse spans))
        (pcase-let ((`(,beg ,end ,text ,_) span))
          (unless (equal (buffer-substring-no-properties beg end) text)
            (goto-char beg)
            (delete-region beg end)
            (insert text)))))
    nil))

(defun agentls--edit-changes (edit)
  "Return the list of edits and file operations of WorkspaceEdit EDIT.
Each is (text URI VERSION EDITS), (create URI OPTIONS) or (delete URI OPTIONS)."
  (let ((document-changes (plist-get edit :documentChanges))
        (changes (plist-get edit :changes)))
    (if (and document-changes (> (length document-changes) 0))
        (cl-loop for change across document-changes
                 for kind = (plist-get change :kind)
                 collect (pcase kind
                           ("create" (list 'create (plist-get change :uri) (plist-get change :options)))
                           ("delete" (list 'delete (plist-get change :uri) (plist-get change :options)))
                           ((or 'nil "") (let ((doc (plist-get change :textDocument)))
                                           (list 'text (plist-get doc :uri) (plist-get doc :version)
                                                 (plist-get change :edits))))
                           (_ (list 'unsupported kind))))
      ;; `changes' keys arrive as keywords such as :file:///a/b.
      (sort (cl-loop for (key edits) on changes by #'cddr
                     collect (list 'text (substring (symbol-name key) 1) nil edits))
            (lambda (a b) (string< (nth 1 a) (nth 1 b)))))))

(defun agentls--needs-confirmation-p (edit)
  "Return non-nil when a change of EDIT carries an annotation to confirm."
  (let ((annotations (plist-get edit :changeAnnotations))
        (ids nil))
    (cl-loop for change across (or (plist-get edit :documentChanges) [])
             do (when-let ((id (plist-get change :annotationId))) (push id ids))
             (cl-loop for e across (or (plist-get change :edits) [])
                      do (when-let ((id (plist-get e :annotationId))) (push id ids))))
    (cl-some (lambda (id)
               (eq t (plist-get (plist-get annotations (intern (concat ":" id)))
                                :needsConfirmation)))
             ids)))

(defun agentls--stage-edit (conn edit)
  "Check every change of EDIT on CONN without touching anything.
Return the list of `agentls--file' it changes, in order.  Signal
`agentls-edit-refused' with the failing change's index and the reason."
  (let ((root (agentls-connection-root conn))
        (files nil))
    (cl-flet ((fetch (index uri)
                (let ((name (agentls--uri-to-path uri)))
                  (unless name (agentls--refuse index "%s is not a file:// URI" uri))
                  (setq name (expand-file-name name))
                  (unless (agentls--inside-p name root)
                    (agentls--refuse index "%s is outside the project %s" name root))
                  (or (cl-find name files :key #'agentls--file-name :test #'equal)
                      (let* ((buffer (find-buffer-visiting name))
                             (f (agentls--file-create :name name :buffer buffer)))
                        (cond
                         (buffer
                          (setf (agentls--file-tick f) (buffer-chars-modified-tick buffer)
                                (agentls--file-existed f) t
                                (agentls--file-text f) (agentls--buffer-text buffer)))
                         ((file-directory-p name)
                          (agentls--refuse index "%s is a directory" name))
                         ((file-exists-p name)
                          (with-temp-buffer
                            (condition-case err (insert-file-contents name)
                              (file-error (agentls--refuse index "cannot read %s: %s" name
                                                           (error-message-string err))))
                            (setf (agentls--file-existed f) t
                                  (agentls--file-coding f) last-coding-system-used
                                  (agentls--file-text f) (buffer-string)))))
                        (setf (agentls--file-exists f) (agentls--file-existed f)
                              (agentls--file-original f) (agentls--file-text f))
                        (setq files (append files (list f)))
                        f)))))
      (cl-loop
       for change in (agentls--edit-changes edit)
       for index from 0
       do (pcase change
            (`(text ,uri ,_version ,edits)
             (let ((f (fetch index uri)))
               (unless (agentls--file-exists f)
                 (agentls--refuse index "%s does not exist" uri))
               (with-temp-buffer
                 (insert (agentls--file-text f))
                 (when-let ((why (agentls--apply-text-edits edits)))
                   (agentls--refuse index "%s: %s" uri why))
                 (setf (agentls--file-text f) (buffer-string)))
               (setf (agentls--file-touched f) t
                     (agentls--file-batches f) (append (agentls--file-batches f) (list edits)))))
            (`(create ,uri ,options)
             (let ((f (fetch index uri)))
               (if (and (agentls--file-exists f) (not (eq t (plist-get options :overwrite))))
                   (unless (eq t (plist-get options :ignoreIfExists))
                     (agentls--refuse index "%s already exists" uri))
                 (setf (agentls--file-exists f) t (agentls--file-text f) ""
                       (agentls--file-replaced f) t (agentls--file-touched f) t))))
            (`(delete ,uri ,options)
             (let ((f (fetch index uri)))
               (cond
                ((not (agentls--file-exists f))
                 (unless (eq t (plist-get options :ignoreIfNotExists))
                   (agentls--refuse index "%s does not exist" uri)))
                ((and (agentls--file-buffer f)
                      (buffer-modified-p (agentls--file-buffer f)))
                 (agentls--refuse index "%s has unsaved changes in buffer %s; save or revert it first"
                                  uri (buffer-name (agentls--file-buffer f))))
                (t (setf (agentls--file-exists f) nil (agentls--file-text f) nil
                         (agentls--file-replaced f) t (agentls--file-touched f) t)))))
            (`(unsupported ,kind)
             (agentls--refuse index "resource operation %S is not supported" kind)))))
    (cl-remove-if-not #'agentls--file-touched files)))

(defun agentls--write-temp (f)
  "Write F's new text to a temporary file beside it; return that file's name."
  (let* ((name (agentls--file-name f))
         (dir (file-name-directory name))
         (coding-system-for-write (or (agentls--file-coding f) 'utf-8-unix))
         (write-region-inhibit-fsync nil))
    (make-directory dir t)
    ;; The temporary file is named as agentls names its own
    ;; (.NAME.agentls-RANDOM.tmp), so the server sweeps a crash's leftover.
    (let ((temp (make-temp-file (expand-file-name (concat "." (file-name-nondirectory name) ".agentls-") dir)
                                nil ".tmp")))
      (condition-case err
          (progn
            (write-region (agentls--file-text f) nil temp nil 'silent)
            (when (file-exists-p name)
              (set-file-modes temp (file-modes name)))
            temp)
        (error (ignore-errors (delete-file temp))
               (signal (car err) (cdr err)))))))

(defun agentls--commit-edit (files)
  "Apply the checked FILES of a workspace edit.
Buffers change in one undo step each; files nobody visits are
replaced atomically.  Return nil, or the reason nothing was applied."
  (catch 'refused
    ;; A buffer that changed since it was checked (while the person was
    ;; reading the proposal) would receive edits meant for other text.
    (dolist (f files)
      (let ((buffer (agentls--file-buffer f)))
        (when (and buffer (or (not (buffer-live-p buffer))
                              (/= (buffer-chars-modified-tick buffer) (agentls--file-tick f))))
          (throw 'refused (format "%s changed while the edit was pending" (agentls--file-name f))))))
    ;; Phase 1: new contents of unvisited files, beside them, in temporary files.
    (let ((temps nil))
      (condition-case err
          (dolist (f files)
            (when (and (not (agentls--file-buffer f)) (agentls--file-exists f))
              (push (cons f (agentls--write-temp f)) temps)))
        (error
         (dolist (temp temps) (ignore-errors (delete-file (cdr temp))))
         (throw 'refused (format "cannot write: %s" (error-message-string err)))))
      ;; Phase 2: renames, deletions and buffer edits.
      (dolist (f files)
        (let ((name (agentls--file-name f))
              (buffer (agentls--file-buffer f)))
          (cond
           ((not (agentls--file-exists f))
            (when (file-exists-p name) (delete-file name))
            (when (buffer-live-p buffer)
              (with-current-buffer buffer (set-buffer-modified-p nil))
              (kill-buffer buffer)))
           (buffer (agentls--edit-buffer buffer f))
           (t (rename-file (cdr (assq f temps)) name t))))))
    nil))

(defun agentls--edit-buffer (buffer f)
  "Apply F's edits to BUFFER as one undo step."
  (with-current-buffer buffer
    (save-restriction
      (widen)
      (let ((group (prepare-change-group))
            (inhibit-read-only t)
            (done nil))
        (undo-boundary)
        (unwind-protect
            (progn
              (activate-change-group group)
              (if (agentls--file-replaced f)
                  (progn (erase-buffer) (insert (agentls--file-text f)))
                (dolist (edits (agentls--file-batches f))
                  (when-let ((why (agentls--apply-text-edits edits)))
                    (error "%s" why))))
              (setq done t))
          (if done
              (progn (accept-change-group group)
                     (undo-amalgamate-change-group group))
            (cancel-change-group group)))
        (undo-boundary)
        (message "agentls: edited %s" (buffer-name))))))

(defun agentls-confirm-edit (label files diff-buffer)
  "Show DIFF-BUFFER and ask whether to apply the change LABEL to FILES."
  (display-buffer diff-buffer)
  (y-or-n-p (format "Apply %s to %s? " (if (string-empty-p label) "this change" label)
                    (mapconcat #'file-name-nondirectory files ", "))))

(defun agentls--diff-buffer (files root)
  "Return a buffer with the unified diff of the checked FILES under ROOT."
  (let ((buffer (get-buffer-create "*agentls-proposal*")))
    (with-current-buffer buffer
      ;; diff runs in the buffer's directory: the project's, not that of
      ;; the project whose proposal made the buffer (maybe gone since).
      (setq default-directory (file-name-as-directory root))
      (let ((inhibit-read-only t))
        (erase-buffer)
        (dolist (f files)
          (let ((rel (file-relative-name (agentls--file-name f) root))
                (old (make-temp-file "agentls-old"))
                (new (make-temp-file "agentls-new")))
            (unwind-protect
                (progn
                  (let ((coding-system-for-write 'utf-8-unix))
                    (write-region (or (agentls--file-original f) "") nil old nil 'silent)
                    (write-region (or (agentls--file-text f) "") nil new nil 'silent))
                  (let ((coding-system-for-read 'utf-8-unix))
                    (when (not (eql 0 (ignore-errors
                                        (call-process "diff" nil t nil "-u"
                                                      "--label" (if (agentls--file-existed f) (concat "a/" rel) "/dev/null")
                                                      "--label" (if (agentls--file-exists f) (concat "b/" rel) "/dev/null")
                                                      old new))))
                      nil)))
              (delete-file old)
              (delete-file new)))))
      (goto-char (point-min))
      (when (fboundp 'diff-mode) (diff-mode))
      (setq buffer-read-only t))
    buffer))

(defun agentls--apply-edit (conn params &optional confirm)
  "Apply workspace/applyEdit PARAMS of CONN; ask first when CONFIRM.
Return the ApplyWorkspaceEditResult plist."
  (let ((label (or (plist-get params :label) ""))
        (edit (plist-get params :edit)))
    (condition-case err
        (let ((files (agentls--stage-edit conn edit)))
          (if (and confirm
                   (not (funcall agentls-confirm-edit-function label
                                 (mapcar #'agentls--file-name files)
                                 (agentls--diff-buffer files (agentls-connection-root conn)))))
              (list :applied :json-false :failureReason "the user rejected the change")
            ;; No C-g half-way through: the edit lands whole or not at all.
            (let ((why (let ((inhibit-quit t)) (agentls--commit-edit files))))
              (if why
                  (list :applied :json-false :failureReason why)
                (list :applied t)))))
      (agentls-edit-refused
       (list :applied :json-false :failureReason (nth 2 err) :failedChange (nth 1 err))))))

(defun agentls--apply-edit-request (conn params)
  "Answer workspace/applyEdit PARAMS on CONN.
An edit to confirm waits for the person; any other applies at once."
  (if (agentls--needs-confirmation-p (plist-get params :edit))
      (agentls--defer-prompt conn (lambda () (agentls--apply-edit conn params t))
                             (list :applied :json-false :failureReason "the user rejected the change"))
    (agentls--apply-edit conn params)))

(provide 'agentls-edit)
;;; agentls-edit.el ends here
