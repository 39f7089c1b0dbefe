import { type ReactNode, useId, useRef, useState } from 'react';
import { ErrorNotice } from './notices.js';

interface ConfirmButtonProps {
  children: ReactNode;
  /** The question the dialog asks. */
  question: string;
  /** The label of the button that confirms. */
  confirmLabel: string;
  onConfirm: () => Promise<unknown>;
  disabled?: boolean;
  danger?: boolean;
}

/**
 * A button whose action runs only once confirmed in a modal dialog (the browser's own
 * <dialog>: focus moves into it, Escape cancels, focus returns to the button).
 */
export function ConfirmButton({
  children,
  question,
  confirmLabel,
  onConfirm,
  disabled,
  danger,
}: ConfirmButtonProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const titleId = useId();
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await onConfirm();
      dialog.current?.close();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button
        type="button"
        className={danger ? 'danger' : undefined}
        disabled={disabled}
        onClick={() => dialog.current?.showModal()}
      >
        {children}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId}>
        <p id={titleId}>{question}</p>
        {error !== undefined && <ErrorNotice error={error} />}
        <div className="actions">
          <button type="button" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
          <button
            type="button"
            className={danger ? 'danger' : 'primary'}
            disabled={busy}
            onClick={() => void confirm()}
          >
            {confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}
