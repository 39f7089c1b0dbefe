import { useState } from 'react';

/**
 * A key just created, shown this once (the server keeps only its hash): in the page's memory
 * until dismissed, with a button that copies it to the clipboard.
 */
export function NewKey({ apiKey, onDone }: { apiKey: string; onDone: () => void }) {
  const [copied, setCopied] = useState<'yes' | 'failed'>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(apiKey);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <section className="new-key" aria-labelledby="new-key-title">
      <h3 id="new-key-title">New API key</h3>
      <p>Copy it now: it is shown only this once, and cannot be shown again.</p>
      <pre className="value">{apiKey}</pre>
      <div className="actions">
        <button type="button" className="primary" onClick={() => void copy()}>
          Copy key
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
        <span role="status">
          {copied === 'yes'
            ? 'Copied.'
            : copied === 'failed'
              ? 'The browser refused: select the key and copy it.'
              : ''}
        </span>
      </div>
    </section>
  );
}
